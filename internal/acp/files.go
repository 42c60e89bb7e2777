package acp

import (
	"context"
	"errors"
	"sync/atomic"

	sdk "github.com/coder/acp-go-sdk"
)

// editorFiles reads and writes a session's files through the client
// (fs/read_text_file, fs/write_text_file), for the sides of them the client
// advertised: the model sees the editor's unsaved buffers, and the editor
// tracks dsh's changes for review.
type editorFiles struct {
	a           *Agent
	s           atomic.Pointer[sess] // set once the session is
	read, write bool
}

// files is the editor's view for a new session, or nil when the client
// offers neither side.
func (a *Agent) files() *editorFiles {
	a.mu.Lock()
	fs := a.fs
	a.mu.Unlock()
	if !fs.ReadTextFile && !fs.WriteTextFile {
		return nil
	}
	return &editorFiles{a: a, read: fs.ReadTextFile, write: fs.WriteTextFile}
}

func (f *editorFiles) attach(s *sess) { f.s.Store(s) }

// session is the session's id, once its updates so far have gone out: the
// client sees a call's card before dsh asks for the call's file.
func (f *editorFiles) session() sdk.SessionId {
	s := f.s.Load()
	if s == nil {
		return ""
	}
	s.flush()
	return sdk.SessionId(s.id)
}

func (f *editorFiles) CanRead() bool  { return f.read }
func (f *editorFiles) CanWrite() bool { return f.write }

func (f *editorFiles) ReadText(ctx context.Context, abs string) (string, error) {
	resp, err := f.a.client().ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: f.session(), Path: abs})
	if err != nil {
		return "", clientError(err)
	}
	return resp.Content, nil
}

func (f *editorFiles) WriteText(ctx context.Context, abs, content string) error {
	_, err := f.a.client().WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: f.session(), Path: abs, Content: content})
	return clientError(err)
}

// clientError is the client's error in its own words: the message it put in
// the error's data, else the error's message.
func clientError(err error) error {
	var re *sdk.RequestError
	if !errors.As(err, &re) {
		return err
	}
	if d, ok := re.Data.(map[string]any); ok {
		if msg, ok := d["error"].(string); ok && msg != "" {
			return errors.New(msg)
		}
		if msg, ok := d["message"].(string); ok && msg != "" {
			return errors.New(msg)
		}
	}
	return errors.New(re.Message)
}

// fileClient is the side of the connection that asks the client for files.
type fileClient interface {
	ReadTextFile(ctx context.Context, r sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error)
	WriteTextFile(ctx context.Context, r sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error)
}

type noFiles struct{}

func (noFiles) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, errNoClient
}

func (noFiles) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, errNoClient
}

var errNoClient = errors.New("no client is connected")

// client is the connection's file side.
func (a *Agent) client() fileClient {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.peer.(fileClient); ok {
		return c
	}
	return noFiles{}
}
