package acp

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/tool"
)

// editorFiles reads and writes a session's files through the client
// (fs/read_text_file, fs/write_text_file), for the sides of them the client
// advertised: the model sees the editor's unsaved buffers, and the editor
// tracks dsh's changes for review.
//
// The editor opens a file by its path, following links: a path that changes
// meaning between dsh's check and the editor's open (a folder swapped for a
// link to ~/.ssh) would read or write outside the workspace. So the editor is
// only lent paths with no link on the way and no folder moved moments ago,
// watched while it uses them (see host.Loan); what it read while the
// path changed is refused, and what it wrote is checked on the disk. The disk
// is used instead while commands run unasked (auto mode), while a process of
// the session runs (the file tools check), and after a path lent to the
// editor changed once.
type editorFiles struct {
	a           *Agent
	s           atomic.Pointer[sess] // set once the session is
	read, write bool
	// raced: a path lent to the editor changed while it was lent; the
	// session's files are the disk's from then on.
	raced atomic.Bool
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

// errRaced says why the disk is used once a lent path changed.
var errRaced = errors.New("a path lent to the editor changed while the editor used it")

// lend is the file's path lent to the editor, or why the disk is used.
func (f *editorFiles) lend(loc host.WorkspaceFile) (*host.Loan, error) {
	if f.raced.Load() {
		return nil, fmt.Errorf("%w: %w", tool.ErrUseDisk, errRaced)
	}
	// In auto mode the model's commands run unasked: one of them could swap
	// the path at any moment.
	if s := f.s.Load(); s != nil && s.h.Mode() == host.ModeAuto {
		return nil, fmt.Errorf("%w: commands run without asking", tool.ErrUseDisk)
	}
	l, err := loc.Lend()
	if errors.Is(err, host.ErrMoved) {
		f.raced.Store(true)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", tool.ErrUseDisk, err)
	}
	return l, nil
}

// returned checks the lent path after the editor's call.
func (f *editorFiles) returned(l *host.Loan, wrote bool) error {
	err := l.Return(wrote)
	if err != nil {
		f.raced.Store(true)
	}
	return err
}

// ReadText is the editor's text of the file. What the editor gave while the
// path changed is refused: it may be another file's.
func (f *editorFiles) ReadText(ctx context.Context, loc host.WorkspaceFile) (string, error) {
	l, err := f.lend(loc)
	if err != nil {
		return "", err
	}
	defer l.Close()
	resp, err := f.a.client().ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: f.session(), Path: loc.Abs()})
	if err := f.returned(l, false); err != nil {
		return "", fmt.Errorf("%w; its text is not used, and this session's files are read from the disk from now on", err)
	}
	if err != nil {
		return "", clientError(err)
	}
	return resp.Content, nil
}

// WriteText has the editor write the file, then checks on the disk, through
// the folders held since before the call and without following a link, that
// the file holds the content.
func (f *editorFiles) WriteText(ctx context.Context, loc host.WorkspaceFile, content string) error {
	l, err := f.lend(loc)
	if err != nil {
		return err
	}
	defer l.Close()
	_, err = f.a.client().WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: f.session(), Path: loc.Abs(), Content: content})
	if err := f.returned(l, true); err != nil {
		return fmt.Errorf("%w: %w, so the editor may have written the change elsewhere; this session's files are written on the disk from now on", tool.ErrUnverified, err)
	}
	if err != nil {
		return clientError(err)
	}
	got, err := l.Read(int64(len(content)) + 1)
	if err != nil {
		return fmt.Errorf("%w: after the editor wrote %s: %w", tool.ErrUnverified, loc.Abs(), err)
	}
	if string(got) != content {
		return fmt.Errorf("%w: the editor said it wrote %s, but the file on disk does not hold the change", tool.ErrUnverified, loc.Abs())
	}
	return nil
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
