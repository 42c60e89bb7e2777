package acp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/acp/rpcfix"
	"github.com/dsh-dev/dsh/internal/attach"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/view"
)

// liveOutputCap bounds the output a running command keeps for the bridge: what
// has been streamed (to send only the rest at the end) or what the fallback block
// shows while it runs.
const liveOutputCap = 1 << 20

// fallbackTail is how much of a running command's output the fallback console
// block shows; the final update shows the result's output.
const fallbackTail = 32 << 10

// bridge turns a session's records into ACP session updates. It knows cards, not
// tools: every call and result goes through one switch on the card's kind. The
// same bridge serves a replayed log and the live stream, so both look the same;
// only user prompts (which the client shows itself while live) and a running
// command's output (which replay folds away) differ.
//
// A bridge is not safe for concurrent use; the session serialises it.
type bridge struct {
	cwd       string // relative card paths are joined with it
	termMeta  bool   // the client renders _meta.terminal_* (Zed does)
	pres      *view.Presenter
	running   map[string]*liveCall // calls that have not finished
	order     []string             // their ids, oldest first (with finished ones, pruned on abandonAll)
	replaying bool                 // a loaded log is being sent: its unfinished calls are remembered in order
	context   int                  // context records shown, to number their cards
	// streamed is the text already sent as deltas while the model wrote it, by
	// record type; the complete record then sends only what is missing.
	streamed map[session.RecordType]string
	// children are the bridges of the subagents' sessions, by id; logPath
	// is the session's log while it is replayed, beside which theirs are.
	children map[string]*child
	logPath  string
	// session and messages number the agent's messages and thoughts for their
	// chunks' messageId: a message's is its place among the log's records of
	// its kind, the same live (where its deltas come before its record) and
	// on a replay.
	session  string
	messages map[session.RecordType]int
}

// liveCall is a call seen by the bridge whose result has not come yet.
type liveCall struct {
	view    callView
	started bool            // in_progress was sent
	out     strings.Builder // output received so far, up to liveOutputCap
	over    bool            // out stopped growing at its cap
}

func newBridge(cwd string, termMeta bool, pres *view.Presenter) *bridge {
	return &bridge{cwd: cwd, termMeta: termMeta, pres: pres,
		running: map[string]*liveCall{}, streamed: map[session.RecordType]string{}, messages: map[session.RecordType]int{}}
}

// messageID is the id of the message of kind t being written: the next
// record of that kind (a command's reply counts as the agent's message).
func (b *bridge) messageID(t session.RecordType) string {
	kind := "m"
	if t == session.TypeThinking {
		kind = "t"
	}
	if t == session.TypeReply {
		t = session.TypeAssistant
	}
	return b.session + "-" + kind + strconv.Itoa(b.messages[t]+1) // one a message of a replay
}

// completed counts the record of kind t that ends a message; the next
// message of that kind gets the next id.
func (b *bridge) completed(t session.RecordType) {
	if t == session.TypeReply {
		t = session.TypeAssistant
	}
	b.messages[t]++
}

// withID gives a message or thought chunk its message's id.
func withID(u sdk.SessionUpdate, id string) sdk.SessionUpdate {
	switch {
	case u.AgentMessageChunk != nil:
		u.AgentMessageChunk.MessageId = &id
	case u.AgentThoughtChunk != nil:
		u.AgentThoughtChunk.MessageId = &id
	}
	return u
}

// updates returns what the client should see for rec. replay is true while a
// loaded log is sent, when user prompts are shown too.
func (b *bridge) updates(rec session.Record, replay bool) []sdk.SessionUpdate {
	it := b.pres.Present(rec)
	switch rec.Type {
	case session.TypeUser:
		if replay {
			return userMessage(rec)
		}
	case session.TypeCommand:
		// A built-in command as typed: the client's own prompt, shown again
		// only on a replay.
		if replay {
			return one(sdk.UpdateUserMessageText(rec.Text))
		}
	case session.TypeReply:
		if it.Call != nil { // /diff: its change, as a finished call
			return b.contextCard(rec, it)
		}
		id := b.messageID(rec.Type)
		b.completed(rec.Type)
		return one(withID(sdk.UpdateAgentMessageText(rec.Text), id))
	case session.TypeAssistant:
		id := b.messageID(rec.Type)
		b.completed(rec.Type)
		if s := b.unstreamed(rec.Type, rec.Text); s != "" {
			return one(withID(sdk.UpdateAgentMessageText(s), id))
		}
	case session.TypeThinking:
		id := b.messageID(rec.Type)
		b.completed(rec.Type)
		if s := b.unstreamed(rec.Type, rec.Text); s != "" {
			return one(withID(sdk.UpdateAgentThoughtText(s), id))
		}
	case session.TypeToolCall:
		return one(b.toolCall(rec, it.Call))
	case session.TypeProgress:
		return b.progress(rec, it.Call)
	case session.TypeToolResult:
		if r, ok := it.Result.(*card.TaskResult); ok && replay {
			return append(b.replayChild(r, rec.CallID), b.toolResult(rec, it))
		}
		return one(b.toolResult(rec, it))
	case session.TypePlan:
		return one(planUpdate(rec.Plan))
	case session.TypeCompaction, session.TypeInstructions, session.TypeRestore, session.TypeHook:
		return b.contextCard(rec, it)
	case session.TypeModel:
		// A model dsh changed to on its own (a fallback) says why, as the
		// terminal and the web page do; the picker shows the model itself.
		if rec.Text != "" {
			id := b.messageID(session.TypeReply)
			b.completed(session.TypeReply)
			return one(withID(sdk.UpdateAgentMessageText(rec.Text), id))
		}
	case session.TypeDecision:
		// Another client's answer (the web page, a chat) is said where it
		// happened, as the terminal and the web page say it; the editor's
		// own shows in its permission dialog.
		if rec.From != "" && rec.From != clientName {
			id := b.messageID(session.TypeReply)
			b.completed(session.TypeReply)
			return one(withID(sdk.UpdateAgentMessageText(view.DecisionNote(rec)), id))
		}
	case session.TypeHeader, session.TypeTurnEnd, session.TypeMode, session.TypeAllow, session.TypeDamaged, session.TypeCheckpoint, session.TypeTitle:
	}
	return nil
}

// clientName is how the log names this consumer in a decision record.
const clientName = "editor"

// contextCard shows what dsh added to the model's context (a compaction's
// summary, a nested AGENTS.md) as a finished call, where it happened.
func (b *bridge) contextCard(rec session.Record, it view.Item) []sdk.SessionUpdate {
	b.context++
	id := fmt.Sprintf("dsh-%s-%d", rec.Type, b.context)
	v := b.viewCall(id, nil, it.Call)
	call := sdk.SessionUpdate{ToolCall: &sdk.SessionUpdateToolCall{ToolCallId: sdk.ToolCallId(id), Title: v.title,
		Kind: v.kind, Status: sdk.ToolCallStatusPending, Content: v.content, Locations: v.locations, RawInput: v.rawInput}}
	if rec.Hook != nil {
		// A hook's run: its record for clients that show hooks their own way
		// (the call it ran for, its event, decision and exit code).
		call.ToolCall.Meta = map[string]any{"dsh": map[string]any{"hook": rec.Hook}}
	}
	status := sdk.ToolCallStatusCompleted
	u := &sdk.SessionToolCallUpdate{ToolCallId: sdk.ToolCallId(id), Status: &status}
	b.viewResult(u, v, nil, tool.Result{Content: []card.Content{card.Text(rec.Text)}}, it.Result)
	return []sdk.SessionUpdate{call, {ToolCallUpdate: u}}
}

// userMessage is a replayed prompt: its text, then its images.
func userMessage(rec session.Record) []sdk.SessionUpdate {
	var out []sdk.SessionUpdate
	text, chips := attach.View(rec.Text, rec.Content)
	for _, c := range chips {
		text += "\n\n· " + c
	}
	if text != "" {
		out = append(out, sdk.UpdateUserMessageText(text))
	}
	for _, c := range attach.Images(rec.Content) {
		out = append(out, sdk.UpdateUserMessage(sdk.ImageBlock(c.Data, c.MimeType)))
	}
	return out
}

func one(u sdk.SessionUpdate) []sdk.SessionUpdate { return []sdk.SessionUpdate{u} }

// delta returns the update for a fragment the model is streaming and remembers it.
func (b *bridge) delta(d provider.Delta) (sdk.SessionUpdate, bool) {
	if d.Text == "" {
		return sdk.SessionUpdate{}, false
	}
	switch d.Type {
	case provider.DeltaText:
		b.streamed[session.TypeAssistant] += d.Text
		return withID(sdk.UpdateAgentMessageText(d.Text), b.messageID(session.TypeAssistant)), true
	case provider.DeltaThinking:
		b.streamed[session.TypeThinking] += d.Text
		return withID(sdk.UpdateAgentThoughtText(d.Text), b.messageID(session.TypeThinking)), true
	}
	return sdk.SessionUpdate{}, false
}

// forgetStreamed drops streamed text no record completed (a broken stream).
func (b *bridge) forgetStreamed() { clear(b.streamed) }

// unstreamed returns the part of a complete text block not yet sent as deltas.
func (b *bridge) unstreamed(t session.RecordType, text string) string {
	sent := b.streamed[t]
	switch {
	case sent == "":
		return text
	case strings.HasPrefix(sent, text):
		b.streamed[t] = sent[len(text):]
		return ""
	case strings.HasPrefix(text, sent):
		delete(b.streamed, t)
		return text[len(sent):]
	}
	// The stream said something else than the record: the record wins.
	delete(b.streamed, t)
	return text
}

// callView is a call card in ACP terms; a tool call, a permission request and
// the final update of a call are all built from it.
type callView struct {
	id        string
	kind      sdk.ToolKind
	title     string
	rawInput  json.RawMessage
	content   []sdk.ToolCallContent
	locations []sdk.ToolCallLocation
	meta      map[string]any
	// terminal calls stream their output; head is their content before it.
	terminal bool
	head     []sdk.ToolCallContent
}

// viewCall translates a call card. This and viewResult are the bridge's switch on
// the card kind; nothing here knows a tool's name.
func (b *bridge) viewCall(id string, args []byte, c card.Call) callView {
	v := callView{id: id}
	if b.replaying && len(args) > 0 {
		// A logged call's arguments were checked as they were read (valid
		// JSON, stricter than json.Valid's): a replay sends tens of thousands.
		v.rawInput = json.RawMessage(args)
	} else {
		v.rawInput = rawInput(args)
	}
	if c == nil { // presenters always return a card; a nil one shows as a bare call
		c = &card.GenericCall{Title: "Tool call"}
	}
	switch c := c.(type) {
	case *card.GenericCall:
		v.kind = toolKind(c.ToolKind)
		v.title = c.Title
		v.content = contentBlocks(c.Content)
		v.locations = b.locations(c.Locations)
	case *card.TerminalCall:
		v.kind = sdk.ToolKindExecute
		v.title = c.Title
		v.terminal = true
		if c.Description != "" {
			v.head = []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(c.Description))}
		}
		v.content = v.head
		if b.termMeta {
			cwd := b.cwd
			if c.Cwd != "" {
				cwd = b.abs(c.Cwd)
			}
			v.content = append(append([]sdk.ToolCallContent(nil), v.head...), sdk.ToolTerminalRef(id))
			v.meta = map[string]any{"terminal_info": map[string]any{"terminal_id": id, "cwd": cwd}}
		}
	case *card.DiffCall:
		v.kind = sdk.ToolKindEdit
		v.title = c.Title
		v.content = b.diffs(c.Diffs)
		v.locations = b.locations(c.Locations)
		if len(v.locations) == 0 {
			v.locations = b.diffLocations(c.Diffs)
		}
	case *card.PlanCall:
		v.kind = sdk.ToolKindSwitchMode
		v.title = c.Title
		v.content = []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(planText(c.Plan, c.Files, c.Steps)))}
		for _, f := range c.Files {
			v.locations = append(v.locations, sdk.ToolCallLocation{Path: b.abs(f)})
		}
	case *card.QuestionCall:
		v.kind = sdk.ToolKindThink
		v.title = c.Question
		v.content = []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(questionText(c)))}
	case *card.TaskCall:
		v.kind = sdk.ToolKindThink
		v.title = c.Agent + ": " + c.Title
		v.content = []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(c.Prompt))}
	}
	return v
}

// toolCall is the tool_call update announcing a call: pending until it runs.
func (b *bridge) toolCall(rec session.Record, c card.Call) sdk.SessionUpdate {
	v := b.viewCall(rec.CallID, rec.Args, c)
	b.running[rec.CallID] = &liveCall{view: v}
	if b.replaying {
		b.order = append(b.order, rec.CallID)
	}
	return sdk.SessionUpdate{ToolCall: &sdk.SessionUpdateToolCall{
		ToolCallId: sdk.ToolCallId(v.id),
		Title:      v.title,
		Kind:       v.kind,
		Status:     sdk.ToolCallStatusPending,
		Content:    v.content,
		Locations:  v.locations,
		RawInput:   v.rawInput,
		Meta:       v.meta,
	}}
}

// permissionCall is the toolCall of a permission request: the whole call card,
// so the user sees the diff or the command even if the client missed the call.
func (b *bridge) permissionCall(id string, args []byte, c card.Call) sdk.ToolCallUpdate {
	v := b.viewCall(id, args, c)
	return sdk.ToolCallUpdate{
		ToolCallId: sdk.ToolCallId(v.id),
		Title:      sdk.Ptr(v.title),
		Kind:       sdk.Ptr(v.kind),
		Status:     sdk.Ptr(sdk.ToolCallStatusPending),
		Content:    v.content,
		Locations:  v.locations,
		RawInput:   v.rawInput,
		Meta:       v.meta,
	}
}

// start marks a call as running; ok is false if it is unknown or already started.
func (b *bridge) start(id string) (sdk.SessionUpdate, bool) {
	lc, ok := b.running[id]
	if !ok || lc.started {
		return sdk.SessionUpdate{}, false
	}
	lc.started = true
	return sdk.UpdateToolCall(sdk.ToolCallId(id), sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress)), true
}

// progress turns a chunk of a running command's output into a terminal_output
// update, or, for a client without terminal meta, notes it for the next refresh
// of the console block (see refresh). Other cards show no live output.
func (b *bridge) progress(rec session.Record, c card.Call) []sdk.SessionUpdate {
	lc, ok := b.running[rec.CallID]
	if !ok || !lc.view.terminal || rec.Chunk == "" {
		return nil
	}
	if lc.over || lc.out.Len()+len(rec.Chunk) > liveOutputCap {
		lc.over = true
	} else {
		lc.out.WriteString(rec.Chunk)
	}
	var out []sdk.SessionUpdate
	if u, ok := b.start(rec.CallID); ok {
		out = append(out, u)
	}
	if b.termMeta {
		u := sdk.UpdateToolCall(sdk.ToolCallId(rec.CallID))
		u.ToolCallUpdate.Meta = map[string]any{"terminal_output": map[string]any{"terminal_id": rec.CallID, "data": rec.Chunk}}
		out = append(out, u)
	}
	return out
}

// refresh is the fallback console block of a running command's output so far.
func (b *bridge) refresh(id string) (sdk.SessionUpdate, bool) {
	lc, ok := b.running[id]
	if !ok || b.termMeta || !lc.view.terminal || lc.out.Len() == 0 {
		return sdk.SessionUpdate{}, false
	}
	out := lc.out.String()
	if len(out) > fallbackTail {
		cut := len(out) - fallbackTail
		for cut < len(out) && out[cut]&0xC0 == 0x80 { // do not split a rune
			cut++
		}
		out = "…\n" + out[cut:]
	}
	content := append(append([]sdk.ToolCallContent(nil), lc.view.head...), sdk.ToolContent(sdk.TextBlock(fence(out, "console"))))
	return sdk.UpdateToolCall(sdk.ToolCallId(id), sdk.WithUpdateContent(content)), true
}

// toolResult is the final update of a call: completed or failed, with the result
// card's content.
func (b *bridge) toolResult(rec session.Record, it view.Item) sdk.SessionUpdate {
	res := tool.Result{IsError: true}
	if rec.Result != nil {
		res = *rec.Result
	}
	var call callView
	lc, live := b.running[rec.CallID]
	if live {
		call = lc.view
		delete(b.running, rec.CallID)
	} else {
		call = b.viewCall(rec.CallID, nil, it.Call)
	}
	status := sdk.ToolCallStatusCompleted
	if res.IsError {
		status = sdk.ToolCallStatusFailed
	}
	u := &sdk.SessionToolCallUpdate{ToolCallId: sdk.ToolCallId(rec.CallID), Status: &status}
	b.viewResult(u, call, lc, res, it.Result)
	if call.terminal && b.termMeta {
		if u.Meta == nil {
			u.Meta = map[string]any{}
		}
		if _, ok := u.Meta["terminal_exit"]; !ok {
			// The command never ran or was cut short: close the terminal anyway.
			u.Meta["terminal_exit"] = map[string]any{"terminal_id": rec.CallID, "exit_code": nil, "signal": nil}
		}
	}
	return sdk.SessionUpdate{ToolCallUpdate: u}
}

// viewResult fills the final update from the result card (nil: the raw content).
func (b *bridge) viewResult(u *sdk.SessionToolCallUpdate, call callView, lc *liveCall, res tool.Result, r card.Result) {
	streamed := ""
	if lc != nil && !lc.over {
		streamed = lc.out.String()
	}
	switch r := r.(type) {
	case nil:
		content := contentBlocks(res.Content)
		if call.terminal && streamed != "" {
			// A command cut short keeps what it printed in front of the reason.
			var shown sdk.ToolCallContent
			if b.termMeta {
				shown = sdk.ToolTerminalRef(call.id)
			} else {
				shown = sdk.ToolContent(sdk.TextBlock(fence(streamed, "console")))
			}
			content = append(append(append([]sdk.ToolCallContent(nil), call.head...), shown), content...)
		}
		u.Content = content
	case *card.GenericResult:
		setTitle(u, r.Title)
		u.Content = contentBlocks(r.Content)
	case *card.TerminalResult:
		setTitle(u, r.Title)
		note := exitNote(r)
		if b.termMeta && call.terminal {
			meta := map[string]any{"terminal_exit": map[string]any{
				"terminal_id": call.id, "exit_code": r.ExitCode, "signal": nullable(r.Signal)}}
			if rest, ok := unsent(r.Output, streamed, lc); ok && rest != "" {
				meta["terminal_output"] = map[string]any{"terminal_id": call.id, "data": rest}
			}
			u.Meta = meta
			if r.TimedOut {
				u.Content = append(append([]sdk.ToolCallContent(nil), call.content...), sdk.ToolContent(sdk.TextBlock(note)))
			}
			return
		}
		content := append([]sdk.ToolCallContent(nil), call.head...)
		if r.Output != "" {
			content = append(content, sdk.ToolContent(sdk.TextBlock(fence(r.Output, "console"))))
		}
		if note != "" {
			content = append(content, sdk.ToolContent(sdk.TextBlock(note)))
		}
		u.Content = content
	case *card.ReadResult:
		setTitle(u, r.Title)
		u.Content = []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(readText(r)))}
		line := r.Offset
		if len(r.Lines) > 0 {
			line = r.Lines[0].Number
		}
		u.Locations = []sdk.ToolCallLocation{{Path: b.abs(r.Path), Line: sdk.Ptr(line)}}
		u.Meta = cardMeta(r, b.replaying)
	case *card.DiffResult:
		setTitle(u, r.Title)
		u.Content = b.diffs(r.Diffs)
		u.Locations = b.locations(r.Locations)
		if len(u.Locations) == 0 {
			u.Locations = b.diffLocations(r.Diffs)
		}
		if len(r.Diagnostics) > 0 {
			u.Content = append(u.Content, sdk.ToolContent(sdk.TextBlock(diagnosticsText(r.Diagnostics))))
			if raw, err := r.MarshalJSON(); err == nil {
				u.Meta = map[string]any{"dsh": map[string]any{"card": json.RawMessage(raw)}}
			}
		}
	case *card.SearchResult:
		setTitle(u, r.Title)
		u.Content = []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(searchText(r)))}
		u.Locations = searchLocations(r)
		u.Meta = cardMeta(r, b.replaying)
	case *card.PlanResult:
		// The update's content replaces the call's: the plan, then the answer.
		setTitle(u, r.Title)
		u.Content = []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(planText(r.Plan, r.Files, r.Steps))),
			sdk.ToolContent(sdk.TextBlock("→ " + r.Outcome()))}
	case *card.QuestionResult:
		setTitle(u, r.Title)
		u.Content = []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(r.Question)),
			sdk.ToolContent(sdk.TextBlock("→ " + r.Outcome()))}
	case *card.TaskResult:
		setTitle(u, r.Agent+": "+r.Title)
		u.Content = b.taskSummary(r)
		delete(b.children, r.Session) // its calls are all in
		u.Meta = map[string]any{"dsh": map[string]any{"childSessionId": r.Session}}
	}
}

// cardMeta is the _meta of a read or search result: the card, for clients
// that can do more with it. It is encoded as the line carries it, so the line
// takes it as it is (a card is most of its update); nil if it cannot be
// encoded. A replayed card is encoded straight onto its line: its text was
// decoded from the log, so it is UTF-8, which is all the hand encoding needs.
func cardMeta(r wireResult, replay bool) map[string]any {
	if replay {
		return map[string]any{"dsh": map[string]any{"card": wireCard{r}}}
	}
	if w, ok := r.HTMLSafeJSON(); ok {
		return map[string]any{"dsh": map[string]any{"card": rpcfix.WireJSON(w)}}
	}
	if raw, err := r.MarshalJSON(); err == nil {
		return map[string]any{"dsh": map[string]any{"card": json.RawMessage(raw)}}
	}
	return nil
}

// wireResult is a card that is encoded by hand for the line.
type wireResult interface {
	HTMLSafeJSON() ([]byte, bool)
	AppendHTMLSafeJSON(dst []byte) ([]byte, bool)
	MarshalJSON() ([]byte, error)
}

// wireCard writes a card onto the line where its update's _meta holds it.
type wireCard struct{ r wireResult }

// AppendWire appends the card as WireJSON would hold it.
func (w wireCard) AppendWire(dst []byte) ([]byte, bool) { return w.r.AppendHTMLSafeJSON(dst) }

// MarshalJSON is the card for the general way, which escapes it as the line
// wants it.
func (w wireCard) MarshalJSON() ([]byte, error) { return w.r.MarshalJSON() }

// planText is a plan card as Markdown: the plan, the files it touches, its steps.
func planText(plan string, files, steps []string) string {
	var b strings.Builder
	b.WriteString(plan)
	if len(files) > 0 {
		b.WriteString("\n\nFiles:")
		for _, f := range files {
			b.WriteString(" `" + strings.ReplaceAll(f, "`", "'") + "`")
		}
	}
	if len(steps) > 0 {
		b.WriteString("\n\nSteps:")
		for i, s := range steps {
			b.WriteString("\n" + itoa(i+1) + ". " + s)
		}
	}
	return b.String()
}

// questionText is a question card as text. ACP's permission request, through
// which the client is asked, takes no free text: the card says so.
func questionText(c *card.QuestionCall) string {
	var b strings.Builder
	b.WriteString(c.Question)
	for _, ch := range c.Choices {
		b.WriteString("\n- " + ch.Label)
		if ch.Description != "" {
			b.WriteString(": " + ch.Description)
		}
	}
	if c.FreeText {
		b.WriteString("\n\n" + msgNoFreeText)
	}
	return b.String()
}

// msgNoFreeText is what a question's card says over ACP.
const msgNoFreeText = "An answer in your own words cannot be given here: choose “" + optNoneName + "” and reply in your next message."

// maxSearchLocations bounds the locations a search result sends.
const maxSearchLocations = 200

// searchLocations are the matching lines of a search (the files of a file list),
// absolute, for the client to follow.
func searchLocations(r *card.SearchResult) []sdk.ToolCallLocation {
	// Sized, and the line numbers in one slice, before they are made: a
	// replay makes them for every search.
	n := len(r.Paths)
	for _, f := range r.Files {
		n += max(1, len(f.Matches))
	}
	n = min(n, maxSearchLocations)
	if n == 0 {
		return nil
	}
	out := make([]sdk.ToolCallLocation, 0, n)
	lines := make([]int, 0, n)
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(r.Dir, p)
	}
	for _, f := range r.Files {
		if len(out) >= maxSearchLocations {
			break
		}
		path := abs(f.Path) // once per file, not per match
		if len(f.Matches) == 0 {
			out = append(out, sdk.ToolCallLocation{Path: path})
		}
		for _, m := range f.Matches {
			if m.Ranges != nil && len(out) < maxSearchLocations {
				lines = append(lines, m.Line)
				out = append(out, sdk.ToolCallLocation{Path: path, Line: &lines[len(lines)-1]})
			}
		}
	}
	for _, p := range r.Paths {
		if len(out) < maxSearchLocations {
			out = append(out, sdk.ToolCallLocation{Path: abs(p)})
		}
	}
	return out
}

// searchText is a search result as a fenced block in ripgrep's own format:
// "path:line:text" for a match, "path-line-text" for context, "path:count" or
// one path per line, and a note of what is not shown. It is written fenced in
// one allocation: a replay writes one per search, of thousands of lines.
func searchText(r *card.SearchResult) string {
	if len(r.Files) == 0 && len(r.Paths) == 0 {
		return "No matches."
	}
	size, longest := 0, 0 // no run of backticks spans two pieces: a separator is between
	for _, f := range r.Files {
		size += len(f.Path) + 8
		longest = max(longest, backticks(f.Path))
		for _, m := range f.Matches {
			size += len(f.Path) + len(m.Text) + 10
			longest = max(longest, backticks(m.Text))
		}
	}
	for _, p := range r.Paths {
		size += len(p) + 1
		longest = max(longest, backticks(p))
	}
	fc := fenceFor(longest)
	var b strings.Builder
	b.Grow(size + 2*len(fc) + 2 + 40)
	b.WriteString(fc)
	var num []byte
	// Piece by piece, without a string per line: a result has thousands. Each
	// line starts with its newline, so the last has none, as fence wants it.
	n := func(i int) {
		num = strconv.AppendInt(num[:0], int64(i), 10)
		b.Write(num)
	}
	last := byte(0)
	for _, f := range r.Files {
		if len(f.Matches) == 0 {
			b.WriteByte('\n')
			b.WriteString(f.Path)
			b.WriteByte(':')
			n(f.Count)
			last = '0'
		}
		for _, m := range f.Matches {
			sep := byte('-')
			if m.Ranges != nil {
				sep = ':'
			}
			b.WriteByte('\n')
			b.WriteString(f.Path)
			b.WriteByte(sep)
			n(m.Line)
			b.WriteByte(sep)
			b.WriteString(m.Text)
			last = sep
			if m.Text != "" {
				last = m.Text[len(m.Text)-1]
			}
		}
	}
	for _, p := range r.Paths {
		if p == "" && b.Len() == len(fc) {
			last = 0 // the text is empty: it does not end with a newline
		} else if p == "" {
			last = '\n'
		} else {
			last = p[len(p)-1]
		}
		b.WriteByte('\n')
		b.WriteString(p)
	}
	if last != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString(fc)
	if r.Truncated {
		b.WriteString("\n(")
		n(r.Total)
		b.WriteString(" in all; not all are shown.)")
	}
	return b.String()
}

// abandon fails a call whose result will never come: a loaded log that ends
// while the call ran.
func (b *bridge) abandon(id string) (sdk.SessionUpdate, bool) {
	lc, ok := b.running[id]
	if !ok {
		return sdk.SessionUpdate{}, false
	}
	delete(b.running, id)
	u := &sdk.SessionToolCallUpdate{ToolCallId: sdk.ToolCallId(id), Status: sdk.Ptr(sdk.ToolCallStatusFailed),
		Content: []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(msgInterrupted))}}
	if lc.view.terminal && b.termMeta {
		u.Meta = map[string]any{"terminal_exit": map[string]any{"terminal_id": id, "exit_code": nil, "signal": nil}}
	}
	return sdk.SessionUpdate{ToolCallUpdate: u}, true
}

// abandonAll abandons every call still running, in the order they were made.
func (b *bridge) abandonAll() []sdk.SessionUpdate {
	var out []sdk.SessionUpdate
	for _, id := range b.order {
		if u, ok := b.abandon(id); ok {
			out = append(out, u)
		}
	}
	b.order = nil
	return out
}

// msgInterrupted is shown for a call the log has no result for.
const msgInterrupted = "Interrupted: dsh stopped before this call finished."

// unsent is the part of a finished command's output not streamed yet. ok is
// false when what was streamed is not a prefix of it (the live view coalesced or
// hit its cap): the client's terminal then keeps what it was shown.
func unsent(output, streamed string, lc *liveCall) (string, bool) {
	if lc != nil && lc.over {
		return "", false
	}
	rest, ok := strings.CutPrefix(output, streamed)
	return rest, ok
}

// exitNote says how a command ended when it did not simply succeed, and what
// the sandbox refused.
func exitNote(r *card.TerminalResult) string {
	if r.Sandbox != nil && r.Sandbox.Refused != "" {
		return strings.TrimSpace(exitStatusNote(r) + " Refused by the sandbox: " + r.Sandbox.Refused)
	}
	return exitStatusNote(r)
}

func exitStatusNote(r *card.TerminalResult) string {
	switch {
	case r.TimedOut:
		return "Timed out."
	case r.ExitCode == nil && r.Signal != "":
		return "Killed by " + r.Signal + "."
	case r.ExitCode != nil && *r.ExitCode != 0:
		return "Exit code " + itoa(*r.ExitCode) + "."
	}
	return ""
}

// readText is a read window as a fenced code block tagged with its language; an
// empty window shows the card's text, which says why it is empty.
func readText(r *card.ReadResult) string {
	if len(r.Lines) == 0 {
		var b strings.Builder
		for _, c := range r.Content {
			b.WriteString(c.Text)
		}
		return b.String()
	}
	// fence(the lines joined), written in one allocation: a replay writes one
	// per read. No run of backticks spans two lines: a newline is between.
	size, longest := 0, 0
	for _, l := range r.Lines {
		size += len(l.Text) + 1
		longest = max(longest, backticks(l.Text))
	}
	fc := fenceFor(longest)
	var b strings.Builder
	b.Grow(size + 2*len(fc) + len(r.Lang) + 2)
	b.WriteString(fc)
	b.WriteString(r.Lang)
	for _, l := range r.Lines {
		b.WriteByte('\n')
		b.WriteString(l.Text)
	}
	end := r.Lines[len(r.Lines)-1].Text
	if end != "" && end[len(end)-1] != '\n' || end == "" && len(r.Lines) == 1 {
		b.WriteByte('\n')
	}
	b.WriteString(fc)
	return b.String()
}

func setTitle(u *sdk.SessionToolCallUpdate, title string) {
	if title != "" {
		u.Title = sdk.Ptr(title)
	}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// planUpdate is the plan a todo list shows as.
func planUpdate(entries []tool.PlanEntry) sdk.SessionUpdate {
	out := make([]sdk.PlanEntry, 0, len(entries))
	for _, e := range entries {
		out = append(out, sdk.PlanEntry{Content: e.Content, Status: planStatus(e.Status), Priority: planPriority(e.Priority)})
	}
	return sdk.UpdatePlan(out...)
}

func planStatus(s string) sdk.PlanEntryStatus {
	switch sdk.PlanEntryStatus(s) {
	case sdk.PlanEntryStatusInProgress:
		return sdk.PlanEntryStatusInProgress
	case sdk.PlanEntryStatusCompleted:
		return sdk.PlanEntryStatusCompleted
	case sdk.PlanEntryStatusPending:
	}
	return sdk.PlanEntryStatusPending
}

func planPriority(p string) sdk.PlanEntryPriority {
	switch sdk.PlanEntryPriority(p) {
	case sdk.PlanEntryPriorityHigh:
		return sdk.PlanEntryPriorityHigh
	case sdk.PlanEntryPriorityLow:
		return sdk.PlanEntryPriorityLow
	case sdk.PlanEntryPriorityMedium:
	}
	return sdk.PlanEntryPriorityMedium
}

// toolKind maps a card's kind to ACP's closed set; anything else is "other".
func toolKind(k card.ToolKind) sdk.ToolKind {
	switch t := sdk.ToolKind(k); t {
	case sdk.ToolKindRead, sdk.ToolKindEdit, sdk.ToolKindDelete, sdk.ToolKindMove, sdk.ToolKindSearch,
		sdk.ToolKindExecute, sdk.ToolKindThink, sdk.ToolKindFetch, sdk.ToolKindSwitchMode, sdk.ToolKindOther:
		return t
	}
	return sdk.ToolKindOther
}

// rawInput is a call's arguments as sent; every call has them, "{}" at least.
func rawInput(args []byte) json.RawMessage {
	if len(args) == 0 || !json.Valid(args) {
		return json.RawMessage("{}")
	}
	return json.RawMessage(args)
}

// contentBlocks turns card content into tool-call content.
func contentBlocks(cs []card.Content) []sdk.ToolCallContent {
	var out []sdk.ToolCallContent
	for _, c := range cs {
		switch {
		case c.Type == "image" && c.Data != "":
			out = append(out, sdk.ToolContent(sdk.ImageBlock(c.Data, c.MimeType)))
		case c.Text != "":
			out = append(out, sdk.ToolContent(sdk.TextBlock(c.Text)))
		}
	}
	return out
}

func (b *bridge) diffs(ds []card.FileDiff) []sdk.ToolCallContent {
	out := make([]sdk.ToolCallContent, 0, len(ds))
	for _, d := range ds {
		out = append(out, sdk.ToolCallContent{Diff: &sdk.ToolCallContentDiff{
			Type: "diff", Path: b.abs(d.Path), OldText: d.OldText, NewText: d.NewText}})
	}
	return out
}

// diffLocations are the places of the hunks that know their line.
func (b *bridge) diffLocations(ds []card.FileDiff) []sdk.ToolCallLocation {
	var out []sdk.ToolCallLocation
	for _, d := range ds {
		l := sdk.ToolCallLocation{Path: b.abs(d.Path)}
		if d.NewStart > 0 {
			l.Line = sdk.Ptr(d.NewStart)
		}
		out = append(out, l)
	}
	return out
}

func (b *bridge) locations(ls []card.Location) []sdk.ToolCallLocation {
	if len(ls) == 0 {
		return nil
	}
	out := make([]sdk.ToolCallLocation, len(ls))
	for i, l := range ls {
		out[i] = sdk.ToolCallLocation{Path: b.abs(l.Path)}
		if l.Line != nil {
			out[i].Line = sdk.Ptr(*l.Line)
		}
	}
	return out
}

// abs makes a card path absolute: ACP clients want absolute paths, cards carry
// them as the model gave them.
func (b *bridge) abs(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(b.cwd, p)
}
