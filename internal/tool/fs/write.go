package fs

import (
	"context"
	_ "embed"
	"fmt"
	"io"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

var (
	//go:embed write.md
	writeDescription string
	//go:embed write_guidance.md
	writeGuidance string
)

// writeParams are the arguments of the write tool.
type writeParams struct {
	Path    string `json:"path" jsonschema_description:"The file to write: relative to the current directory, or absolute."`
	Content string `json:"content" jsonschema_description:"The complete new content of the file."`
}

// Write returns the write tool: create a file or replace its whole content,
// previewed and shown as the hunks it changes.
func Write() tool.Tool {
	return tool.New(tool.Spec[writeParams, diffMeta]{
		Approval:     func(p writeParams) tool.Approval { return fileEdits(p.Path) },
		Name:         "write",
		Hook:         writeHook,
		Unhook:       writeUnhook,
		HookResponse: writeResponse,
		Description:  writeDescription,
		Guidance:     writeGuidance,
		ReadOnly:     false,
		Permission:   tool.PermEdit,
		Kind:         card.ToolEdit,
		Preview: func(ctx context.Context, env tool.Env, p writeParams) (*diffMeta, error) {
			return changePreview(ctx, env, writePlanFor(p, nil))
		},
		Execute: func(ctx context.Context, env tool.Env, p writeParams, pv *diffMeta) (tool.Result, *diffMeta, error) {
			return changeExecute(ctx, env, writePlanFor(p, pv))
		},
		PresentCall:   writePresentCall,
		PresentResult: writePresentResult,
		Fold:          func(s *tool.Session, _ writeParams, r tool.Result, m *diffMeta) { foldStamp(s, r, diffStampOf(m)) },
		Touched:       func(_ writeParams, r tool.Result, m *diffMeta) []string { return changed(r, m) },
	})
}

func writePlanFor(p writeParams, pv *diffMeta) func(context.Context, tool.Env) (changePlan, error) {
	return func(ctx context.Context, env tool.Env) (changePlan, error) {
		cur, err := loadCurrent(ctx, env, p.Path, "write", pv)
		if err != nil {
			return changePlan{}, err
		}
		pl := changePlan{cur: cur, path: p.Path, verb: "write", title: "Write"}
		if cur.stamp == nil {
			msg := fmt.Sprintf("Created %s (%s).", p.Path, writeLines(p.Content))
			m := diffMeta{Path: p.Path, Created: true, Hunks: []diffHunk{}}
			pl.run = writeRun(p.Content, m, msg)
			return pl, nil
		}
		if string(cur.data) == p.Content {
			pl.meta, pl.msg = diffMeta{Path: p.Path, Unchanged: true, Hunks: []diffHunk{}}, writeNoChange(p.Path)
			return pl, nil
		}
		hunks, omitted := diffTexts(string(cur.data), p.Content, newHunkBudget())
		n := len(hunks) + omitted
		msg := fmt.Sprintf("Overwrote %s (%s; %d changed region", p.Path, writeLines(p.Content), n)
		if n != 1 {
			msg += "s"
		}
		pl.run = writeRun(p.Content, diffMeta{Path: p.Path, Hunks: hunkNonNil(hunks), Omitted: omitted}, msg+").")
		return pl, nil
	}
}

// writeRun writes content; its meta and message are known ahead.
func writeRun(content string, m diffMeta, msg string) func(io.Writer) (diffMeta, string, error) {
	return func(w io.Writer) (diffMeta, string, error) {
		_, err := io.WriteString(w, content)
		return m, msg, err
	}
}

// changed is the file a successful change left, as its stamp names it.
func changed(r tool.Result, m *diffMeta) []string {
	if st := diffStampOf(m); st != nil && !r.IsError {
		return []string{st.Path}
	}
	return nil
}

func diffStampOf(m *diffMeta) *fileStamp {
	if m == nil {
		return nil
	}
	return m.Stamp
}

// writeLines says how many lines s has, for the model.
func writeLines(s string) string {
	n := hunkCountLines(s)
	if n == 1 {
		return "1 line"
	}
	return fmt.Sprintf("%d lines", n)
}

// fileEdits is what "always allow" of a write or an edit remembers: one approval
// for every change to files in the session's workspace, by either tool. The
// path lets the permission step ask about .git internals and outside paths.
func fileEdits(path string) tool.Approval {
	return tool.Approval{Keys: []string{"edits"}, Label: "file edits in this session", Remember: true, Paths: []string{path}}
}
