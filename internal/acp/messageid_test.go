package acp_test

import (
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// TestMessageIDs: the agent's message and thought chunks carry the id of
// their message, one per message however many chunks it streams in, and a
// replay through session/load sends each message whole under the same id.
func TestMessageIDs(t *testing.T) {
	turns := []turn{
		{Thinking: "The user greets me; I should greet back at some length.", Text: "Hello there, and welcome to this rather long greeting of many words."},
		{Thinking: "Again a greeting, so again a long answer to it.", Text: "Hello again: this answer, too, streams in more than one chunk of text."},
	}
	sessions := evenDir(t)
	c := start(t, options{sessionDir: sessions, script: script(t, turns...)})
	id := c.newSession()
	c.mustPrompt(id, "Hi", sdk.StopReasonEndTurn)
	c.mustPrompt(id, "Hi again", sdk.StopReasonEndTurn)
	c.close()
	live, chunks := messages(t, c.notifications(id))
	want := []string{
		string(id) + "-t1 " + turns[0].Thinking, string(id) + "-m1 " + turns[0].Text,
		string(id) + "-t2 " + turns[1].Thinking, string(id) + "-m2 " + turns[1].Text,
	}
	if !slices.Equal(live, want) {
		t.Errorf("live messages:\n%s\nwant\n%s", strings.Join(live, "\n"), strings.Join(want, "\n"))
	}
	if chunks <= len(want) {
		t.Errorf("%d chunks for %d messages: the test wants messages streamed in pieces", chunks, len(want))
	}

	r := start(t, options{sessionDir: sessions, cwd: c.cwd, script: script(t)})
	if _, err := r.conn.LoadSession(r.ctx(), sdk.LoadSessionRequest{SessionId: id, Cwd: r.cwd, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	replayed, _ := messages(t, r.notifications(id))
	if !slices.Equal(replayed, want) {
		t.Errorf("replayed messages:\n%s\nwant\n%s", strings.Join(replayed, "\n"), strings.Join(want, "\n"))
	}
	t.Logf("messageId, live and replayed: %s", strings.Join(want, " | "))
}

// messages are the agent's messages and thoughts among ns, as "ID text" in
// the order they began, and how many chunks they came in.
func messages(t *testing.T, ns []sdk.SessionNotification) ([]string, int) {
	t.Helper()
	var order []string
	text := map[string]string{}
	chunks := 0
	for _, n := range ns {
		var msgID *string
		var content sdk.ContentBlock
		switch u := n.Update; {
		case u.AgentMessageChunk != nil:
			msgID, content = u.AgentMessageChunk.MessageId, u.AgentMessageChunk.Content
		case u.AgentThoughtChunk != nil:
			msgID, content = u.AgentThoughtChunk.MessageId, u.AgentThoughtChunk.Content
		default:
			continue
		}
		if content.Text == nil {
			continue
		}
		if msgID == nil {
			t.Errorf("a chunk without a messageId: %q", content.Text.Text)
			continue
		}
		chunks++
		if _, ok := text[*msgID]; !ok {
			order = append(order, *msgID)
		}
		text[*msgID] += content.Text.Text
	}
	out := make([]string, len(order))
	for i, id := range order {
		out[i] = id + " " + text[id]
	}
	return out, chunks
}
