//go:build !linux

package fs

import "os"

// fileCTime falls back to the modification time where the change time is not at
// hand.
func fileCTime(fi os.FileInfo) int64 { return fi.ModTime().UnixNano() }
