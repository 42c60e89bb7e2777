// Package skill is the skill tool: the model loads one of the session's
// skills (package skills) — its instructions, or a file of its folder.
package skill

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/skills"
	"github.com/dsh-dev/dsh/internal/tool"
)

var (
	//go:embed skill.md
	description string
	//go:embed guidance.md
	guidance string
)

type params struct {
	Name string `json:"name" jsonschema:"minLength=1" jsonschema_description:"The skill's name, as the system prompt lists it."`
	File string `json:"file,omitempty" jsonschema_description:"A file of the skill's folder, relative to it; omit it for the instructions."`
}

// Tool returns the skill tool.
func Tool() tool.Tool {
	return tool.New(tool.Spec[params, struct{}]{
		Name:          "skill",
		Description:   description,
		Guidance:      guidance,
		ReadOnly:      true,
		Permission:    tool.PermNone,
		Kind:          card.ToolRead,
		Execute:       execute,
		PresentCall:   presentCall,
		PresentResult: presentResult,
	})
}

type listKey struct{}

// Offer gives a session its skills; the host does, when it opens the session.
func Offer(s *tool.Session, ss []skills.Skill) {
	s.State(listKey{}, func() any { return ss })
}

func offered(s *tool.Session) []skills.Skill {
	ss, _ := s.State(listKey{}, func() any { return []skills.Skill(nil) }).([]skills.Skill)
	return ss
}

func execute(_ context.Context, env tool.Env, p params, _ *struct{}) (tool.Result, *struct{}, error) {
	ss := offered(env.Session)
	sk, ok := skills.Find(ss, p.Name)
	if !ok {
		names := make([]string, len(ss))
		for i, s := range ss {
			names[i] = s.Name
		}
		if len(names) == 0 {
			return tool.Errorf("There is no skill %q: this session offers none.", p.Name), nil, nil
		}
		return tool.Errorf("There is no skill %q. The skills are: %s.", p.Name, strings.Join(names, ", ")), nil, nil
	}
	if p.File != "" {
		text, err := sk.File(p.File)
		if err != nil {
			return tool.Errorf("Cannot read %s of the skill %s: %v.", p.File, sk.Name, err), nil, nil
		}
		return tool.Text(text), nil, nil
	}
	body, err := sk.Body()
	if err != nil {
		return tool.Errorf("Cannot load the skill %s: %v.", sk.Name, err), nil, nil
	}
	text := fmt.Sprintf("# Skill: %s\n\n%s", sk.Name, body)
	if files := sk.Files(); len(files) > 0 {
		text += "\n\nFiles of the skill's folder (load one with the skill tool's file parameter): " + strings.Join(files, ", ")
	}
	return tool.Text(text), nil, nil
}

func presentCall(p params, _ *struct{}) card.Call {
	if p.File != "" {
		return &card.GenericCall{Title: fmt.Sprintf("Load %s of the skill %s", p.File, p.Name)}
	}
	return &card.GenericCall{Title: "Load the skill " + p.Name}
}

// presentResult shows what the model was given: the instructions are the
// card's content, so the user sees what steers the model.
func presentResult(p params, r tool.Result, _ *struct{}) card.Result {
	if r.IsError {
		return nil
	}
	title := "Skill " + p.Name
	if p.File != "" {
		title += ": " + p.File
	}
	return &card.GenericResult{Title: title, Content: []card.Content{card.Text(r.TextOf())}}
}
