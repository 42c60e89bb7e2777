package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/dsh-dev/dsh/internal/chat"
	"github.com/dsh-dev/dsh/internal/control"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/toolset"
)

const attachSummary = `Joins a live session of another dsh process — a chat, dsh run, an editor's
dsh acp — in this terminal: the conversation so far, then everything as it
happens. What is typed here goes to that session (after the turn that runs);
a permission prompt shows in every client, the first answer counts, and the
log says it came from "attach". Esc cancels the session's running turn; leaving
(Ctrl-C twice, /exit) leaves the session running in its process.

ID is a session id or a unique prefix of one; last (or none) is the session
most recently active that can be joined. dsh sessions marks those
(live, attachable).`

// attachFrom is how the log names an answer given in dsh attach.
const attachFrom = "attach"

func runAttachCmd(ctx context.Context, io IO, args []string) error {
	var o struct {
		SessionDir string
		Color      colorMode
	}
	o.Color = "auto"
	fs := newFlags(io, "attach", "[ID | last]", attachSummary)
	fs.StringVar(&o.SessionDir, "session-dir", "", "session directory (default $XDG_STATE_HOME/dsh/sessions)")
	fs.Var(&o.Color, "color", "colour output `WHEN`: auto, always or never (auto honours NO_COLOR)")
	pos, err := parseInterspersed(io, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usageErr(io, fs, "want one session: ID or last")
	}
	if !io.OutIsTerminal || !io.InIsTerminal {
		fmt.Fprintln(io.Err, "dsh: attach needs a terminal.")
		return errUsage
	}
	dir, err := session.Dir(o.SessionDir)
	if err != nil {
		return err
	}
	want := "last"
	if len(pos) == 1 {
		want = pos[0]
	}
	id, err := attachTarget(dir, want)
	if err != nil {
		return err
	}
	return attachChat(ctx, io, dir, id, o.Color.enabled(io))
}

// attachTarget is the session want names: an id or a prefix of one, or last,
// the most recently active that can be joined.
func attachTarget(dir, want string) (string, error) {
	if want != "last" {
		path, err := session.Resolve(dir, want)
		if err != nil {
			return "", err
		}
		if filepath.Dir(path) != filepath.Clean(dir) {
			return "", fmt.Errorf("%s is not a session of %s", want, dir)
		}
		return strings.TrimSuffix(filepath.Base(path), ".jsonl"), nil
	}
	joinable, err := control.Attachable(dir)
	if err != nil {
		return "", err
	}
	infos, err := session.List(dir)
	if err != nil {
		return "", err
	}
	for _, in := range infos { // newest first
		if joinable[in.ID] {
			return in.ID, nil
		}
	}
	return "", errors.New("no live session to attach to: start one with dsh (or dsh run), then dsh attach")
}

// attachChat runs the chat on session id, live in another process.
func attachChat(ctx context.Context, io IO, dir, id string, color bool) error {
	reg := toolset.All()
	var client *control.Client
	var hello control.Hello
	cfg := chat.Config{
		Root: io.Cwd, Color: color, Width: io.width(), Height: io.Height,
		Now: io.Now, SessionDir: dir, Editor: cmp.Or(io.Getenv("VISUAL"), io.Getenv("EDITOR")),
		Sessions: func() ([]session.Info, error) { return host.ListSessions(dir, hello.Root) },
	}
	cfg.Open = func(want string, replay chat.Replay) (chat.Opened, error) {
		if client != nil || want != id {
			// The chat's own /new and /resume open sessions of this
			// process; attach follows the one it joined.
			return chat.Opened{}, fmt.Errorf("dsh attach follows session %s; to open another, run dsh (or dsh attach ID)", id)
		}
		c, err := control.DialSession(ctx, dir, id, control.DialOptions{From: attachFrom,
			Replay: func(r session.Record) { replay(reg, r) }})
		if errors.Is(err, control.ErrNotLive) {
			return chat.Opened{}, fmt.Errorf("session %s is not live: no dsh process has it open (dsh --resume %s goes on with it here)", id, id)
		}
		if err != nil {
			return chat.Opened{}, err
		}
		client, hello = c, c.Hello()
		return chat.Opened{Session: c, Registry: reg, Events: c.Events(), Joined: true}, nil
	}
	m := chat.New(cfg, chat.Opened{})
	if err := m.Open(id); err != nil {
		return err
	}
	printBacklog(io, m, color)
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithOutput(io.Out), tea.WithoutSignalHandler(), tea.WithFPS(chatFPS)}
	if f, ok := io.In.(*os.File); ok {
		opts = append(opts, tea.WithInput(f))
	}
	if !color {
		opts = append(opts, tea.WithColorProfile(colorprofile.Ascii))
	}
	p := tea.NewProgram(m, opts...)
	done := make(chan struct{})
	defer close(done)
	go func() { // SIGTERM and SIGHUP (Ctrl-C is a key in the chat)
		if io.Interrupts == nil {
			return
		}
		select {
		case <-io.Interrupts:
			p.Kill()
		case <-done:
		}
	}()
	_, runErr := p.Run()
	if client != nil {
		_ = client.Close() // leaving: the session goes on in its process
		fmt.Fprintf(io.Err, "left session %s; it goes on in its dsh (dsh attach %s joins it again)\n", id, id)
	}
	if runErr != nil && !errors.Is(runErr, tea.ErrProgramKilled) && !errors.Is(runErr, context.Canceled) {
		return runErr
	}
	return nil
}
