// Package todo is the model's todo list: todo_write replaces the session's list,
// which consumers show as the session's plan.
package todo

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"sync"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

var (
	//go:embed todo.md
	description string
	//go:embed guidance.md
	guidance string
)

type item struct {
	Content  string `json:"content" jsonschema:"minLength=1" jsonschema_description:"What to do, as a short imperative sentence."`
	Status   string `json:"status" jsonschema:"enum=pending,enum=in_progress,enum=completed"`
	Priority string `json:"priority,omitempty" jsonschema:"enum=high,enum=medium,enum=low"`
}

type params struct {
	Todos []item `json:"todos" jsonschema_description:"The whole list, replacing the previous one."`
}

// meta persists the list so that a replayed session can restore the plan.
type meta struct {
	Todos []tool.PlanEntry `json:"todos"`
}

// Tool returns todo_write.
func Tool() tool.Tool {
	return tool.New(tool.Spec[params, meta]{
		Name:          "todo_write",
		Description:   description,
		Guidance:      guidance,
		Fold:          fold,
		Permission:    tool.PermNone,
		Kind:          card.ToolThink,
		Execute:       execute,
		PresentCall:   presentCall,
		PresentResult: presentResult,
	})
}

type listKey struct{}

type list struct {
	mu      sync.Mutex
	entries []tool.PlanEntry
}

func sessionList(s *tool.Session) *list {
	return s.State(listKey{}, func() any { return &list{} }).(*list)
}

// Current returns the session's todo list as last written. Test oracle: it
// shows what the fold keeps, which consumers get from plan records instead.
func Current(s *tool.Session) []tool.PlanEntry {
	l := sessionList(s)
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.entries)
}

func execute(_ context.Context, env tool.Env, p params, _ *meta) (tool.Result, *meta, error) {
	entries := planOf(p.Todos)
	env.PublishPlan(slices.Clone(entries))
	text := checklist(entries)
	if n := countStatus(entries, "in_progress"); n > 1 {
		text += fmt.Sprintf("\n\nNote: %d items are in_progress. Work on one at a time: mark it completed before starting the next.", n)
	}
	return tool.Text(text), &meta{Todos: entries}, nil
}

// fold makes the logged list the session's list, live and on reload.
func fold(s *tool.Session, _ params, r tool.Result, m *meta) {
	if r.IsError || m == nil {
		return
	}
	Set(s, m.Todos)
}

// Set makes entries the session's todo list: todo_write's fold, and the plan
// tool's when an approved plan's steps become the list.
func Set(s *tool.Session, entries []tool.PlanEntry) {
	l := sessionList(s)
	l.mu.Lock()
	l.entries = slices.Clone(entries)
	l.mu.Unlock()
}
