package acp

import (
	"context"
	"encoding/json"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/session"
)

// UnstableForkSession copies a session's log into a new session, which opens
// without a replay (the client shows the history it has) and goes on apart:
// the source stays as it was, in the session list.
func (a *Agent) UnstableForkSession(_ context.Context, p sdk.UnstableForkSessionRequest) (sdk.UnstableForkSessionResponse, error) {
	src, err := a.logPath(string(p.SessionId))
	if err != nil {
		return sdk.UnstableForkSessionResponse{}, err
	}
	var servers []sdk.McpServer
	if err := convert(p.McpServers, &servers); err != nil {
		return sdk.UnstableForkSessionResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	if err := checkCwd(p.Cwd); err != nil {
		return sdk.UnstableForkSessionResponse{}, err
	}
	id := session.NewID(a.o.Now())
	if err := session.Fork(src, a.o.SessionDir, id, func(session.Record) bool { return false }, nil); err != nil {
		return sdk.UnstableForkSessionResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	s, err := a.reopen(id, p.Cwd, servers, p.AdditionalDirectories, false)
	if err != nil {
		return sdk.UnstableForkSessionResponse{}, err
	}
	resp := sdk.UnstableForkSessionResponse{SessionId: sdk.SessionId(id), Modes: modeState(s.h)}
	if err := convert(a.configOptions(s), &resp.ConfigOptions); err != nil {
		return sdk.UnstableForkSessionResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	return resp, nil
}

// convert carries a value between the SDK's stable and unstable types of the
// same JSON.
func convert(from, to any) error {
	b, err := json.Marshal(from)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, to)
}
