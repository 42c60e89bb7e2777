// Package control lets many clients share one live session: each live host
// session (chat, dsh run, dsh acp) listens on a unix socket in the session
// directory (live/ID.sock, 0600 in a 0700 directory, only for the same user)
// and speaks JSON lines over it. The server streams the session's events —
// a hello, the records logged so far, what waits for an answer, then every
// event as it happens — and answers each request of the client: submit
// input, answer a permission request or a question, cancel, set the mode or
// the model, rename. Dial is the client: a chat.Session and an events
// channel, so the chat of another process (dsh attach) and the web page
// drive the session through the same door as its own consumer.
package control

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// Bounds of the protocol's lines: a request (input with attached images
// included) and a message of the server (a record with a big result).
const (
	MaxRequest = 8 << 20
	MaxMessage = 64 << 20
)

// MsgType says what a Message of the server holds.
type MsgType string

// The messages of the server, in the order a connection sees them: hello,
// the records so far (event messages), caught_up, then events, ended and
// replies as they come.
const (
	MsgHello    MsgType = "hello"     // Hello
	MsgEvent    MsgType = "event"     // Event
	MsgCaughtUp MsgType = "caught_up" // the records logged before the client joined are sent
	MsgEnded    MsgType = "ended"     // ID: a permission request or question no longer waits
	MsgReply    MsgType = "reply"     // ID: the request's; OK or Error, and what it returns
)

// Message is one line the server sends.
type Message struct {
	Type MsgType `json:"type"`
	// ID is, in a reply, the request's; in ended, the permission's or
	// question's (Permission.ID, Question.ID).
	ID    string `json:"id,omitempty"`
	Hello *Hello `json:"hello,omitempty"`
	Event *Event `json:"event,omitempty"`
	// A reply: OK, else Error in the user's words; Answer is a submit's,
	// Points and Models what those requests asked for.
	OK     bool         `json:"ok,omitzero"`
	Error  string       `json:"error,omitempty"`
	Answer *host.Answer `json:"answer,omitempty"`
	Points []host.Point `json:"points,omitempty"`
	Models []host.Model `json:"models,omitempty"`
}

// Hello is the first message: the session as it is when the client joins.
type Hello struct {
	Session string `json:"session"`
	Root    string `json:"root"`
	Log     string `json:"log"` // the log's path (the records so far follow anyway)
	Title   string `json:"title,omitempty"`
	// Client is the consumer of the process that runs the session
	// ("terminal", "editor").
	Client   string      `json:"client,omitempty"`
	Status   host.Status `json:"status"`
	Commands []Command   `json:"commands"`
}

// Command is a slash command of the session's table.
type Command struct {
	Name        string     `json:"name"`
	Description string     `json:"description,omitempty"`
	ArgHint     string     `json:"argHint,omitempty"`
	Where       host.Where `json:"where"`
	Custom      bool       `json:"custom,omitzero"` // a user's or a project's prompt template
	MCP         bool       `json:"mcp,omitzero"`    // an MCP server's prompt
	// Answers says the host answers it at once, without a turn
	// (host.Session.Answers).
	Answers bool `json:"answers,omitzero"`
}

// EventKind is a host.Kind as the protocol spells it.
type EventKind string

// The event kinds, one for each host.Kind.
const (
	EventRecord       EventKind = "record"
	EventDelta        EventKind = "delta"
	EventModelRequest EventKind = "model_request"
	EventCallStarted  EventKind = "call_started"
	EventPermission   EventKind = "permission"
	EventUsage        EventKind = "usage"
	EventStatus       EventKind = "status"
	EventQuestion     EventKind = "question"
	EventChild        EventKind = "child"
	EventNotice       EventKind = "notice"
)

// Event is a host.Event on the wire.
type Event struct {
	Kind EventKind `json:"kind"`
	// Record is the record as the log holds it.
	Record     jsontext.Value  `json:"record,omitzero"`
	Delta      *provider.Delta `json:"delta,omitempty"`
	CallID     string          `json:"callId,omitempty"`
	Permission *Permission     `json:"permission,omitempty"`
	Question   *Question       `json:"question,omitempty"`
	Usage      *session.Usage  `json:"usage,omitempty"`
	Status     *host.Status    `json:"status,omitempty"`
	Child      *Child          `json:"child,omitempty"`
	Text       string          `json:"text,omitempty"`
}

// Permission is a pending permission request; an answer names its ID.
type Permission struct {
	ID         string          `json:"id"`
	CallID     string          `json:"callId"`
	Tool       string          `json:"tool"`
	Args       jsontext.Value  `json:"args,omitzero"`
	Card       jsontext.Value  `json:"card"` // the call card (card's JSON)
	Permission tool.Permission `json:"permission"`
	Approval   tool.Approval   `json:"approval"`
	Unlogged   bool            `json:"unlogged,omitzero"`
	Parent     string          `json:"parent,omitempty"`
	Child      string          `json:"child,omitempty"`
}

// Question is a pending question of a tool; an answer names its ID.
type Question struct {
	ID       string         `json:"id"`
	CallID   string         `json:"callId"`
	Tool     string         `json:"tool"`
	Card     jsontext.Value `json:"card"`
	Question tool.Question  `json:"question"`
	Parent   string         `json:"parent,omitempty"`
	Child    string         `json:"child,omitempty"`
}

// Child is an event of a subagent's session.
type Child struct {
	Call    string `json:"call"`
	Session string `json:"session"`
	Agent   string `json:"agent,omitempty"`
	Event   *Event `json:"event"`
}

// Op is what a Request asks.
type Op string

// The requests.
const (
	OpSubmit     Op = "submit"     // Input: host.Session.Submit; the reply comes when it is done (a turn's end)
	OpPermission Op = "permission" // Waiting, Decision: answer a permission request
	OpQuestion   Op = "question"   // Waiting, Answer: answer a question
	OpCancel     Op = "cancel"     // cancel the running turn
	OpMode       Op = "mode"       // Mode
	OpModel      Op = "model"      // Model, Thinking
	OpRename     Op = "rename"     // Title
	OpPoints     Op = "points"     // the changes /rewind offers
	OpModels     Op = "models"     // the models /model offers
)

var ops = []Op{OpSubmit, OpPermission, OpQuestion, OpCancel, OpMode, OpModel, OpRename, OpPoints, OpModels}

// The decisions of a permission answer, as the log spells them.
const (
	DecisionAllow  = session.DecisionAllow
	DecisionAlways = session.DecisionAlways
	DecisionReject = session.DecisionReject
)

// Request is one line a client sends.
type Request struct {
	ID string `json:"id"` // the client's, echoed by the reply
	Op Op     `json:"op"`
	// From names the client ("web", "attach" …): the log records it with
	// the answers it gives.
	From  string `json:"from,omitempty"`
	Input *Input `json:"input,omitempty"`
	// Waiting is the permission's or question's ID.
	Waiting  string       `json:"waiting,omitempty"`
	Decision string       `json:"decision,omitempty"`
	Answer   *card.Answer `json:"answer,omitempty"`
	Mode     string       `json:"mode,omitempty"`
	Model    string       `json:"model,omitempty"`
	Thinking string       `json:"thinking,omitempty"`
	Title    string       `json:"title,omitempty"`
}

// Input is a host.Input on the wire.
type Input struct {
	Text    string         `json:"text"`
	Content []card.Content `json:"content,omitempty"`
	Where   host.Where     `json:"where,omitzero"` // 0: the terminal's commands
	Steer   bool           `json:"steer,omitzero"`
}

func (in Input) host() host.Input {
	w := in.Where
	if w == 0 {
		w = host.Terminal
	}
	return host.Input{Text: in.Text, Content: in.Content, Where: w, Steer: in.Steer}
}

// Limits of a request's names.
const (
	maxID   = 64
	maxFrom = 32
	// MaxTitle is the longest title a session may have.
	MaxTitle = host.MaxTitle
)

// DecodeRequest reads one request line strictly: unknown members, an unknown
// op, a missing or long id or a from that is not a short name are errors,
// never a panic.
func DecodeRequest(line []byte) (Request, error) {
	var r Request
	if err := json.Unmarshal(line, &r, json.RejectUnknownMembers(true)); err != nil {
		return Request{}, fmt.Errorf("not a request: %w", err)
	}
	if r.ID == "" || len(r.ID) > maxID {
		return r, errors.New("a request needs an id of at most 64 bytes")
	}
	if !validOp(r.Op) {
		return r, fmt.Errorf("unknown request %q", r.Op)
	}
	if !validFrom(r.From) {
		return r, errors.New(`"from" must be a short name of letters, digits and dashes`)
	}
	switch r.Op {
	case OpSubmit:
		if r.Input == nil {
			return r, errors.New("submit needs an input")
		}
	case OpPermission:
		if r.Waiting == "" || (r.Decision != DecisionAllow && r.Decision != DecisionAlways && r.Decision != DecisionReject) {
			return r, errors.New("a permission answer needs the request's id and a decision (allow, always or reject)")
		}
	case OpQuestion:
		if r.Waiting == "" || r.Answer == nil {
			return r, errors.New("a question's answer needs the question's id and an answer")
		}
	case OpMode:
		if _, err := host.ParseMode(r.Mode); err != nil {
			return r, err
		}
	case OpModel:
		if r.Model == "" {
			return r, errors.New("a model request needs a model")
		}
	case OpRename:
		if err := CheckTitle(r.Title); err != nil {
			return r, err
		}
	case OpCancel, OpPoints, OpModels:
	}
	return r, nil
}

// CheckTitle says whether title can name a session (host.CheckTitle).
func CheckTitle(title string) error { return host.CheckTitle(title) }

func validOp(op Op) bool {
	for _, o := range ops {
		if o == op {
			return true
		}
	}
	return false
}

func validFrom(s string) bool {
	if len(s) > maxFrom {
		return false
	}
	for _, c := range []byte(s) {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// recordOpts are those the log writes records with: what a record holds
// travels as it is (invalid UTF-8 in a command's output included).
var recordOpts = json.JoinOptions(json.Deterministic(true), jsontext.AllowInvalidUTF8(true))

// wireEvent is e as the protocol sends it; id names a permission or a
// question. ok is false for an event that cannot be encoded.
func wireEvent(e host.Event, id string) (*Event, error) {
	out := &Event{}
	switch e.Kind {
	case host.KindRecord:
		b, err := json.Marshal(e.Record, recordOpts)
		if err != nil {
			return nil, fmt.Errorf("encode a %s record: %w", e.Record.Type, err)
		}
		out.Kind, out.Record = EventRecord, b
	case host.KindDelta:
		d := e.Delta
		out.Kind, out.Delta = EventDelta, &d
	case host.KindModelRequest:
		out.Kind = EventModelRequest
	case host.KindCallStarted:
		out.Kind, out.CallID = EventCallStarted, e.CallID
	case host.KindPermission:
		p := e.Permission
		c, err := json.Marshal(p.Request.Card)
		if err != nil {
			return nil, fmt.Errorf("encode a permission's card: %w", err)
		}
		out.Kind = EventPermission
		out.Permission = &Permission{ID: id, CallID: p.Request.CallID, Tool: p.Request.Tool, Args: jsontext.Value(p.Request.Args),
			Card: c, Permission: p.Request.Permission, Approval: p.Request.Approval, Unlogged: p.Unlogged, Parent: p.Parent, Child: p.Child}
	case host.KindUsage:
		u := e.Usage
		out.Kind, out.Usage = EventUsage, &u
	case host.KindStatus:
		st := e.Status
		out.Kind, out.Status = EventStatus, &st
	case host.KindQuestion:
		q := e.Question
		c, err := json.Marshal(q.Request.Card)
		if err != nil {
			return nil, fmt.Errorf("encode a question's card: %w", err)
		}
		out.Kind = EventQuestion
		out.Question = &Question{ID: id, CallID: q.Request.CallID, Tool: q.Request.Tool, Card: c,
			Question: q.Request.Question, Parent: q.Parent, Child: q.Child}
	case host.KindChild:
		inner, err := wireEvent(e.Child.Event, "")
		if err != nil {
			return nil, err
		}
		out.Kind = EventChild
		out.Child = &Child{Call: e.Child.Call, Session: e.Child.Session, Agent: e.Child.Agent, Event: inner}
	case host.KindNotice:
		out.Kind, out.Text = EventNotice, e.Text
	default:
		return nil, fmt.Errorf("unknown event kind %d", e.Kind)
	}
	return out, nil
}

// DecodeRecord reads a record as an event carries it.
func DecodeRecord(b jsontext.Value) (session.Record, error) {
	var r session.Record
	if err := json.Unmarshal(b, &r, jsontext.AllowInvalidUTF8(true)); err != nil {
		return r, fmt.Errorf("a record that does not decode: %w", err)
	}
	return r, nil
}

// hostEvent is a wire event back as a host.Event; a permission or question
// is made by mk, which ties it to its ID.
func hostEvent(e *Event, mk func(*Event) (host.Event, error)) (host.Event, error) {
	switch e.Kind {
	case EventRecord:
		r, err := DecodeRecord(e.Record)
		return host.Event{Kind: host.KindRecord, Record: r}, err
	case EventDelta:
		if e.Delta == nil {
			return host.Event{}, errors.New("a delta event without its delta")
		}
		return host.Event{Kind: host.KindDelta, Delta: *e.Delta}, nil
	case EventModelRequest:
		return host.Event{Kind: host.KindModelRequest}, nil
	case EventCallStarted:
		return host.Event{Kind: host.KindCallStarted, CallID: e.CallID}, nil
	case EventUsage:
		if e.Usage == nil {
			return host.Event{}, errors.New("a usage event without its usage")
		}
		return host.Event{Kind: host.KindUsage, Usage: *e.Usage}, nil
	case EventStatus:
		if e.Status == nil {
			return host.Event{}, errors.New("a status event without its status")
		}
		return host.Event{Kind: host.KindStatus, Status: *e.Status}, nil
	case EventPermission, EventQuestion:
		return mk(e)
	case EventChild:
		if e.Child == nil || e.Child.Event == nil {
			return host.Event{}, errors.New("a child event without its event")
		}
		inner, err := hostEvent(e.Child.Event, mk)
		if err != nil {
			return host.Event{}, err
		}
		return host.Event{Kind: host.KindChild, Child: &host.Child{Call: e.Child.Call, Session: e.Child.Session, Agent: e.Child.Agent, Event: inner}}, nil
	case EventNotice:
		return host.Event{Kind: host.KindNotice, Text: e.Text}, nil
	}
	return host.Event{}, fmt.Errorf("unknown event kind %q", e.Kind)
}

// permissionRequest is a wire permission as the host's request.
func permissionRequest(p *Permission) (host.PermissionRequest, error) {
	c, err := card.DecodeCall(p.Card)
	if err != nil {
		return host.PermissionRequest{}, fmt.Errorf("permission %s: %w", p.ID, err)
	}
	return host.PermissionRequest{CallID: p.CallID, Tool: p.Tool, Args: []byte(p.Args), Card: c, Permission: p.Permission, Approval: p.Approval}, nil
}

// questionRequest is a wire question as the host's request.
func questionRequest(q *Question) (host.QuestionRequest, error) {
	c, err := card.DecodeCall(q.Card)
	if err != nil {
		return host.QuestionRequest{}, fmt.Errorf("question %s: %w", q.ID, err)
	}
	return host.QuestionRequest{CallID: q.CallID, Tool: q.Tool, Card: c, Question: q.Question}, nil
}

// decision is a wire decision as the host's.
func decision(s string) host.Decision {
	switch s {
	case DecisionAllow:
		return host.AllowOnce
	case DecisionAlways:
		return host.AllowAlways
	}
	return host.Reject
}

// decisionName is the host's decision as the wire spells it.
func decisionName(d host.Decision) string {
	switch d {
	case host.AllowOnce:
		return DecisionAllow
	case host.AllowAlways:
		return DecisionAlways
	case host.Reject:
	}
	return DecisionReject
}

// waitingID names the n-th permission or question a server saw.
func waitingID(n int) string { return "w" + strconv.Itoa(n) }
