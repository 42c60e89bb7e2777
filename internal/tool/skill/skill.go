// Package skill is the skill tool: the model loads one of the session's
// skills (package skills) — its instructions, or a file of its folder — or
// runs one of the user's custom commands (package command), as Claude Code's
// Skill and SlashCommand tools do: expanded as when the user types it, unless
// its file says only the user runs it (disable-model-invocation).
package skill

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/command"
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
	Name      string `json:"name" jsonschema:"minLength=1" jsonschema_description:"The skill's or the command's name, as the system prompt lists it."`
	File      string `json:"file,omitempty" jsonschema_description:"A file of the skill's folder, relative to it; omit it for the instructions."`
	Arguments string `json:"arguments,omitempty" jsonschema_description:"What follows the name when the user types it: the command's or the skill's arguments."`
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

// catalog is what a session offers: its skills and its custom commands.
type catalog struct {
	skills   []skills.Skill
	commands []command.Command
}

// Offer gives a session its skills and custom commands; the host does, when
// it opens the session.
func Offer(s *tool.Session, ss []skills.Skill, cmds []command.Command) {
	s.State(listKey{}, func() any { return catalog{ss, cmds} })
}

func offered(s *tool.Session) catalog {
	c, _ := s.State(listKey{}, func() any { return catalog{} }).(catalog)
	return c
}

func execute(_ context.Context, env tool.Env, p params, _ *struct{}) (tool.Result, *struct{}, error) {
	cat := offered(env.Session)
	ss := cat.skills
	name := strings.TrimPrefix(p.Name, "/")
	vars := map[string]string{}
	if env.Session.Workspace != nil {
		vars["CLAUDE_PROJECT_DIR"] = env.Session.Workspace.Root()
	}
	sk, ok := skills.Find(ss, name)
	if c, isCmd := command.Find(cat.commands, name); !ok && isCmd {
		return runCommand(c, p.Arguments, vars), nil, nil
	}
	if ok && sk.NoModel {
		return tool.Errorf("The skill %s runs only when the user types /%s (its file sets disable-model-invocation).", sk.Name, sk.Name), nil, nil
	}
	if !ok {
		names := make([]string, len(ss))
		for i, s := range ss {
			names[i] = s.Name
		}
		if len(names) == 0 {
			return tool.Errorf("There is no skill %q: this session offers none.", p.Name), nil, nil
		}
		return tool.Errorf("There is no skill or command %q. The skills are: %s.", p.Name, strings.Join(names, ", ")), nil, nil
	}
	if p.File != "" {
		text, err := sk.File(p.File)
		if err != nil {
			return tool.Errorf("Cannot read %s of the skill %s: %v.", p.File, sk.Name, err), nil, nil
		}
		return tool.Text(text), nil, nil
	}
	body, err := command.Command{Name: sk.Name, Vars: sk.Vars, Skill: &sk}.Text(p.Arguments, vars)
	if err != nil {
		return tool.Errorf("Cannot load the skill %s: %v.", sk.Name, err), nil, nil
	}
	text := fmt.Sprintf("# Skill: %s\n\n%s", sk.Name, body)
	if files := sk.Files(); len(files) > 0 {
		text += "\n\nFiles of the skill's folder (load one with the skill tool's file parameter): " + strings.Join(files, ", ")
	}
	return tool.Text(text), nil, nil
}

// runCommand is a custom command's prompt for the model. Its !`cmd`
// commands are not run here, inside the model's call: the model runs each
// with the bash tool, where it is asked about, shown and confined as any.
func runCommand(c command.Command, args string, vars map[string]string) tool.Result {
	if c.Run.NoModel {
		return tool.Errorf("/%s runs only when the user types it (its file sets disable-model-invocation).", c.Name)
	}
	if c.Body == "" || c.MCP() {
		return tool.Errorf("/%s is not a custom command the skill tool runs.", c.Name)
	}
	text, err := c.Text(args, vars)
	if err != nil {
		return tool.Errorf("Cannot run /%s: %v.", c.Name, err)
	}
	shell := 0
	text = command.BodyShell().ReplaceAllStringFunc(text, func(m string) string {
		shell++
		return "[the output of `" + command.BodyShell().FindStringSubmatch(m)[1] + "`: run it with the bash tool first]"
	})
	head := fmt.Sprintf("# Command /%s\n\n", c.Name)
	if shell > 0 {
		head += "Run the commands it marks with the bash tool, then follow it with their output.\n\n"
	}
	return tool.Text(head + text)
}

func presentCall(p params, _ *struct{}) card.Call {
	if p.File != "" {
		return &card.GenericCall{Title: fmt.Sprintf("Load %s of the skill %s", p.File, p.Name)}
	}
	if p.Arguments != "" {
		return &card.GenericCall{Title: "Run /" + strings.TrimPrefix(p.Name, "/") + " " + p.Arguments}
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
