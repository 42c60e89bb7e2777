// Package frontmatter reads the front matter of the Markdown files Claude Code
// setups are made of (commands, skills, agents) as their authors write it:
// YAML when it is YAML, and otherwise line by line, as Claude Code tolerates
// it — an unquoted value holding ": ", an agent's description that runs on
// over "user: …" example lines, tabs for indentation.
package frontmatter

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v4"
)

// Fields are the keys of a front matter block and their values: a scalar's
// text, or a list's items.
type Fields struct {
	text   map[string]string
	lists  map[string][]string
	nested map[string]bool // keys set to a mapping (hooks, metadata): set, but no value a caller reads
}

// Split cuts a Markdown file into its front matter and its body; ok is false
// when the file has no front matter (it does not start with a --- line), and
// err says so when the block is never closed.
func Split(b []byte) (front, body []byte, ok bool, err error) {
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	b = bytes.TrimPrefix(b, []byte("\uFEFF"))
	rest, ok := bytes.CutPrefix(b, []byte("---\n"))
	if !ok {
		return nil, b, false, nil
	}
	if front, body, ok = bytes.Cut(rest, []byte("\n---\n")); ok {
		return front, body, true, nil
	}
	if front, ok = bytes.CutSuffix(rest, []byte("\n---")); ok {
		return front, nil, true, nil
	}
	if bytes.HasPrefix(rest, []byte("---\n")) || bytes.Equal(rest, []byte("---")) { // an empty block
		return nil, bytes.TrimPrefix(rest[3:], []byte("\n")), true, nil
	}
	return nil, nil, false, errors.New("the front matter is not closed with ---")
}

// Parse reads a front matter block. known are the keys the caller's format
// has: where the block is not YAML, a line "key: value" starts a new key only
// for one of them (or for the block's first line), and any other line goes on
// the value before it — so the "user: …" lines of an example inside an
// unquoted description stay in the description.
func Parse(front []byte, known ...string) Fields {
	if f, ok := strict(front); ok {
		return f
	}
	return lenient(front, known)
}

// strict reads front as YAML; ok is false when it is not a YAML mapping.
func strict(front []byte) (Fields, bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal(front, &doc); err != nil {
		return Fields{}, false
	}
	f := Fields{text: map[string]string{}, lists: map[string][]string{}, nested: map[string]bool{}}
	if doc.Kind == 0 { // empty
		return f, true
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return Fields{}, false
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i].Value, m.Content[i+1]
		switch v.Kind {
		case yaml.ScalarNode:
			if v.Tag != "!!null" {
				f.text[k] = v.Value
			}
		case yaml.SequenceNode:
			items := []string{}
			for _, c := range v.Content {
				if c.Kind == yaml.ScalarNode {
					items = append(items, c.Value)
				}
			}
			f.lists[k] = items
		case yaml.MappingNode, yaml.DocumentNode, yaml.AliasNode:
			f.nested[k] = true
		}
	}
	return f, true
}

// keyLine is a "key: value" line at the start of a line.
var keyLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]+(.*)|)$`)
})

// lenient reads front line by line: "key: value" lines, the value running on
// over the lines that start no known key; a value of "|" or ">" (a YAML block
// scalar), or an empty one, takes the lines below it, and "- item" lines
// below an empty value are a list.
func lenient(front []byte, known []string) Fields {
	f := Fields{text: map[string]string{}, lists: map[string][]string{}}
	isKnown := map[string]bool{}
	for _, k := range known {
		isKnown[k] = true
	}
	key := ""
	var lines []string // the current key's value, line by line
	flush := func() {
		if key == "" || f.Has(key) { // a key set twice: the first holds
			return
		}
		if items, ok := listOf(lines); ok {
			f.lists[key] = items
		} else {
			f.text[key] = joinValue(lines)
		}
	}
	for _, line := range strings.Split(strings.ToValidUTF8(string(front), "\uFFFD"), "\n") {
		line = strings.ReplaceAll(line, "\t", "    ")
		if m := keyLine().FindStringSubmatch(line); m != nil && (key == "" || isKnown[m[1]]) {
			flush()
			key, lines = m[1], []string{strings.TrimSpace(m[2])}
			continue
		}
		if key == "" {
			continue // before any key: a comment, or nothing a caller reads
		}
		lines = append(lines, line)
	}
	flush()
	return f
}

// listOf reads a value written as a YAML list: "[a, b]" on its line, or
// "- a" lines below an empty value.
func listOf(lines []string) ([]string, bool) {
	first := strings.TrimSpace(lines[0])
	if strings.HasPrefix(first, "[") && strings.HasSuffix(strings.TrimSpace(strings.Join(lines, " ")), "]") {
		inner := strings.TrimSpace(strings.Join(lines, " "))
		inner = inner[1 : len(inner)-1]
		items := []string{}
		for it := range strings.SplitSeq(inner, ",") {
			if it = unquote(strings.TrimSpace(it)); it != "" {
				items = append(items, it)
			}
		}
		return items, true
	}
	if first != "" {
		return nil, false
	}
	var items []string
	for _, l := range lines[1:] {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		it, ok := strings.CutPrefix(t, "- ")
		if !ok && t != "-" {
			return nil, false
		}
		items = append(items, unquote(strings.TrimSpace(it)))
	}
	return items, len(items) > 0
}

// joinValue is a scalar's text: its first line and the lines that carry on
// from it. After "|" the lines keep their breaks (a literal block), after ">"
// or a plain value they keep them too where the author left a blank line.
func joinValue(lines []string) string {
	first := strings.TrimSpace(lines[0])
	rest := lines[1:]
	indent := -1 // the block's indentation, removed from each line
	for _, l := range rest {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " "))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	var body []string
	for _, l := range rest {
		if len(l) >= indent && indent > 0 {
			l = l[indent:]
		}
		body = append(body, strings.TrimRight(l, " "))
	}
	kept := strings.TrimRight(strings.Join(body, "\n"), "\n")
	text := strings.TrimLeft(kept, "\n")
	switch {
	case strings.HasPrefix(first, "|"):
		return text
	case strings.HasPrefix(first, ">"):
		return fold(text)
	case text == "":
		return unquote(first)
	}
	return strings.TrimSpace(unquote(first) + "\n" + kept)
}

// fold joins a folded block's lines with blanks, its paragraphs with a
// line break.
func fold(text string) string {
	paras := strings.Split(text, "\n\n")
	for i, p := range paras {
		paras[i] = strings.Join(strings.Fields(p), " ")
	}
	return strings.Join(paras, "\n")
}

// unquote drops the quotes around a whole value.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}

// Has reports whether the block sets one of keys.
func (f Fields) Has(keys ...string) bool {
	for _, k := range keys {
		if _, ok := f.text[k]; ok {
			return true
		}
		if _, ok := f.lists[k]; ok || f.nested[k] {
			return true
		}
	}
	return false
}

// String is the first of keys the block sets, as text (a list's items
// joined by ", ").
func (f Fields) String(keys ...string) string {
	for _, k := range keys {
		if v, ok := f.text[k]; ok {
			return v
		}
		if l, ok := f.lists[k]; ok {
			return strings.Join(l, ", ")
		}
	}
	return ""
}

// List is the first of keys the block sets, as items: a list's, or a text's
// split at commas (and, where sep is true, at blanks outside parentheses, as
// Claude Code's allowed-tools may be written: "Read Grep Bash(git diff *)").
// ok is false when none is set.
func (f Fields) List(blanks bool, keys ...string) (items []string, ok bool) {
	for _, k := range keys {
		if l, ok := f.lists[k]; ok {
			return l, true
		}
		if v, ok := f.text[k]; ok {
			return splitList(v, blanks), true
		}
	}
	return nil, false
}

// splitList splits at commas, and at blanks when blanks is set, outside
// parentheses.
func splitList(s string, blanks bool) []string {
	items := []string{}
	var b strings.Builder
	depth := 0
	end := func() {
		if t := strings.TrimSpace(b.String()); t != "" {
			items = append(items, unquote(t))
		}
		b.Reset()
	}
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0 && (r == ',' || blanks && (r == ' ' || r == '\t' || r == '\n')):
			end()
			continue
		}
		b.WriteRune(r)
	}
	end()
	return items
}

// Bool is the first of keys the block sets, read as a YAML boolean; false
// when none is set or it is not one.
func (f Fields) Bool(keys ...string) bool {
	for _, k := range keys {
		if v, ok := f.text[k]; ok {
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "true", "yes", "on":
				return true
			}
			return false
		}
	}
	return false
}

// Cut shortens s to at most n bytes, on a rune boundary, ending in "…" when it
// was cut: what Claude Code does with a description past its limit.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	end := n - len("…")
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return strings.TrimRight(s[:end], " ") + "…"
}

// Name is the name a display name such as "Hook Development" gives a
// command: lowercase letters, digits and single hyphens (other characters
// become hyphens), at most 64 bytes; "" when nothing of it is left.
func Name(display string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(strings.TrimSpace(display)) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		default:
			dash = true
		}
		if b.Len() >= 64 {
			break
		}
	}
	return strings.TrimRight(b.String()[:min(b.Len(), 64)], "-")
}

// What a kind of entry (the skills, the agents, the commands the model may
// run) may add to every model request, in bytes of names and descriptions;
// an untrusted repository's entries get at most UntrustedBudget of it (200
// skills of a collection added ~78k tokens).
const (
	Budget          = 16 << 10
	UntrustedBudget = 8 << 10
)

// Fit keeps, in order, the items whose size fits in Budget, those of an
// untrusted repository also in UntrustedBudget; left is how many did not.
func Fit[T any](items []T, size func(T) int, untrusted func(T) bool) (kept []T, left int) {
	total, repo := 0, 0
	for _, it := range items {
		n := size(it)
		u := untrusted(it)
		if total+n > Budget || u && repo+n > UntrustedBudget {
			left++
			continue
		}
		total += n
		if u {
			repo += n
		}
		kept = append(kept, it)
	}
	return kept, left
}

// CommandKeys are the front matter keys of Claude Code's commands and skills.
var CommandKeys = []string{"name", "description", "argument-hint", "allowed-tools", "disallowed-tools", "disallowedTools",
	"model", "disable-model-invocation", "user-invocable", "context", "agent", "hooks", "effort", "license", "version", "metadata", "when_to_use"}

// Invocation is what the front matter of a command or a skill says about
// running it.
type Invocation struct {
	ArgHint string // argument-hint, shown after the name
	// Allowed are the tools its turn may use without asking (allowed-tools,
	// Claude Code's rules as written: "Bash(git add:*)", "Read");
	// Disallowed those its turn is not offered (disallowed-tools).
	Allowed, Disallowed []string
	Model               string // the model its turn runs
	NoModel             bool   // disable-model-invocation: only the user runs it
	Hidden              bool   // user-invocable: false: only the model runs it
}

// Invocation reads the keys of an Invocation.
func (f Fields) Invocation() Invocation {
	in := Invocation{ArgHint: strings.TrimSpace(f.String("argument-hint")), Model: strings.TrimSpace(f.String("model")),
		NoModel: f.Bool("disable-model-invocation")}
	in.Allowed, _ = f.List(true, "allowed-tools")
	in.Disallowed, _ = f.List(true, "disallowed-tools", "disallowedTools")
	in.Hidden = f.Has("user-invocable") && !f.Bool("user-invocable")
	if l, ok := f.lists["argument-hint"]; ok && len(l) > 0 { // [message] unquoted is a YAML list
		in.ArgHint = "[" + strings.Join(l, "] [") + "]"
	}
	if in.Model == "inherit" {
		in.Model = ""
	}
	return in
}
