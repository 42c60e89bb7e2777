package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/script"
)

// encodingPeer encodes every update as dsh puts it on the wire.
type encodingPeer struct{ n int }

func (p *encodingPeer) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	p.n++
	b, err := encodeNotification(n)
	_, _ = io.Discard.Write(b)
	return err
}

func (p *encodingPeer) RequestPermission(context.Context, sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return sdk.RequestPermissionResponse{}, nil
}

// BenchmarkLoadSession is session/load of a session of 1 000 read calls, the
// protocol's encoding included, without the pipe.
func BenchmarkLoadSession(b *testing.B) {
	root, dir := b.TempDir(), b.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte(strings.Repeat("a line of text\n", 10)), 0o644); err != nil {
		b.Fatal(err)
	}
	var turns []script.Turn
	for p := range 25 {
		var tc []script.ToolCall
		for i := range 40 {
			tc = append(tc, script.ToolCall{ID: fmt.Sprintf("p%d-%d", p, i), Name: "read", Args: []byte(`{"path":"a.txt"}`)})
		}
		turns = append(turns, script.Turn{ToolCalls: tc}, script.Turn{Text: "ok"})
	}
	js, _ := json.Marshal(map[string]any{"turns": turns})
	sp, err := script.Parse(js)
	if err != nil {
		b.Fatal(err)
	}
	s, err := host.Create(host.Options{SessionDir: dir, Root: root, Mode: agent.ModeBypass,
		Provider: func() (provider.Provider, error) { return sp, nil }})
	if err != nil {
		b.Fatal(err)
	}
	for range 25 {
		if _, err := s.Prompt(b.Context(), "go"); err != nil {
			b.Fatal(err)
		}
	}
	id := s.ID()
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	a := New(Options{SessionDir: dir})
	peer := &encodingPeer{}
	a.setPeer(peer)
	for b.Loop() {
		if _, err := a.LoadSession(b.Context(), sdk.LoadSessionRequest{SessionId: sdk.SessionId(id), Cwd: root, McpServers: []sdk.McpServer{}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(peer.n)/float64(b.N), "updates/op")
	_ = a.Close()
}
