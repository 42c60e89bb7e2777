package acp

import (
	"fmt"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/session"
)

func TestTitle(t *testing.T) {
	for in, want := range map[string]string{
		"Fix the bug":                    "Fix the bug",
		"  \n Fix it\nmore detail":       "Fix it",
		strings.Repeat("é", 100):         strings.Repeat("é", maxTitle-1) + "…",
		"Read [@a.go](file:///a.go)\n\n": "Read [@a.go](file:///a.go)",
	} {
		if got := title(in); got != want {
			t.Errorf("title(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestListPages pages through session/list with its cursor: newest first, no
// session twice, even when one is updated between pages (it moves to the
// front, which only a new listing shows).
func TestListPages(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var ids []string
	for i := range 7 {
		now := base.Add(time.Duration(i) * time.Minute)
		id := session.NewID(now)
		l, err := session.Create(dir, id, "/src/app", session.Options{Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Put(session.Record{Type: session.TypeUser, Text: fmt.Sprintf("prompt %d", i)}); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	a := New(Options{SessionDir: dir})
	a.listPage = 3
	var got []string
	var cursor *string
	for page := 0; ; page++ {
		resp, err := a.ListSessions(t.Context(), sdk.ListSessionsRequest{Cwd: sdk.Ptr("/src/app"), Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range resp.Sessions {
			got = append(got, *s.Title)
		}
		if page == 0 { // the oldest session is updated after the first page
			l, err := session.Open(dir+"/"+ids[0]+".jsonl", session.Options{Now: func() time.Time { return base.Add(time.Hour) }}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Put(session.Record{Type: session.TypeAssistant, Text: "later"}); err != nil {
				t.Fatal(err)
			}
			_ = l.Close()
		}
		if resp.NextCursor == nil {
			break
		}
		cursor = resp.NextCursor
	}
	want := "prompt 6,prompt 5,prompt 4,prompt 3,prompt 2,prompt 1"
	if strings.Join(got, ",") != want {
		t.Errorf("pages gave %s, want %s", strings.Join(got, ","), want)
	}
	if resp, err := a.ListSessions(t.Context(), sdk.ListSessionsRequest{Cwd: sdk.Ptr("/elsewhere")}); err != nil || len(resp.Sessions) != 0 {
		t.Errorf("another cwd lists %v, %v", resp.Sessions, err)
	}
	if _, err := a.ListSessions(t.Context(), sdk.ListSessionsRequest{Cwd: sdk.Ptr("relative")}); err == nil {
		t.Error("a relative cwd was taken")
	}
}
