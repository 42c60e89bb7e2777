//go:build !linux

package control

import (
	"errors"
	"net"
	"os"
)

// errUnsupported: the peer check needs Linux's SO_PEERCRED.
var errUnsupported = errors.New("sharing a session with other clients needs Linux")

func openNoFollow(string) (*os.File, error) { return nil, errUnsupported }

func short(*os.File, string) string { return "" }

func listenAt(*os.File, string) (*net.UnixListener, error) { return nil, errUnsupported }

func unlinkAt(*os.File, string) error { return errUnsupported }

func chmodAt(*os.File, string, uint32) error { return errUnsupported }

func lstatAt(*os.File, string) (uint32, error) { return 0, errUnsupported }

const typeSocket = 0

func peerUID(*net.UnixConn) (int, error) { return -1, errUnsupported }
