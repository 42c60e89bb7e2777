package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dsh-dev/dsh/internal/control"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/termui"
	"github.com/dsh-dev/dsh/internal/toolset"
	"github.com/dsh-dev/dsh/internal/view"
)

type replayOptions struct {
	SessionDir string
	JSON       bool
	Color      colorMode
	Session    string
}

const replaySummary = `Prints a recorded session's messages and cards, made by the same presenters
from the same logged data as when it ran. SESSION is an id (see dsh sessions)
or the path of a log file; "last" is the most recent session. With --json, prints one JSON line per record with
its cards.`

func runReplayCmd(ctx context.Context, io IO, args []string) error {
	o := replayOptions{Color: "auto"}
	fs := newFlags(io, "replay", "SESSION", replaySummary)
	fs.StringVar(&o.SessionDir, "session-dir", "", "session directory (default $XDG_STATE_HOME/dsh/sessions)")
	fs.BoolVar(&o.JSON, "json", false, "print JSON lines instead of terminal text")
	fs.Var(&o.Color, "color", "colour output: auto, always or never")
	if err := parse(io, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErr(io, fs, "want exactly one SESSION (an id from dsh sessions, or a path)")
	}
	o.Session = fs.Arg(0)
	return runReplay(ctx, io, o)
}

func runReplay(_ context.Context, io IO, o replayOptions) error {
	dir, err := session.Dir(o.SessionDir)
	if err != nil {
		return err
	}
	path, err := resolveSession(dir, o.Session)
	if err != nil {
		return err
	}
	reg := toolset.All()
	var handle func(session.Record) error
	if o.JSON {
		handle = (&jsonConsumer{w: io.Out, pres: view.NewPresenter(reg)}).handle
	} else {
		term := newTermConsumer(io.Out, reg, termui.Options{Color: o.Color.enabled(io), Width: io.width()}, nil)
		// A task's subagent is drawn under it from its own log.
		term.fold.ChildLog = func(id string, fn func(session.Record) error) error {
			return host.ReplayChild(filepath.Dir(path), id, fn)
		}
		handle = term.handle
	}
	// Progress records are folded away: the final card comes from the tool result.
	return session.Scan(path, func(r session.Record) error {
		if r.Type == session.TypeProgress {
			return nil
		}
		return handle(r)
	})
}

type sessionsOptions struct {
	SessionDir string
}

func runSessionsCmd(ctx context.Context, io IO, args []string) error {
	var o sessionsOptions
	fs := newFlags(io, "sessions", "[rm ID... | rename ID TITLE]", "Lists recorded sessions, newest first: id, start time, cwd and title (else the first prompt);\n"+
		"a live one that dsh attach can join says (live, attachable).\n"+
		"dsh sessions rm ID... deletes sessions: each log and its subagents' go; a session open in a dsh is refused.\n"+
		"dsh sessions rename ID TITLE names a session (/rename in a session does the same).")
	fs.StringVar(&o.SessionDir, "session-dir", "", "session directory (default $XDG_STATE_HOME/dsh/sessions)")
	pos, err := parseInterspersed(io, fs, args)
	if err != nil {
		return err
	}
	rm := len(pos) > 0 && pos[0] == "rm"
	rename := len(pos) > 0 && pos[0] == "rename"
	switch {
	case rename && len(pos) < 3:
		return usageErr(io, fs, "rename: want the session's ID and its title")
	case rename:
	case rm && len(pos) == 1:
		return usageErr(io, fs, "rm: want the IDs of the sessions to delete")
	case !rm && len(pos) != 0:
		return usageErr(io, fs, "want no arguments, rm ID... or rename ID TITLE")
	}
	dir, err := session.Dir(o.SessionDir)
	if err != nil {
		return err
	}
	if rename {
		return renameSession(ctx, io, dir, pos[1], strings.Join(pos[2:], " "))
	}
	if rm {
		var errs []error
		for _, id := range pos[1:] {
			if err := host.DeleteSession(dir, id); err != nil {
				errs = append(errs, err)
				continue
			}
			fmt.Fprintf(io.Out, "deleted %s\n", id)
		}
		return errors.Join(errs...)
	}
	infos, err := session.List(dir)
	if err != nil {
		return err
	}
	if len(infos) == 0 {
		fmt.Fprintf(io.Err, "No sessions in %s yet. Try: dsh demo\n", dir)
		return nil
	}
	joinable, err := control.Attachable(dir)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTARTED\tCWD\tPROMPT")
	for _, in := range infos {
		state := ""
		switch {
		case joinable[in.ID]:
			state = " (live, attachable)"
		case in.Live:
			state = " (live)"
		}
		if in.Parent != nil {
			state += " (subagent " + in.Parent.Agent + ")"
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\n", in.ID, state, in.Start.Local().Format(time.DateTime),
			oneLine(in.Cwd, 200), oneLine(in.Name(), 60))
	}
	return tw.Flush()
}

// oneLine flattens s to one line of at most n runes, its other control and
// escape characters made visible: a first prompt or a directory name is the
// model's or a repository's text and must not drive the terminal.
func oneLine(s string, n int) string {
	r := []rune(s)
	for i, c := range r {
		if c == '\n' || c == '\r' || c == '\t' {
			r[i] = ' '
		}
	}
	if len(r) > n {
		r = append(r[:n-1], '…')
	}
	return termui.Sanitize(string(r))
}

// resolveSession is session.Resolve plus "last", the most recent session.
func resolveSession(dir, idOrPath string) (string, error) {
	if idOrPath != "last" {
		return session.Resolve(dir, idOrPath)
	}
	infos, err := session.List(dir)
	if err != nil {
		return "", err
	}
	if len(infos) == 0 {
		return "", fmt.Errorf("no sessions in %s yet (try: dsh demo)", dir)
	}
	return infos[0].Path, nil
}

// renameSession is dsh sessions rename: through the session's process while
// it lives, else in its log.
func renameSession(ctx context.Context, io IO, dir, idOrPrefix, title string) error {
	path, err := session.Resolve(dir, idOrPrefix)
	if err != nil {
		return err
	}
	id := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if filepath.Dir(path) != filepath.Clean(dir) {
		return fmt.Errorf("rename: %s is not a session of %s", path, dir)
	}
	if err := control.Rename(ctx, dir, id, title, "terminal"); err != nil {
		return err
	}
	fmt.Fprintf(io.Out, "renamed %s: %s\n", id, oneLine(strings.TrimSpace(title), 200))
	return nil
}
