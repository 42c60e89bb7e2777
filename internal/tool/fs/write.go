package fs

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"

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
// shown as the hunks it changed.
func Write() tool.Tool {
	return tool.New(tool.Spec[writeParams, rawMeta]{
		Name:          "write",
		Description:   writeDescription,
		Guidance:      writeGuidance,
		ReadOnly:      false,
		Permission:    tool.PermEdit,
		Kind:          "edit",
		Execute:       execRaw(writeExecute),
		PresentCall:   callRaw(writePresentCall),
		PresentResult: resultRaw(writePresentResult),
	})
}

func writeExecute(ctx context.Context, env tool.Env, p writeParams) tool.Result {
	abs, err := env.Session.Workspace.Resolve(p.Path)
	if err != nil {
		return tool.Errorf("Cannot write %s: %v.", p.Path, err)
	}
	st := sessionStamps(env.Session)
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		if err := ctx.Err(); err != nil {
			return tool.Errorf("Write of %s cancelled: %v.", p.Path, err)
		}
		if err := atomicWrite(abs, writeString(p.Content)); err != nil {
			return tool.Errorf("Cannot write %s: %v.", p.Path, err)
		}
		editRecord(st, abs)
		return editResult(fmt.Sprintf("Created %s (%s).", p.Path, writeLines(p.Content)),
			diffMeta{Path: p.Path, Created: true, Hunks: []diffHunk{}})
	case err != nil:
		return tool.Errorf("Cannot write %s: %v.", p.Path, err)
	case fi.IsDir():
		return tool.Errorf("Cannot write %s: it is a directory.", p.Path)
	case !fi.Mode().IsRegular():
		return tool.Errorf("Cannot write %s: it is not a regular file.", p.Path)
	}
	if err := st.check(abs, p.Path, fi); err != nil {
		return tool.Errorf("Refused to overwrite: %v.", err)
	}
	old, err := os.ReadFile(abs)
	if err != nil {
		return tool.Errorf("Cannot write %s: %v.", p.Path, err)
	}
	if string(old) == p.Content {
		return editResult(writeNoChange(p.Path), diffMeta{Path: p.Path, Unchanged: true, Hunks: []diffHunk{}})
	}
	if err := ctx.Err(); err != nil {
		return tool.Errorf("Write of %s cancelled: %v.", p.Path, err)
	}
	if err := atomicWrite(abs, writeString(p.Content)); err != nil {
		return tool.Errorf("Cannot write %s: %v.", p.Path, err)
	}
	editRecord(st, abs)
	hunks, omitted := diffTexts(string(old), p.Content, newHunkBudget())
	n := len(hunks) + omitted
	msg := fmt.Sprintf("Overwrote %s (%s; %d changed region", p.Path, writeLines(p.Content), n)
	if n != 1 {
		msg += "s"
	}
	return editResult(msg+").", diffMeta{Path: p.Path, Hunks: hunkNonNil(hunks), Omitted: omitted})
}

// writeString is a fill function for atomicWrite that writes s.
func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	}
}

// writeLines says how many lines s has, for the model.
func writeLines(s string) string {
	n := hunkCountLines(s)
	if n == 1 {
		return "1 line"
	}
	return fmt.Sprintf("%d lines", n)
}
