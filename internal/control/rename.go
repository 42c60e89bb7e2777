package control

import (
	"context"
	"errors"

	"github.com/dsh-dev/dsh/internal/host"
)

// Rename names session id of sessionDir for the client from: a live one
// through its control socket, so its process logs the title and its clients
// see it; an idle one through the host, under the log's lock.
func Rename(ctx context.Context, sessionDir, id, title, from string) error {
	if err := CheckTitle(title); err != nil {
		return err
	}
	c, err := DialSession(ctx, sessionDir, id, DialOptions{From: from})
	if errors.Is(err, ErrNotLive) {
		return host.RenameSession(sessionDir, id, title)
	}
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	go func() { // its events are not wanted, but must not hold up the reply
		for range c.Events() {
		}
	}()
	return c.Rename(ctx, title)
}
