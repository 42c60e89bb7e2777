package frontmatter

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

var agentKeys = []string{"name", "description", "tools", "model", "color"}

// Front matter as authors write it for Claude Code, YAML or not, reads as
// they meant it.
func TestParse(t *testing.T) {
	tests := []struct {
		name, front string
		key, want   string
		list        string // List(key) joined by "|", when set
		listKey     string
	}{
		{name: "plain YAML", front: "name: x\ndescription: Does x.", key: "description", want: "Does x."},
		{name: "quoted", front: "description: \"Says: hi\"", key: "description", want: "Says: hi"},
		{name: "colon in an unquoted value", front: "description: Use when: the user asks\nmodel: sonnet", key: "description", want: "Use when: the user asks"},
		{name: "colon, later key still read", front: "description: Use when: the user asks\nmodel: sonnet", key: "model", want: "sonnet"},
		{name: "examples inside the description",
			front: "name: reviewer\ndescription: Use this agent after a change. Examples:\n\n<example>\nContext: the user wrote code\nuser: \"Review it\"\nassistant: \"I will.\"\n</example>\nmodel: inherit\ncolor: blue",
			key:   "description", want: "Use this agent after a change. Examples:\n\n<example>\nContext: the user wrote code\nuser: \"Review it\"\nassistant: \"I will.\"\n</example>"},
		{name: "examples, the key after them", front: "description: x: y\nuser: \"a\"\nmodel: opus", key: "model", want: "opus"},
		{name: "examples, not a key of their own", front: "description: x: y\nuser: \"a\"\nmodel: opus", key: "user", want: ""},
		{name: "tabs", front: "name: x\ndescription: >\n\tFolded\n\ttext.\ntools: Read", key: "description", want: "Folded text."},
		{name: "tabs, list after", front: "name: x\ndescription: >\n\tFolded\ntools:\n\t- Read\n\t- Grep", listKey: "tools", list: "Read|Grep"},
		{name: "flow list, lenient", front: "description: a: b\ntools: [\"Read\", \"Write\"]", listKey: "tools", list: "Read|Write"},
		{name: "flow list, YAML", front: "tools: [Read, Write]", listKey: "tools", list: "Read|Write"},
		{name: "comma text as a list", front: "allowed-tools: Bash(git add:*), Bash(git commit:*)", listKey: "allowed-tools", list: "Bash(git add:*)|Bash(git commit:*)"},
		{name: "blank-separated list", front: "allowed-tools: Read Grep Bash(git diff *)", listKey: "allowed-tools", list: "Read|Grep|Bash(git diff *)"},
		{name: "literal block", front: "description: |\n  one\n  two\nname: x: y", key: "description", want: "one\ntwo"},
		{name: "null", front: "model:\nname: n", key: "model", want: ""},
		{name: "nested mapping skipped", front: "hooks:\n  Stop:\n    - x\nname: n", key: "name", want: "n"},
		{name: "empty", front: "", key: "name", want: ""},
		{name: "not a mapping at all", front: "just text: here: and more\nsecond", key: "just", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys := append(slices.Clone(agentKeys), "allowed-tools")
			f := Parse([]byte(tt.front), keys...)
			if tt.key != "" {
				if got := f.String(tt.key); got != tt.want {
					t.Errorf("%s = %q, want %q", tt.key, got, tt.want)
				}
			}
			if tt.listKey != "" {
				l, ok := f.List(tt.listKey == "allowed-tools", tt.listKey)
				if got := strings.Join(l, "|"); !ok || got != tt.list {
					t.Errorf("%s = %q (%v), want %q", tt.listKey, got, ok, tt.list)
				}
			}
		})
	}
}

func TestSplit(t *testing.T) {
	tests := []struct {
		in          string
		front, body string
		ok, err     bool
	}{
		{in: "---\nname: x\n---\nbody\n", front: "name: x", body: "body\n", ok: true},
		{in: "---\r\nname: x\r\n---\r\nbody", front: "name: x", body: "body", ok: true},
		{in: "---\nname: x\n---", front: "name: x", ok: true},
		{in: "---\n---\nbody", body: "body", ok: true},
		{in: "no front matter", body: "no front matter"},
		{in: "---\nname: x\nbody", err: true},
	}
	for _, tt := range tests {
		front, body, ok, err := Split([]byte(tt.in))
		if string(front) != tt.front || string(body) != tt.body || ok != tt.ok || (err != nil) != tt.err {
			t.Errorf("Split(%q) = %q, %q, %v, %v", tt.in, front, body, ok, err)
		}
	}
}

func TestNameAndCut(t *testing.T) {
	for in, want := range map[string]string{
		"Hook Development": "hook-development", "pdf-forms": "pdf-forms", "  A__B  c ": "a-b-c",
		"Ünïcode!": "n-code", "!!!": "", strings.Repeat("ab ", 40): strings.TrimRight(strings.Repeat("ab-", 22)[:64], "-"),
	} {
		if got := Name(in); got != want {
			t.Errorf("Name(%q) = %q, want %q", in, got, want)
		}
	}
	long := strings.Repeat("é", 700) // 1,400 bytes
	c := Cut(long, 1024)
	if len(c) > 1024 || !utf8.ValidString(c) || !strings.HasSuffix(c, "…") {
		t.Errorf("Cut: %d bytes, valid %v", len(c), utf8.ValidString(c))
	}
	if Cut("short", 1024) != "short" {
		t.Error("Cut changed a short text")
	}
}

func TestBool(t *testing.T) {
	f := Parse([]byte("a: true\nb: no\nc: yes\nd: maybe"))
	if !f.Bool("a") || f.Bool("b") || !f.Bool("c") || f.Bool("d") || f.Bool("e") {
		t.Errorf("Bool: %v %v %v %v %v", f.Bool("a"), f.Bool("b"), f.Bool("c"), f.Bool("d"), f.Bool("e"))
	}
}

// FuzzParse: whatever a file holds, reading it neither panics nor hangs, its
// values are valid UTF-8, and a key a line sets at the start of the block is
// found.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"name: x\ndescription: y", "description: a: b\nuser: \"c\"\nmodel: m", "tools:\n\t- Read\n", "description: |\n  x\n",
		"[a, b]", "- a\n- b", "x: [\"a\", 'b'", "a: >\n\n\n", ":\n:", "k: \xff\xfe", "tools: [", "description: ''",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		front, _, _, _ := Split(append([]byte("---\n"), b...))
		fs := Parse(front, agentKeys...)
		for _, k := range agentKeys {
			if v := fs.String(k); !utf8.ValidString(v) && utf8.Valid(b) {
				t.Fatalf("%s: %q is not UTF-8", k, v)
			}
			l, _ := fs.List(true, k)
			for _, it := range l {
				if strings.ContainsAny(it, "\n") && !fs.Has(k) {
					t.Fatalf("%s: item %q of an unset key", k, it)
				}
			}
		}
		// A first line "name: WORD" is always read as the name.
		g := Parse(append([]byte("name: fuzzed\n"), b...), agentKeys...)
		if got := g.String("name"); !strings.HasPrefix(got, "fuzzed") && !strictMapping(append([]byte("name: fuzzed\n"), b...)) {
			t.Fatalf("name = %q", got)
		}
		_ = Name(string(b))
		if c := Cut(string(b), 64); len(c) > 64 && len(b) > 64 {
			t.Fatalf("Cut to 64: %d bytes", len(c))
		}
	})
}

// strictMapping: b is YAML whose own keys may set name otherwise.
func strictMapping(b []byte) bool {
	_, ok := strict(b)
	return ok
}
