package tool

import (
	"context"
	"reflect"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
)

// TestDynamicCardsFromTheLog: a dynamic tool's title comes from its server's
// metadata, which it logs as the call's preview; a registry without the tool
// (dsh replay, the web page) makes the same cards of the same records.
func TestDynamicCardsFromTheLog(t *testing.T) {
	dt, err := NewDynamic(Dynamic{Name: "mcp__files__stat", Title: "files: Stat a file", Kind: "read",
		Execute: func(context.Context, Env, jsontext.Value) (Result, error) { return Result{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	live, replay := NewRegistry(dt), NewRegistry()
	args := []byte(`{"path":"a"}`)
	preview, fail := dt.Preview(context.Background(), Env{}, args)
	if fail != nil {
		t.Fatal(fail)
	}
	want := &card.GenericCall{Title: "files: Stat a file", ToolKind: "read", RawInput: card.RawJSON(args)}
	for name, reg := range map[string]*Registry{"live": live, "replay": replay} {
		if got := reg.PresentCall("mcp__files__stat", args, preview); !reflect.DeepEqual(got, want) {
			t.Errorf("%s call card %+v, want %+v", name, got, want)
		}
		res := Result{Content: []card.Content{card.Text("size 3")}}
		if got := reg.PresentResult("mcp__files__stat", args, res); !reflect.DeepEqual(got, &card.GenericResult{Content: res.Content}) {
			t.Errorf("%s result card %+v", name, got)
		}
	}
	// A log written before previews were logged still shows the call.
	if got := replay.PresentCall("mcp__files__stat", args, nil).(*card.GenericCall); got.Title != "mcp__files__stat" {
		t.Errorf("without a preview the title is %q", got.Title)
	}
}
