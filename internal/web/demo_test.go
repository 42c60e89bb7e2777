package web

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/demo"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/toolset"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// demoTmp holds the demo session's log, made once per process because running
// the demo takes a few seconds.
var demoTmp string

func TestMain(m *testing.M) {
	code := m.Run()
	if demoTmp != "" {
		os.RemoveAll(demoTmp)
	}
	os.Exit(code)
}

var demoOnce = sync.OnceValues(runDemo)

// runDemo runs `dsh demo`'s conversation through the agent loop with the scripted
// provider and the real tools on the sample project, and returns its log.
func runDemo() (string, error) {
	var err error
	if demoTmp, err = os.MkdirTemp("", "dsh-web-demo-"); err != nil {
		return "", err
	}
	root := filepath.Join(demoTmp, "project")
	if err := os.Mkdir(root, 0o755); err != nil {
		return "", err
	}
	if err := demo.Install(root); err != nil {
		return "", err
	}
	ws, err := workspace.New(root, false)
	if err != nil {
		return "", err
	}
	tools := tool.NewSession(demoID, ws)
	defer tools.Close()
	log, err := session.Create(filepath.Join(demoTmp, "sessions"), demoID, ws.Root(), session.Options{})
	if err != nil {
		return "", err
	}
	defer log.Close()
	prov, err := script.Parse(demo.Script)
	if err != nil {
		return "", err
	}
	instr, err := agent.LoadInstructions(ws.Root())
	if err != nil {
		return "", err
	}
	reg := toolset.New(toolset.Options{})
	a := agent.New(agent.Config{
		Provider: prov, Registry: reg, Log: log, Tools: tools, Mode: agent.ModeBypass,
		System: agent.SystemPrompt(agent.PromptInfo{Root: ws.Root(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
			Date: time.Now(), Instructions: instr, Guidance: guidance(reg)}),
	})
	stop, err := a.Prompt(context.Background(), demo.Prompt)
	if err != nil {
		return "", fmt.Errorf("the demo failed: %w", err)
	}
	if stop != agent.StopEndTurn {
		return "", fmt.Errorf("the demo ended with %s", stop)
	}
	return log.Path(), nil
}

// demoSession puts the demo's log into dir as session demoID.
func demoSession(t *testing.T, dir string) {
	t.Helper()
	src, err := demoOnce()
	if err != nil {
		t.Fatalf("run the demo: %v", err)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, demoID+".jsonl"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func guidance(reg *tool.Registry) []string {
	var g []string
	for _, tl := range reg.Tools() {
		g = append(g, tl.Guidance())
	}
	return g
}
