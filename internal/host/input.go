package host

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/command"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// Input is what the user typed or attached, handed to the host as it was.
type Input struct {
	// Text is as typed: a slash command, @path and @SERVER:URI mentions
	// included, pastes as their placeholders (attach.Pastes).
	Text string
	// Content is what the consumer attached itself: paste blocks, images, an
	// editor's embedded files.
	Content []card.Content
	// Where is the consumer, whose commands apply (the terminal's or the
	// editor's).
	Where Where
	// Steer asks that a prompt sent while a turn runs reach the model at the
	// turn's next step instead of waiting for it to end (see steerTurn).
	Steer bool
}

// Answer is what came of an Input: a turn of the model, or a command's reply.
type Answer struct {
	// Turn says a turn ran, and Stop how it ended.
	Turn bool
	Stop StopReason
	// Command is the built-in command that ran ("" for a turn); Reply is its
	// answer, which is logged with it (but for a consumer's action).
	Command string
	Reply
}

// ErrUnknownCommand is Submit's error for a slash command the session does
// not have; nothing is logged or sent.
var ErrUnknownCommand = errors.New("unknown command")

// Submit is the one door for what the user types: it parses a slash command
// against the session's table (Commands) and runs it — a built-in one in the
// host, a custom command, a skill or an MCP server's prompt expanded into a
// turn — reads the files the text names as @path (inside the workspace,
// capped; images as images) and the MCP resources it names as @SERVER:URI,
// and runs the turn. The user record keeps the text as typed, its expansion
// beside it. What could not be attached is told as a KindNotice event before
// the turn starts.
func (s *Session) Submit(ctx context.Context, in Input) (Answer, error) {
	if cmd, ok := shellInput(in.Text); ok {
		return s.runShell(ctx, cmd, "", nil)
	}
	var content []card.Content
	modelText := in.Text
	if name, args, ok := command.Parse(in.Text); ok {
		var expansion, run string
		if b, ok := s.findBuiltin(name); ok && b.Where&in.Where != 0 {
			r, err := s.runBuiltin(ctx, b, strings.TrimSpace(in.Text), args)
			if err != nil || r.Prompt == "" {
				return Answer{Command: name, Reply: r}, err
			}
			expansion, run = r.Prompt, r.Run
		} else if c, ok := command.Find(s.Commands(), name); !ok || c.Where&in.Where == 0 {
			return Answer{}, fmt.Errorf("%w /%s (/help lists them)", ErrUnknownCommand, name)
		} else if !c.MCP() {
			return s.submitCommand(ctx, in, c, args)
		} else {
			text, _, err := s.ExpandPrompt(ctx, name, args)
			if err != nil {
				return Answer{}, fmt.Errorf("/%s: %w", name, err)
			}
			expansion = text
		}
		content = append(content, card.Expansion("/"+name, expansion))
		modelText = expansion
		if run != "" {
			return s.runShell(ctx, run, in.Text, content)
		}
	}
	// Text alone steers: a command's expansion, an attachment or an @mention
	// (read when its turn starts) waits for its turn.
	if in.Steer && len(content) == 0 && len(in.Content) == 0 && !strings.Contains(in.Text, "@") {
		if ans, ok, err := s.steerTurn(ctx, in.Text); ok {
			return ans, err
		}
	}
	release, err := s.awaitTurn(ctx)
	if errors.Is(err, errDropped) {
		return Answer{Turn: true, Stop: StopCancelled}, nil
	}
	if err != nil {
		return Answer{}, err
	}
	defer release()
	content = append(content, in.Content...)
	files, skipped := s.attachFiles(modelText)
	for _, sk := range skipped {
		s.notice("not attached: " + sk)
	}
	stop, err := s.Prompt(ctx, in.Text, append(content, files...)...)
	return Answer{Turn: true, Stop: stop}, err
}

// shellInput is the command of an input that starts with "!": the user's own
// shell command, as in Claude Code's bash mode.
func shellInput(text string) (string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimLeft(text, " \t"), "!")
	rest = strings.TrimSpace(rest)
	return rest, ok && rest != ""
}

// runShell runs the user's own command as the bash tool runs one (its
// sandbox, its card, its output live), with no question: the user typed it.
// It is logged as a call and its result, so the model has the output with the
// next prompt, and a replay shows it where it ran. With a prompt typed (a
// command's, /review's), it runs after, with its content, about what the
// command showed.
func (s *Session) runShell(ctx context.Context, cmd, typed string, content []card.Content) (Answer, error) {
	release, err := s.awaitTurn(ctx)
	if errors.Is(err, errDropped) {
		return Answer{Turn: true, Stop: StopCancelled}, nil
	}
	if err != nil {
		return Answer{}, err
	}
	defer release()
	args, err := json.Marshal(map[string]string{"command": cmd})
	if err != nil {
		return Answer{}, err
	}
	if _, err := s.RunTool(ctx, "bash", args); err != nil {
		return Answer{}, err
	}
	if ctx.Err() != nil {
		return Answer{Turn: true, Stop: StopCancelled}, nil
	}
	if typed == "" {
		return Answer{Turn: true, Stop: StopEndTurn}, nil
	}
	stop, err := s.Prompt(ctx, typed, content...)
	return Answer{Turn: true, Stop: stop}, err
}

// Answers says Submit answers text at once, with no turn of the model: it is
// a built-in command the consumer where offers (but those that call the
// model: /compact, /init, /review). A consumer shows the rest as a running turn.
func (s *Session) Answers(text string, where Where) bool {
	name, _, ok := command.Parse(text)
	if !ok {
		return false
	}
	b, ok := s.findBuiltin(name)
	return ok && b.Where&where != 0 && name != "compact" && !slices.Contains(promptCommands, name)
}

// promptCommands are the built-in commands that only hand the model a
// prompt: a custom command of the same name (a review.md of the user's or
// the project's) replaces one, as it is the more particular.
var promptCommands = []string{"init", "review"}

// findBuiltin is the built-in command name, unless a custom command replaces it.
func (s *Session) findBuiltin(name string) (builtin, bool) {
	if slices.Contains(promptCommands, name) {
		if _, ok := command.Find(s.custom, name); ok {
			return builtin{}, false
		}
	}
	return findBuiltin(name)
}

// Commands is the session's table of slash commands: the built-in ones, the
// user's and the project's custom commands (none shadows a built-in one but
// /init and /review), one
// per skill, and the MCP servers' prompts.
func (s *Session) Commands() []Command {
	own := slices.DeleteFunc(Builtins(Both), func(c Command) bool {
		_, ok := s.findBuiltin(c.Name)
		return !ok
	})
	return command.With(command.With(own, s.custom), command.With(command.Skills(s.skills), s.promptCommands()))
}

// CommandsFor is the table as the consumer where offers it.
func (s *Session) CommandsFor(where Where) []Command { return command.For(s.Commands(), where) }

// helpText is /help: the commands the consumer offers.
func (s *Session) helpText(where Where) string {
	var b strings.Builder
	b.WriteString("Commands:")
	for _, c := range s.CommandsFor(where) {
		name := "/" + c.Name
		if c.ArgHint != "" {
			name += " " + c.ArgHint
		}
		fmt.Fprintf(&b, "\n  %s — %s", name, c.Description)
	}
	return b.String()
}

// Sessions lists the sessions of this session's directory, newest first; a
// subagent's are its task's, not ones to resume.
func (s *Session) Sessions() ([]session.Info, error) {
	return ListSessions(s.o.SessionDir, s.o.Root)
}

// ListSessions lists the sessions of the directory root logged in dir, newest
// first, without the subagents' (they belong to their task).
func ListSessions(dir, root string) ([]session.Info, error) {
	all, err := session.List(dir)
	if err != nil {
		return nil, err
	}
	here := map[string]bool{filepath.Clean(root): true}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		here[real] = true
	}
	var out []session.Info
	for _, in := range all {
		if here[filepath.Clean(in.Cwd)] && in.Parent == nil {
			out = append(out, in)
		}
	}
	return out, nil
}

// sessionsText is /sessions.
func (s *Session) sessionsText() string {
	infos, err := s.Sessions()
	if err != nil {
		return "Cannot list the sessions: " + err.Error() + "."
	}
	if len(infos) == 0 {
		return "No sessions in this directory yet."
	}
	var b strings.Builder
	b.WriteString("Sessions of this directory (/resume ID reopens one):")
	for _, in := range infos {
		fmt.Fprintf(&b, "\n  %s  %s  %s", in.ID, in.Updated.Local().Format(time.DateTime), oneLine(in.Name(), 50))
	}
	return b.String()
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// Attachments: a prompt that names a file as @path gets it attached (a
// resource block of the user record, see package attach), so the model has it
// without a read call.

// maxAttach bounds one attached text file, maxImage an attached image (what
// the providers take); a larger one is not attached, and the user is told.
const (
	maxAttach = 256 << 10
	maxImage  = 5 << 20
	// maxAttached bounds what one prompt attaches in all: a repository's
	// command body may name many large files.
	maxAttached = 16 << 20
)

// atRef finds @path mentions: after the start or a space, up to the next
// space, or in quotes (@"a name with spaces").
var atRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|\s)@(?:"([^"\n]+)"|([^\s@"]+))`) })

// attachFiles reads the files text mentions as @path, through the workspace
// (confined as the file tools are): text as a resource and images (PNG, JPEG,
// GIF, WebP) as images. An absolute path outside it may name an image only:
// what a terminal pastes when a screenshot is dropped on it. skipped says, in
// the user's words, what was not attached and why.
func (s *Session) attachFiles(text string) (files []card.Content, skipped []string) {
	seen := map[string]bool{}
	total := 0
	for _, m := range atRef().FindAllStringSubmatch(text, -1) {
		ref := m[1]
		if ref == "" {
			ref = strings.TrimRight(m[2], ".,;:!?)")
		}
		if ref == "" || seen[ref] || IsMention(ref) { // an MCP resource: attachMentions reads it
			continue
		}
		seen[ref] = true
		c, err := s.readAttachment(ref)
		if err == nil && total+len(c.Text)+len(c.Data) > maxAttached {
			err = fmt.Errorf("the prompt's attachments would pass %d MiB", maxAttached>>20)
		}
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("@%s: %v", ref, err))
			continue
		}
		total += len(c.Text) + len(c.Data)
		files = append(files, c)
	}
	return files, skipped
}

func (s *Session) readAttachment(ref string) (card.Content, error) {
	var data []byte
	var more bool
	var err error
	if f, lerr := s.ws.Locate(ref); lerr == nil {
		data, more, err = f.ReadCapped(maxImage)
	} else if filepath.IsAbs(ref) {
		data, more, err = workspace.ReadOwnFile(ref, maxImage)
		if err == nil && imageMIME(data) == "" {
			return card.Content{}, errors.New("not a file in the workspace")
		}
	} else {
		return card.Content{}, lerr
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return card.Content{}, errors.New("no such file")
	case errors.Is(err, workspace.ErrNotRegular):
		return card.Content{}, errors.New("not a regular file")
	case err != nil:
		return card.Content{}, err
	case more:
		return card.Content{}, fmt.Errorf("more than %d bytes", maxImage)
	}
	if mime := imageMIME(data); mime != "" {
		c := card.Image(mime, base64.StdEncoding.EncodeToString(data))
		c.URI = ref
		return c, nil
	}
	if len(data) > maxAttach {
		return card.Content{}, fmt.Errorf("%d bytes is more than %d", len(data), maxAttach)
	}
	return card.Resource(ref, strings.ToValidUTF8(string(data), "\uFFFD")), nil
}

// imageMIME is the type of an image the models take, "" for anything else.
func imageMIME(data []byte) string {
	switch t := http.DetectContentType(data); t {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return t
	}
	return ""
}

// errDropped: Cancel dropped a prompt that waited for its turn.
var errDropped = errors.New("the queued prompt was cancelled")

// awaitTurn waits, behind the prompts that came before, until no turn runs:
// a prompt sent while a turn runs is queued, not refused (an editor other than
// Zed, or a script, may send one), and the user is told so. release lets the
// next one go.
func (s *Session) awaitTurn(ctx context.Context) (release func(), err error) {
	s.mu.Lock()
	dropped, closed := s.dropQueued, s.closed
	s.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	select {
	case s.queue <- struct{}{}:
	default:
		s.notice("Queued: this prompt runs when the current turn ends (cancelling drops it).")
		select {
		case s.queue <- struct{}{}:
		case <-dropped:
			return nil, errDropped
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.ctx.Done():
			return nil, ErrClosed
		}
	}
	release = func() { <-s.queue }
	// A turn that did not queue (/compact, dsh tool) ends first.
	for {
		s.mu.Lock()
		busy, end := s.turn != nil, s.turnEnd
		s.mu.Unlock()
		if !busy {
			return release, nil
		}
		select {
		case <-end:
		case <-dropped:
			release()
			return nil, errDropped
		case <-ctx.Done():
			release()
			return nil, ctx.Err()
		}
	}
}
