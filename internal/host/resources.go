package host

// The session's MCP resources: listed for the consumers' completion and for
// /mcp, and attached to a prompt that mentions one as @SERVER:URI. A prompt's
// mentions are read here, in Prompt, for every consumer; what was read is
// logged in the user record as resource (or image) blocks, so a replay or a
// reloaded session shows and sends the same without reading again.

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/mcp"
)

// Resource is one of the session's MCP resources, or a resource template.
type Resource = mcp.Resource

// Bounds on attaching resources: a listing or a read that takes longer is
// given up, and a prompt attaches at most maxMentions of them.
const (
	resourceListWait = 10 * time.Second
	resourceReadWait = 30 * time.Second
	maxMentions      = 10
)

// Resources lists the session's MCP servers' resources, then their
// templates, server by server. A server whose listing failed is left out and
// named in err.
func (s *Session) Resources(ctx context.Context) ([]Resource, error) {
	if s.mcp == nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, resourceListWait)
	defer cancel()
	return s.mcp.Resources(ctx)
}

// ResourceMentions maps the URI of each resource the session's MCP servers
// list to how a prompt mentions it (@SERVER:URI), the first server's where
// two list one: an editor's link to one is attached like a mention.
func (s *Session) ResourceMentions(ctx context.Context) map[string]string {
	rs, _ := s.Resources(ctx)
	out := map[string]string{}
	for _, r := range rs {
		if m := Mention(r.Server, r.URI); !r.Template && out[r.URI] == "" && IsMention(m[1:]) {
			out[r.URI] = m
		}
	}
	return out
}

// Mention is how a prompt names server's resource uri: @SERVER:URI.
func Mention(server, uri string) string { return "@" + server + ":" + uri }

// mentionRef finds @SERVER:URI mentions: after the start or a space, a
// server name (letters, digits, _, - or .: a configured server's name), a
// colon and a URI with its scheme (so @main.go and @a:b are not), up to the
// next space. Trailing punctuation is the sentence's.
var mentionRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|\s)@([A-Za-z0-9_.-]+):([A-Za-z][A-Za-z0-9+.-]*:[^\s"]+)`)
})

// IsMention says whether an @ word (without its @) is an MCP resource
// mention, which the chat leaves to the host instead of attaching a file.
func IsMention(word string) bool { return mentionRef().MatchString("@" + word) }

// attachMentions reads the resources text mentions and returns content with
// them added, in the order mentioned. One already attached (an editor's
// embedded copy) is not read again. A mention that cannot be attached stays
// text, and the user is told why on the session's stream, so the note comes
// before the prompt's record in every consumer.
func (s *Session) attachMentions(ctx context.Context, text string, content []card.Content) []card.Content {
	ms := mentionRef().FindAllStringSubmatch(text, -1)
	if len(ms) == 0 {
		return content
	}
	seen := map[string]bool{}
	for _, c := range content {
		if c.URI != "" {
			seen[c.URI] = true
		}
	}
	n := 0
	for _, m := range ms {
		server, uri := m[1], strings.TrimRight(m[2], ".,;:!?)")
		if seen[uri] {
			continue
		}
		seen[uri] = true
		if n == maxMentions {
			s.notice(fmt.Sprintf("not attached: %s: a prompt attaches at most %d resources", Mention(server, uri), maxMentions))
			continue
		}
		n++
		blocks, err := s.readResource(ctx, server, uri)
		if errors.Is(err, mcp.ErrNoResource) && uri != m[2] {
			// The punctuation was the URI's own (…/a.), not the sentence's.
			if b, err2 := s.readResource(ctx, server, m[2]); err2 == nil {
				blocks, err = b, nil
			}
		}
		if err != nil {
			s.notice(fmt.Sprintf("not attached: %s: %v; the prompt is sent without it", Mention(server, uri), err))
			continue
		}
		content = append(content, blocks...)
	}
	return content
}

func (s *Session) readResource(ctx context.Context, server, uri string) ([]card.Content, error) {
	if s.mcp == nil || !slices.Contains(s.mcp.Names(), server) {
		return nil, fmt.Errorf("no MCP server %s in this session (/mcp lists them)", server)
	}
	ctx, cancel := context.WithTimeout(ctx, resourceReadWait)
	defer cancel()
	blocks, err := s.mcp.ReadResource(ctx, server, uri)
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("MCP server %s did not answer within %v", server, resourceReadWait)
	}
	return blocks, err
}

// mcpCommand is /mcp's answer: the session's MCP servers, what each offers,
// and the resources a prompt may attach.
func (s *Session) mcpCommand(ctx context.Context) Reply {
	if len(s.o.MCP) == 0 {
		return Reply{Text: "This session has no MCP servers ([mcp.NAME] in config.toml adds one)."}
	}
	var running []string
	prompts := map[string]int{}
	if s.mcp != nil {
		running = s.mcp.Names()
		for _, p := range s.mcp.Prompts() {
			prompts[p.Server]++
		}
	}
	rs, err := s.Resources(ctx)
	var b strings.Builder
	b.WriteString("MCP servers:")
	for _, c := range s.o.MCP {
		if !slices.Contains(running, c.Name) {
			if slices.Contains(s.notes.signIn, c.Name) {
				fmt.Fprintf(&b, "\n- %s: needs sign-in (the link was shown; or dsh mcp login %s)", c.Name, c.Name)
			} else {
				fmt.Fprintf(&b, "\n- %s: not running", c.Name)
			}
			continue
		}
		var res, tmpl int
		for _, r := range rs {
			switch {
			case r.Server != c.Name:
			case r.Template:
				tmpl++
			default:
				res++
			}
		}
		about := []string{count(len(s.mcp.ToolNames(c.Name)), "tool")}
		if n := prompts[c.Name]; n > 0 {
			about = append(about, count(n, "prompt")+" (/"+promptPrefix+c.Name+"__…)")
		}
		about = append(about, count(res, "resource"))
		if tmpl > 0 {
			about = append(about, count(tmpl, "resource template"))
		}
		if s.mcp.Stopped(c.Name) {
			about = append(about, "stopped")
		}
		fmt.Fprintf(&b, "\n- %s: %s", c.Name, strings.Join(about, ", "))
	}
	if len(rs) > 0 {
		b.WriteString("\nResources (a prompt that mentions one as @SERVER:URI has it attached):")
		for _, r := range rs {
			var about []string
			if r.Template {
				about = append(about, "template: fill in the {…}")
			}
			for _, a := range []string{r.Name, r.MIMEType} {
				if a != "" {
					about = append(about, a)
				}
			}
			fmt.Fprintf(&b, "\n- %s", Mention(r.Server, r.URI))
			if len(about) > 0 {
				b.WriteString(" — " + strings.Join(about, ", "))
			}
		}
	}
	if err != nil {
		b.WriteString("\n" + err.Error())
	}
	return Reply{Text: b.String()}
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
