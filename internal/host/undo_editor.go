package host

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"unicode/utf8"

	"github.com/dsh-dev/dsh/internal/checkpoint"
	"github.com/dsh-dev/dsh/internal/tool"
)

// An undo with an editor that holds the files (ACP fs/*): what the user
// changed is told from what the editor holds, unsaved text included, and the
// files put back are written through the editor, so that its review shows
// the undo as it showed the edit.

// editorHolds reads, through the editor, each text file the plan would change;
// where the editor's text is not the disk's, the user changed the file after
// the agent did (in a buffer not saved yet): the plan keeps it, unless told to
// overwrite, and shows the editor's text as the file's.
func (s *Session) editorHolds(ctx context.Context, plan *checkpoint.Plan) {
	files := s.o.Files
	if files == nil || !files.CanRead() {
		return
	}
	for i := range plan.Files {
		f := &plan.Files[i]
		if f.User || !textEntry(f.Now) || !utf8.Valid(f.Old) {
			continue
		}
		loc, err := s.ws.Locate(filepath.Join(s.ws.Root(), filepath.FromSlash(f.Path)))
		if err != nil {
			continue
		}
		text, err := files.ReadText(ctx, loc)
		if err != nil {
			continue // the disk's is what there is to go by
		}
		if text != string(f.Old) {
			f.User, f.Old = true, []byte(text)
		}
	}
}

// applyRestore writes the plan: the text files the editor may write through
// it, the rest (removals, links, binaries, a mode that changes) on the disk.
// A file the editor does not write is written on the disk instead.
func (s *Session) applyRestore(ctx context.Context, st *checkpoint.Store, plan checkpoint.Plan, overwrite bool) error {
	files := s.o.Files
	disk := checkpoint.Plan{Now: plan.Now}
	for _, f := range plan.Files {
		if f.User && !overwrite {
			continue
		}
		if files != nil && files.CanWrite() && textEntry(f.Want) && (f.Now.ID == "" || f.Now.Mode == f.Want.Mode) && utf8.Valid(f.New) {
			loc, err := s.ws.Locate(filepath.Join(s.ws.Root(), filepath.FromSlash(f.Path)))
			if err == nil {
				err = files.WriteText(ctx, loc, string(f.New))
			}
			if err == nil {
				continue
			}
			if !errors.Is(err, tool.ErrUseDisk) {
				s.o.Warn(fmt.Sprintf("undo: the editor did not write %s (%v); it is written on the disk", f.Path, err))
			}
		}
		disk.Files = append(disk.Files, f)
	}
	_, err := st.Apply(disk, overwrite)
	return err
}

// textEntry says a tree entry is a file an editor opens: regular, and
// created as one (a new file written through the editor is not executable).
func textEntry(e checkpoint.Entry) bool {
	return e.ID != "" && e.Mode == "100644"
}
