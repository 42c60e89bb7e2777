package bash

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

var (
	//go:embed job_output.md
	jobOutputDescription string
	//go:embed job_kill.md
	jobKillDescription string
	//go:embed job_list.md
	jobListDescription string
)

type jobOutputParams struct {
	JobID  string `json:"job_id" jsonschema:"minLength=1" jsonschema_description:"The id bash returned when it started the job."`
	WaitMS int    `json:"wait_ms,omitempty" jsonschema:"minimum=0,maximum=600000" jsonschema_description:"Wait up to this many milliseconds for the job to finish before answering (default 0: answer at once)."`
}

type jobKillParams struct {
	JobID string `json:"job_id" jsonschema:"minLength=1" jsonschema_description:"The id of the job to kill."`
}

type jobListParams struct{}

func jobOutputTool() tool.Tool {
	return tool.New(tool.Spec[jobOutputParams, tool.NoMeta]{
		Name:          "job_output",
		Description:   jobOutputDescription,
		ReadOnly:      true,
		Permission:    tool.PermNone,
		Kind:          card.ToolExecute,
		Execute:       jobOutput,
		PresentCall:   presentJobOutputCall,
		PresentResult: presentJobOutputResult,
	})
}

func jobKillTool() tool.Tool {
	return tool.New(tool.Spec[jobKillParams, tool.NoMeta]{
		Name:        "job_kill",
		Description: jobKillDescription,
		Permission:  tool.PermExecute,
		Kind:        card.ToolExecute,
		// It ends only the session's own jobs.
		Approval: func(jobKillParams) tool.Approval {
			return tool.Approval{Keys: []string{"tool:job_kill"}, Label: "job_kill", Remember: true, Confined: true}
		},
		Execute:       jobKill,
		PresentCall:   presentJobKillCall,
		PresentResult: presentJobKillResult,
	})
}

func jobListTool() tool.Tool {
	return tool.New(tool.Spec[jobListParams, tool.NoMeta]{
		Name:          "job_list",
		Description:   jobListDescription,
		ReadOnly:      true,
		Permission:    tool.PermNone,
		Kind:          card.ToolOther,
		Execute:       jobList,
		PresentCall:   presentJobListCall,
		PresentResult: presentJobListResult,
	})
}

func jobOutput(ctx context.Context, env tool.Env, p jobOutputParams, _ *tool.NoMeta) (tool.Result, *tool.NoMeta, error) {
	j, err := jobs(env.Session).get(p.JobID)
	if err != nil {
		return tool.Errorf("%s.", capitalize(err.Error())), nil, nil
	}
	j.wait(ctx, time.Duration(p.WaitMS)*time.Millisecond)
	status := j.status() // before reading: a finished job has written all its output
	data, dropped := j.unread()

	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", j.id, status)
	if dropped > 0 {
		fmt.Fprintf(&b, "… %d bytes dropped: the job keeps only its last %d bytes of output …\n", dropped, jobBuffer)
		data = trimContinuation(data)
	}
	if len(data) == 0 {
		b.WriteString("(no new output)")
	} else {
		ht := newHeadTail(jobOutputHead, jobOutputTail)
		_, _ = ht.Write(data)
		b.WriteString(ht.String())
	}
	return tool.Text(b.String()), nil, nil
}

func jobKill(_ context.Context, env tool.Env, p jobKillParams, _ *tool.NoMeta) (tool.Result, *tool.NoMeta, error) {
	j, err := jobs(env.Session).get(p.JobID)
	if err != nil {
		return tool.Errorf("%s.", capitalize(err.Error())), nil, nil
	}
	if !j.kill() {
		return tool.Text(fmt.Sprintf("%s had already finished: %s.", j.id, j.status())), nil, nil
	}
	return tool.Text(fmt.Sprintf("%s: %s.", j.id, j.status()) + killedNote), nil, nil
}

func jobList(_ context.Context, env tool.Env, _ jobListParams, _ *tool.NoMeta) (tool.Result, *tool.NoMeta, error) {
	js := jobs(env.Session).list()
	if len(js) == 0 {
		return tool.Text("This session has no background jobs."), nil, nil
	}
	var b strings.Builder
	for i, j := range js {
		if i > 0 {
			b.WriteByte('\n')
		}
		status := j.status()
		if status == "running" {
			status = fmt.Sprintf("running for %s", time.Since(j.started).Round(time.Second))
		}
		fmt.Fprintf(&b, "%s  %s  %s", j.id, status, j.command)
		if j.description != "" {
			fmt.Fprintf(&b, "  (%s)", j.description)
		}
	}
	return tool.Text(b.String()), nil, nil
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
