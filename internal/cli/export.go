package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dsh-dev/dsh/internal/attach"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/termfold"
	"github.com/dsh-dev/dsh/internal/termui"
	"github.com/dsh-dev/dsh/internal/toolset"
	"github.com/dsh-dev/dsh/internal/view"
	"github.com/dsh-dev/dsh/internal/web"
)

type exportOptions struct {
	SessionDir string
	Format     string
	Output     string
	Session    string
}

const exportSummary = `Writes a recorded session as one file to share: --format md (the default) as
Markdown — the prompts and answers as text, each tool call's card in a code
block; html as one self-contained page that looks like dsh web's, every body
unfolded, its styles inline and no script; json as dsh replay --json prints it,
a JSON line per record with its cards. SESSION is an id (see dsh sessions), a
log's path, or "last". -o FILE writes the file (refusing to replace one), else
standard output.`

func runExportCmd(ctx context.Context, io IO, args []string) error {
	o := exportOptions{Format: "md"}
	fs := newFlags(io, "export", "SESSION", exportSummary)
	fs.StringVar(&o.SessionDir, "session-dir", "", "session directory (default $XDG_STATE_HOME/dsh/sessions)")
	fs.StringVar(&o.Format, "format", "md", "what to write: md, html or json")
	fs.StringVar(&o.Output, "o", "", "write to `FILE` (a new file) instead of standard output")
	pos, err := parseInterspersed(io, fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr(io, fs, "want exactly one SESSION (an id from dsh sessions, a path, or last)")
	}
	switch o.Format {
	case "md", "html", "json":
	default:
		return usageErr(io, fs, "--format: want md, html or json, got %q", o.Format)
	}
	o.Session = pos[0]
	return runExport(ctx, io, o)
}

func runExport(_ context.Context, io IO, o exportOptions) (err error) {
	dir, err := session.Dir(o.SessionDir)
	if err != nil {
		return err
	}
	path, err := resolveSession(dir, o.Session)
	if err != nil {
		return err
	}
	recs, err := session.ReadFile(path)
	if err != nil {
		return err
	}
	w := io.Out
	if o.Output != "" {
		f, err := os.OpenFile(o.Output, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return fmt.Errorf("writing the export: %w", err)
		}
		defer func() {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				_ = os.Remove(o.Output)
			}
		}()
		w = f
	}
	id := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	reg := toolset.All()
	switch o.Format {
	case "html":
		return web.Export(w, filepath.Dir(path), reg, nil, id, recs)
	case "json":
		bw := bufio.NewWriter(w)
		jc := &jsonConsumer{w: bw, pres: view.NewPresenter(reg)}
		for _, r := range recs {
			if r.Type == session.TypeProgress {
				continue
			}
			if err := jc.handle(r); err != nil {
				return err
			}
		}
		return bw.Flush()
	}
	return exportMarkdown(w, id, recs, func(child string, fn func(session.Record) error) error {
		return host.ReplayChild(filepath.Dir(path), child, fn)
	})
}

// exportMarkdown writes recs as Markdown: the user's and the model's words
// as text, what the terminal shows of everything else (cards, notes) in code
// blocks, drawn by the terminal's own fold so the two read alike.
func exportMarkdown(w io.Writer, id string, recs []session.Record, child func(string, func(session.Record) error) error) error {
	bw := bufio.NewWriter(w)
	var block bytes.Buffer
	fold := termfold.New(toolset.All(), nil)
	fold.ChildLog = child
	ui := termui.New(&block, termui.Options{Width: 100, FoldAbove: 1 << 30})
	answering := false // under the "## dsh" heading of the turn
	flush := func() {
		if text := strings.Trim(block.String(), "\n"); text != "" {
			if !answering {
				fmt.Fprint(bw, "## dsh\n\n")
				answering = true
			}
			fence := "```"
			for strings.Contains(text, fence) {
				fence += "`"
			}
			fmt.Fprintf(bw, "%s\n%s\n%s\n\n", fence, text, fence)
		}
		block.Reset()
	}
	fmt.Fprintf(bw, "# dsh session %s\n\n", id)
	answer := func() {
		flush()
		if !answering {
			fmt.Fprint(bw, "## dsh\n\n")
			answering = true
		}
	}
	for _, r := range recs {
		switch r.Type {
		case session.TypeHeader:
			fmt.Fprintf(bw, "In `%s`, started %s.\n\n", r.Cwd, r.Time.Format("2006-01-02 15:04"))
			continue
		case session.TypeProgress:
			continue
		case session.TypeUser:
			flush()
			answering = false
			text, chips := attach.View(r.Text, r.Content)
			fmt.Fprintf(bw, "## You\n\n%s\n\n", text)
			for _, c := range append(chips, attach.ImageChips(r.Content)...) {
				fmt.Fprintf(bw, "> %s\n\n", c)
			}
			continue
		case session.TypeAssistant:
			answer()
			fmt.Fprintf(bw, "%s\n\n", r.Text)
			continue
		case session.TypeTurnEnd:
			flush()
			fmt.Fprintf(bw, "*%s*\n\n", termfold.TurnNote(r))
			continue
		case session.TypeThinking:
			answer()
			fmt.Fprintf(bw, "<details><summary>Thinking</summary>\n\n%s\n\n</details>\n\n", r.Text)
			continue
		case session.TypeToolCall, session.TypeToolResult, session.TypePlan, session.TypeMode, session.TypeAllow,
			session.TypeCompaction, session.TypeInstructions, session.TypeModel, session.TypeCheckpoint, session.TypeRestore,
			session.TypeHook, session.TypeCommand, session.TypeReply, session.TypeDamaged, session.TypeDecision, session.TypeTitle:
			// drawn as the terminal draws them, below
		}
		if err := fold.Record(ui, r); err != nil {
			return err
		}
	}
	flush()
	return bw.Flush()
}
