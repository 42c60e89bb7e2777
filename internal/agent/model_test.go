package agent

import (
	"slices"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/tool"
)

// TestModelAndImagesAreFolded: a model change is a logged record that the next
// request follows, and a prompt's images go to the model after its text; an
// agent that folds the log asks for the same model with the same context.
func TestModelAndImagesAreFolded(t *testing.T) {
	e := newEnv(t)
	rec := scripted(t, `{"turns":[{"text":"one"},{"text":"two"},{"text":"three"}]}`)
	a := New(Config{Provider: rec, Registry: tool.NewRegistry(), Log: e.log, Tools: e.tools, Model: "first", Thinking: "low"})
	img := card.Image("image/png", "iVBORw0KGgo=")
	if _, err := a.Prompt(t.Context(), "look", img); err != nil {
		t.Fatal(err)
	}
	if err := a.SetModel("second", "high"); err != nil {
		t.Fatal(err)
	}
	if err := a.SetModel("", "off"); err == nil {
		t.Error("a model record without a model was logged")
	}
	if _, err := a.Prompt(t.Context(), "again"); err != nil {
		t.Fatal(err)
	}
	reqs := rec.requests()
	if got := []string{reqs[0].Model + "/" + reqs[0].Thinking, reqs[1].Model + "/" + reqs[1].Thinking}; !slices.Equal(got, []string{"first/low", "second/high"}) {
		t.Errorf("requests asked for %q", got)
	}
	want := "user: text look | image 1"
	if got := describe(reqs[1].Messages); len(got) == 0 || got[0] != want {
		t.Errorf("the context starts %q, want %q", got, want)
	}
	if s := strings.Join(summary(e.records(t)), "|"); !strings.Contains(s, "model second high") {
		t.Errorf("log: %s", s)
	}

	b := New(Config{Provider: rec, Registry: tool.NewRegistry(), Log: e.log, Tools: e.tools, Model: "first"})
	for _, r := range e.records(t) {
		b.Fold(r)
	}
	if m, th := b.Model(); m != "second" || th != "high" {
		t.Errorf("the reloaded agent uses %s/%s", m, th)
	}
	if _, err := b.Prompt(t.Context(), "more"); err != nil {
		t.Fatal(err)
	}
	last := rec.requests()[2]
	if last.Model != "second" || describe(last.Messages)[0] != want {
		t.Errorf("after reload: model %s, context %q", last.Model, describe(last.Messages))
	}
	var imgs []provider.Part
	for _, m := range last.Messages {
		for _, p := range m.Parts {
			if p.Type == provider.PartImage {
				imgs = append(imgs, p)
			}
		}
	}
	if len(imgs) != 1 || imgs[0].Content[0] != img {
		t.Errorf("images in the reloaded context: %+v", imgs)
	}
}
