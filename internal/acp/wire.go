package acp

import (
	"context"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/acp/rpcfix"
)

// notifier writes session/update notifications through the connection's
// JSON-RPC layer and leaves requests (permission) to the SDK, which conn sets
// up on first use.
type notifier struct {
	conn func() *sdk.AgentSideConnection
	rpc  *rpcfix.Conn
}

func (n notifier) SessionUpdate(_ context.Context, note sdk.SessionNotification) error {
	return n.rpc.Notify(note)
}

func (n notifier) Replayed(note sdk.SessionNotification) error { return n.rpc.Buffer(note) }

func (n notifier) Flush() error { return n.rpc.Flush() }

func (n notifier) RequestPermission(ctx context.Context, r sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return n.conn().RequestPermission(ctx, r)
}

func (n notifier) ReadTextFile(ctx context.Context, r sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return n.conn().ReadTextFile(ctx, r)
}

func (n notifier) WriteTextFile(ctx context.Context, r sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return n.conn().WriteTextFile(ctx, r)
}

func (n notifier) Elicit(ctx context.Context, e rpcfix.Elicitation) (rpcfix.Elicited, error) {
	return n.rpc.Elicit(ctx, e)
}
