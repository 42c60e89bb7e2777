package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"strings"
	"time"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/lsp"

	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// A change is how write and edit share one path through preview and execution:
// each plans its change against the file as it is now; the preview runs the plan
// into nothing to learn its hunks, and the execution plans again, refuses if the
// file is no longer the one the preview saw, and runs the plan into the file.

// refusal is why a change cannot be made, worded for the model: the preview's
// error, or the execution's error result.
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

func refusef(format string, args ...any) error { return &refusal{fmt.Sprintf(format, args...)} }

// current is the file a change applies to, as the change found it.
type current struct {
	loc   workspace.File
	data  []byte     // nil when the file does not exist
	stamp *fileStamp // nil when the file does not exist
}

// changePlan is what a change would do to the current file.
type changePlan struct {
	cur               current
	path, verb, title string // the path as given; "write", "Write" for messages
	// run writes the new content to w and returns the meta (without its stamp)
	// and the model-facing message. It is nil when nothing is to be written:
	// meta and msg are then final.
	run  func(w io.Writer) (diffMeta, string, error)
	meta diffMeta
	msg  string
}

// loadCurrent locates path and reads the file there, if there is one, and
// refuses a change the session may not make to it: for a preview (pv nil), an
// existing file the session has not read as it is now; for an execution, a file
// that is no longer the one its preview pv saw. verb names the change in
// messages ("write", "edit").
func loadCurrent(ctx context.Context, env tool.Env, path, verb string, pv *diffMeta) (current, error) {
	c, err := readCurrent(ctx, env, path, verb)
	if err != nil {
		return c, err
	}
	refusal := "Refused to " + verb
	if verb == "write" {
		refusal = "Refused to overwrite"
	}
	switch {
	case pv != nil && !previewHolds(pv, c.stamp):
		return c, refusef("%s: %s changed on disk after the change was previewed, so it was not applied to the new content. Read it again, then retry.", refusal, path)
	case pv == nil && c.stamp != nil:
		if err := sessionStamps(env.Session).check(c.stamp, path); err != nil {
			return c, refusef("%s: %v.", refusal, err)
		}
	}
	return c, nil
}

func readCurrent(ctx context.Context, env tool.Env, path, verb string) (current, error) {
	loc, err := env.Session.Workspace.Locate(path)
	if err != nil {
		return current{}, refusef("Cannot %s %s: %v.", verb, path, err)
	}
	c := current{loc: loc}
	fi, err := loc.Lstat()
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return c, nil
	case err != nil:
		return c, refusef("Cannot %s %s: %v.", verb, path, err)
	case fi.IsDir():
		return c, refusef("Cannot %s %s: it is a directory.", verb, path)
	case !fi.Mode().IsRegular():
		return c, refusef("Cannot %s %s: it is not a regular file.", verb, path)
	}
	f, err := loc.Open()
	if err != nil {
		return c, refusef("Cannot %s %s: %v.", verb, path, err)
	}
	defer func() { _ = f.Close() }()
	if fi, err = f.Stat(); err != nil {
		return c, refusef("Cannot %s %s: %v.", verb, path, err)
	}
	if !fi.Mode().IsRegular() {
		return c, refusef("Cannot %s %s: it is not a regular file.", verb, path)
	}
	var data []byte
	if editorReads(env, loc, fi) {
		text, err := env.Session.Files.ReadText(ctx, loc)
		switch {
		case errors.Is(err, tool.ErrUseDisk):
			data = nil
		case err != nil:
			return c, refusef("Cannot %s %s: the editor did not give its text: %v.", verb, path, err)
		default:
			data = []byte(text)
		}
	}
	if data == nil {
		if data, err = io.ReadAll(f); err != nil {
			return c, refusef("Cannot %s %s: %v.", verb, path, err)
		}
	}
	if data == nil {
		data = []byte{}
	}
	c.data, c.stamp = data, stampData(loc.Real(), fi, data)
	return c, nil
}

// changePreview is the Preview of write and edit: the plan run into nothing.
func changePreview(ctx context.Context, env tool.Env, plan func(context.Context, tool.Env) (changePlan, error)) (*diffMeta, error) {
	pl, err := plan(ctx, env)
	if err != nil {
		return nil, err
	}
	m := pl.meta
	if pl.run != nil {
		if m, _, err = pl.run(io.Discard); err != nil {
			return nil, err
		}
	}
	m.Stamp = pl.cur.stamp
	return &m, nil
}

// changeExecute carries out a previewed change (the plan holds the preview).
func changeExecute(ctx context.Context, env tool.Env, plan func(context.Context, tool.Env) (changePlan, error)) (tool.Result, *diffMeta, error) {
	pl, err := plan(ctx, env)
	if err != nil {
		return tool.Errorf("%s", err.Error()), nil, nil
	}
	if pl.run == nil {
		m := pl.meta
		m.Stamp = pl.cur.stamp
		return tool.Text(pl.msg), &m, nil
	}
	if err := ctx.Err(); err != nil {
		return tool.Errorf("%s of %s cancelled: %v.", pl.title, pl.path, err), nil, nil
	}
	var (
		m    diffMeta
		msg  string
		h              = newPrefixHash()
		out  io.Writer = h
		text *bytes.Buffer
		lsps = lsp.From(env.Session)
	)
	if lsps.Checks(pl.cur.loc.Real()) {
		// The server gets the new text itself, not the file: it may not
		// watch the disk.
		text = &bytes.Buffer{}
		out = io.MultiWriter(h, text)
	}
	if editorWrites(env, pl.cur.loc) {
		var fail *tool.Result
		if m, msg, text, fail = editorExecute(ctx, env, pl); fail != nil {
			return *fail, nil, nil
		}
		if !lsps.Checks(pl.cur.loc.Real()) {
			text = nil
		}
	} else {
		fi, err := pl.cur.loc.Replace(func(w io.Writer) error {
			var err error
			m, msg, err = pl.run(io.MultiWriter(w, out))
			return err
		})
		if err != nil {
			return tool.Errorf("Cannot %s %s: %v.", pl.verb, pl.path, err), nil, nil
		}
		m.Stamp = stampOf(pl.cur.loc.Real(), fi, h)
	}
	if text != nil && text.Len() <= diagMaxBytes {
		ok, note := lsps.Permit(ctx, pl.cur.loc.Real(), serverAsk(env))
		if note != "" {
			msg += "\n\n" + note
		}
		var r *lsp.Report
		if ok {
			r = lsps.Check(ctx, pl.cur.loc.Real(), text.Bytes())
		}
		if r != nil {
			m.Diagnostics, m.DiagnosticsMore = diagnosticsAt(pl.path, r.Diagnostics), r.More
			msg += "\n\n" + diagnosticsText(pl.path, r, lsps.Wait())
		}
	}
	return tool.Text(msg), &m, nil
}

// editorWrites says whether a change is applied through the session's
// editor: one that offers writes, for a file of the workspace, while no
// process of the session runs.
func editorWrites(env tool.Env, loc workspace.File) bool {
	f := env.Session.Files
	return f != nil && f.CanWrite() && env.Session.Workspace.Contains(loc.Abs()) && !env.Session.Running()
}

// editorExecute applies a change through the editor, which tracks it for
// review: dsh computes the new text and the hunks as for the disk, the editor
// writes them. What the editor then holds is the stamp, as a read would see it.
// It returns the meta, the model's message and the new text, or the result of
// a failure.
func editorExecute(ctx context.Context, env tool.Env, pl changePlan) (diffMeta, string, *bytes.Buffer, *tool.Result) {
	var b bytes.Buffer
	m, msg, err := pl.run(&b)
	if err != nil {
		r := tool.Errorf("Cannot %s %s: %v.", pl.verb, pl.path, err)
		return m, "", nil, &r
	}
	err = env.Session.Files.WriteText(ctx, pl.cur.loc, b.String())
	if errors.Is(err, tool.ErrUseDisk) {
		fi, err := pl.cur.loc.Replace(func(w io.Writer) error {
			_, err := w.Write(b.Bytes())
			return err
		})
		if err != nil {
			r := tool.Errorf("Cannot %s %s: %v.", pl.verb, pl.path, err)
			return m, "", nil, &r
		}
		m.Stamp = stampData(pl.cur.loc.Real(), fi, b.Bytes())
		return m, msg, &b, nil
	}
	if errors.Is(err, tool.ErrUnverified) {
		r := tool.Errorf("Cannot %s %s: %v. Read it before changing it again.", pl.verb, pl.path, err)
		return m, "", nil, &r
	}
	if err != nil {
		r := tool.Errorf("Cannot %s %s: the editor refused the change: %v. The file is as it was; read it before changing it again.", pl.verb, pl.path, err)
		return m, "", nil, &r
	}
	m.Editor = true
	if fi, err := pl.cur.loc.Lstat(); err == nil {
		m.Stamp = stampData(pl.cur.loc.Real(), fi, b.Bytes())
	}
	return m, msg, &b, nil
}

// serverAsk is how a call may ask to start a language server: not in a mode
// that changes nothing, where the server would be the one thing it ran.
func serverAsk(env tool.Env) func(context.Context, tool.Question) (card.Answer, error) {
	if env.ReadOnlyMode {
		return nil
	}
	return env.Ask
}

// diagMaxBytes bounds the files whose changes go to a language server.
const diagMaxBytes = 4 << 20

// diagnosticsAt names the file as the call did.
func diagnosticsAt(path string, ds []card.Diagnostic) []card.Diagnostic {
	out := make([]card.Diagnostic, len(ds))
	for i, d := range ds {
		d.Path = path
		out[i] = d
	}
	return out
}

// diagnosticsText is what the model reads of a check.
func diagnosticsText(path string, r *lsp.Report, wait time.Duration) string {
	switch {
	case r.Failed != "":
		return "No diagnostics: " + r.Failed + "."
	case r.Pending:
		return fmt.Sprintf("%s sent no diagnostics for %s within %s (it may still be loading); the diagnostics tool asks again.", r.Server, path, wait)
	case len(r.Diagnostics) == 0:
		return fmt.Sprintf("%s reports no errors or warnings in %s.", r.Server, path)
	}
	var b strings.Builder
	n := len(r.Diagnostics) + r.More
	fmt.Fprintf(&b, "%s reports %d problem", r.Server, n)
	if n != 1 {
		b.WriteString("s")
	}
	fmt.Fprintf(&b, " in %s after this change:", path)
	for _, d := range r.Diagnostics {
		fmt.Fprintf(&b, "\n%s:%d:%d: %s: %s", path, d.Line, d.Column, d.Severity, d.Message)
		if d.Source != "" {
			fmt.Fprintf(&b, " [%s]", d.Source)
		}
	}
	if r.More > 0 {
		fmt.Fprintf(&b, "\n… and %d more.", r.More)
	}
	return b.String()
}

// previewHolds reports whether the file is still the one the preview saw: still
// missing for a creation, the same content of the same file otherwise.
func previewHolds(pv *diffMeta, cur *fileStamp) bool {
	switch {
	case pv.Stamp == nil || cur == nil:
		return pv.Stamp == nil && cur == nil && pv.Created
	}
	return !pv.Created && pv.Stamp.same(cur)
}
