package acp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/session"
)

// listPage is how many sessions one session/list answer holds.
const listPage = 50

// maxTitle is the longest title, in runes.
const maxTitle = 80

// title is a session's title: the first line of its first prompt, cut short.
func title(prompt string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	line = strings.TrimSpace(line)
	if utf8.RuneCountInString(line) > maxTitle {
		r := []rune(line)
		line = strings.TrimSpace(string(r[:maxTitle-1])) + "…"
	}
	return line
}

// cursor is where a page of session/list ends: the last session's place in
// the order (newest update first, then id), so sessions updated meanwhile
// neither repeat nor vanish from the pages still to come.
type cursor struct {
	Updated time.Time `json:"u"`
	ID      string    `json:"i"`
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c) // a time and a string always encode
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.ID == "" {
		return cursor{}, sdk.NewInvalidParams(map[string]any{"error": "invalid cursor"})
	}
	return c, nil
}

// after reports whether in comes after c in the listing's order.
func (c cursor) after(in session.Info) bool {
	if !in.Updated.Equal(c.Updated) {
		return in.Updated.Before(c.Updated)
	}
	return in.ID < c.ID
}

// ListSessions lists the sessions logged in the session directory, newest
// first, those of one cwd if the client names it. Sessions that were never
// prompted are left out: an editor opens one for every new thread.
func (a *Agent) ListSessions(_ context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	var cwds []string
	if p.Cwd != nil {
		if !filepath.IsAbs(*p.Cwd) {
			return sdk.ListSessionsResponse{}, sdk.NewInvalidParams(map[string]any{"error": "cwd must be an absolute path"})
		}
		cwds = append(cwds, filepath.Clean(*p.Cwd))
		if r, err := filepath.EvalSymlinks(*p.Cwd); err == nil { // logs hold the resolved root
			cwds = append(cwds, r)
		}
	}
	var from *cursor
	if p.Cursor != nil {
		c, err := decodeCursor(*p.Cursor)
		if err != nil {
			return sdk.ListSessionsResponse{}, err
		}
		from = &c
	}
	all, err := session.List(a.o.SessionDir)
	if err != nil {
		return sdk.ListSessionsResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	page := a.listPage
	if page <= 0 {
		page = listPage
	}
	resp := sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}
	var last session.Info
	for _, in := range all {
		// A subagent's session is shown under its task, not as a thread.
		if in.FirstPrompt == "" || in.Parent != nil || (len(cwds) > 0 && !slices.Contains(cwds, filepath.Clean(in.Cwd))) {
			continue
		}
		if from != nil && !from.after(in) {
			continue
		}
		if len(resp.Sessions) == page {
			resp.NextCursor = sdk.Ptr(cursor{Updated: last.Updated, ID: last.ID}.encode())
			break
		}
		last = in
		resp.Sessions = append(resp.Sessions, sdk.SessionInfo{
			SessionId: sdk.SessionId(in.ID),
			Cwd:       in.Cwd,
			Title:     sdk.Ptr(title(in.Name())),
			UpdatedAt: sdk.Ptr(in.Updated.UTC().Format(time.RFC3339Nano)),
		})
	}
	return resp, nil
}
