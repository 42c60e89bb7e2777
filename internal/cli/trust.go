package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/dsh-dev/dsh/internal/config"
	"github.com/dsh-dev/dsh/internal/settings"
)

// askTrust tells what the project's file may not set, and, when the user has
// not answered for this very file yet, asks once whether to trust the folder:
// the answer goes into the user's file (with the project file's hash, so a
// later change asks again) and a yes resolves the settings anew.
func askTrust(ctx context.Context, io IO, f settingsFlags, st settings.Settings) (settings.Settings, error) {
	tellIgnored(io, st)
	proj, ok := st.Project()
	if !ok || proj.Decided || len(st.Ignored()) == 0 {
		return st, nil
	}
	what := proj.Named()
	fmt.Fprintf(io.Err, "Trust this folder (%s)? Its %s may then set what is ignored above. [y/N] ", io.Cwd, what)
	a := strings.ToLower(strings.TrimSpace(readLine(io.In)))
	yes := a == "y" || a == "yes"
	if err := config.RecordTrust(io.Getenv, io.Cwd, proj.SHA256, yes); err != nil {
		warner(io)(err.Error())
		return st, nil
	}
	if !yes {
		fmt.Fprintf(io.Err, "Not trusted; dsh will not ask again until %s changes.\n", what)
		return st, nil
	}
	return f.resolve(ctx, io)
}

// readLine reads one line a byte at a time, leaving the rest of the input to
// the chat.
func readLine(r io.Reader) string {
	var b strings.Builder
	buf := make([]byte, 1)
	for b.Len() < 256 {
		n, err := r.Read(buf)
		if n == 1 {
			if buf[0] == '\n' || buf[0] == '\r' {
				break
			}
			b.WriteByte(buf[0])
		}
		if err != nil {
			break
		}
	}
	return b.String()
}
