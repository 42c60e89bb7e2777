package control

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/dsh-dev/dsh/internal/session"
)

// ErrNotLive says that no process offers the session to clients now.
var ErrNotLive = errors.New("the session is not live (no dsh process has it open)")

const sockExt = ".sock"

// Dir is where the control sockets of the sessions logged in sessionDir are.
func Dir(sessionDir string) string { return filepath.Join(sessionDir, "live") }

// Path is the control socket of session id.
func Path(sessionDir, id string) string { return filepath.Join(Dir(sessionDir), id+sockExt) }

// openDir opens the socket directory dir, making it (0700) if it is not there,
// and checks that it is the user's own and closed to others: a directory
// another user can write to could swap a socket for theirs. A symbolic link
// is refused. make says whether to create it.
func openDir(dir string, make bool) (*os.File, error) {
	if make {
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("control socket directory: %w", err)
		}
	}
	f, err := openNoFollow(dir)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENOTDIR) {
			return nil, fmt.Errorf("control socket directory %s is not a directory (a link?): refused", dir)
		}
		return nil, fmt.Errorf("control socket directory: %w", err)
	}
	if err := checkDir(f, dir); err != nil {
		_ = f.Close() // read-only
		return nil, err
	}
	return f, nil
}

// checkDir refuses a directory that is not the user's own or that others may
// enter.
func checkDir(f *os.File, name string) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("control socket directory: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.IsDir() {
		return fmt.Errorf("control socket directory %s is not a directory: refused", name)
	}
	if int(st.Uid) != os.Getuid() {
		return fmt.Errorf("control socket directory %s belongs to another user (uid %d): refused", name, st.Uid)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("control socket directory %s is open to other users (mode %v): refused", name, fi.Mode().Perm())
	}
	return nil
}

// CheckPeer refuses a client whose user is not uid, the server's: a socket's
// mode is one guard, the peer's credentials the other.
func CheckPeer(peerUID, uid int) error {
	if peerUID != uid {
		return fmt.Errorf("refused a client of another user (uid %d)", peerUID)
	}
	return nil
}

// dialIn connects to the socket name in the directory dir, which it checks
// first as the server does.
func dialIn(ctx context.Context, dir, name string) (*net.UnixConn, error) {
	d, err := openDir(dir, false)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, ErrNotLive
		}
		return nil, err
	}
	defer func() { _ = d.Close() }() // read-only
	var dl net.Dialer
	c, err := dl.DialContext(ctx, "unix", short(d, name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, ErrNotLive
		}
		return nil, fmt.Errorf("connect to the session: %w", err)
	}
	return c.(*net.UnixConn), nil
}

// Attachable lists the sessions of sessionDir that a client can join now:
// their sockets answer. A socket left by a process that died is removed.
func Attachable(sessionDir string) (map[string]bool, error) {
	dir := Dir(sessionDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list live sessions: %w", err)
	}
	out := map[string]bool{}
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), sockExt)
		if !ok || !session.ValidID(id) || e.Type()&fs.ModeSocket == 0 {
			continue
		}
		c, err := dialIn(context.Background(), dir, e.Name())
		switch {
		case err == nil:
			_ = c.Close() // a probe: nothing was asked
			out[id] = true
		case errors.Is(err, ErrNotLive):
			removeStale(dir, e.Name())
		}
	}
	return out, nil
}

// removeStale removes a socket no process listens on any more.
func removeStale(dir, name string) {
	d, err := openDir(dir, false)
	if err != nil {
		return
	}
	defer func() { _ = d.Close() }() // read-only
	_ = unlinkAt(d, name)            // another process may have done it
}
