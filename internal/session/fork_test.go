package session

import (
	"path/filepath"
	"slices"
	"testing"
)

// A fork holds the records before the fork point, and those after it that
// belong before it (a prompt's "after" logged late), under a header of its
// own; the original is left as it was.
func TestFork(t *testing.T) {
	dir := t.TempDir()
	l, err := Create(dir, "20260101-000000-aaaaaaaa", "/w", Options{System: "sys"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []Record{
		{Type: TypeUser, Text: "one"}, {Type: TypeProgress, CallID: "c", Chunk: "x"}, {Type: TypeTurnEnd, StopReason: "end_turn"},
		{Type: TypeCheckpoint, Checkpoint: &Checkpoint{Prompt: 2, Phase: PhaseBefore}},
		{Type: TypeUser, Text: "two"},
		{Type: TypeCheckpoint, Checkpoint: &Checkpoint{Prompt: 1, Phase: PhaseAfter}},
		{Type: TypeCheckpoint, Checkpoint: &Checkpoint{Prompt: 2, Phase: PhaseAfter}},
	} {
		if _, err := l.Put(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	id := "20260101-000001-bbbbbbbb"
	err = Fork(l.Path(), dir, id, func(r Record) bool { return r.Type == TypeCheckpoint && r.Checkpoint.Prompt == 2 },
		func(r Record) bool { return r.Type == TypeCheckpoint && r.Checkpoint.Prompt < 2 })
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ReadFile(filepath.Join(dir, id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var types []RecordType
	for _, r := range recs {
		types = append(types, r.Type)
	}
	if !slices.Equal(types, []RecordType{TypeHeader, TypeUser, TypeTurnEnd, TypeCheckpoint}) || recs[3].Checkpoint.Prompt != 1 || recs[0].SessionID != id || recs[0].System != "sys" || recs[0].Cwd != "/w" {
		t.Errorf("the fork holds %v, header %+v", types, recs[0])
	}
	if orig, err := ReadFile(l.Path()); err != nil || len(orig) != 8 {
		t.Errorf("the original has %d records, %v", len(orig), err)
	}
}
