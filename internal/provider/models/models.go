// Package models knows the models dsh can talk to: one table of context
// windows, output limits and prices for the Anthropic and OpenAI models whose
// figures are published, and a default for every other model. The live list a
// provider serves is asked for by the provider's own package (anthropic.Models,
// openai.Models), which merges these figures in.
package models

import "strings"

// Info is what dsh knows of one model.
type Info struct {
	ID       string
	Provider string // "anthropic" or "openai"; "" for a model the table does not know
	Name     string // display name; the ID when none is known
	// ContextWindow is the most input tokens the model takes.
	ContextWindow int64
	// MaxOutput is the most output tokens one response may have.
	MaxOutput int64
	// InputPrice and OutputPrice are US dollars per million tokens; they mean
	// something only when Priced.
	InputPrice, OutputPrice float64
	Priced                  bool
	// Known is false when the figures are the defaults, standing in for a
	// model the table does not have.
	Known bool
}

// The figures used for a model the table does not know: conservative, so that
// compaction starts too early rather than too late (local models often have
// smaller windows still; the configuration can say so).
const (
	DefaultContextWindow = 128_000
	DefaultMaxOutput     = 16_000
)

// table holds the published figures (the vendors' model pages, checked when
// the entry was added). Prices are left out where the vendor's price is tiered
// or was not published when the entry was added.
var table = []Info{
	// Anthropic.
	claude("claude-fable-5-1", "Claude Fable 5.1", 1_000_000, 128_000, 10, 50),
	claude("claude-fable-5", "Claude Fable 5", 1_000_000, 128_000, 10, 50),
	claude("claude-opus-5-5", "Claude Opus 5.5", 1_000_000, 128_000, 4, 20),
	claude("claude-opus-5", "Claude Opus 5", 1_000_000, 128_000, 5, 25),
	claude("claude-sonnet-5-5", "Claude Sonnet 5.5", 1_000_000, 128_000, 2, 10),
	claude("claude-sonnet-5", "Claude Sonnet 5", 1_000_000, 128_000, 2, 10),
	unpriced(claude("claude-haiku-5-5", "Claude Haiku 5.5", 1_000_000, 128_000, 0, 0)),
	claude("claude-opus-4-8", "Claude Opus 4.8", 1_000_000, 128_000, 5, 25),
	claude("claude-opus-4-6", "Claude Opus 4.6", 1_000_000, 128_000, 5, 25),
	claude("claude-opus-4-5", "Claude Opus 4.5", 200_000, 64_000, 5, 25),
	claude("claude-sonnet-4-5", "Claude Sonnet 4.5", 200_000, 64_000, 3, 15),
	claude("claude-haiku-4-5", "Claude Haiku 4.5", 200_000, 64_000, 1, 5),
	claude("claude-opus-4-1", "Claude Opus 4.1", 200_000, 32_000, 15, 75),
	claude("claude-opus-4", "Claude Opus 4", 200_000, 32_000, 15, 75),
	claude("claude-sonnet-4", "Claude Sonnet 4", 200_000, 64_000, 3, 15),
	claude("claude-3-7-sonnet", "Claude Sonnet 3.7", 200_000, 64_000, 3, 15),
	claude("claude-3-5-haiku", "Claude Haiku 3.5", 200_000, 8_192, 0.80, 4),
	claude("claude-3-haiku", "Claude Haiku 3", 200_000, 4_096, 0.25, 1.25),

	// OpenAI.
	unpriced(gpt("gpt-5.5", "GPT-5.5", 1_050_000, 128_000, 0, 0)),
	gpt("gpt-5.1", "GPT-5.1", 400_000, 128_000, 1.25, 10),
	gpt("gpt-5", "GPT-5", 400_000, 128_000, 1.25, 10),
	gpt("gpt-5-mini", "GPT-5 mini", 400_000, 128_000, 0.25, 2),
	gpt("gpt-5-nano", "GPT-5 nano", 400_000, 128_000, 0.05, 0.40),
	gpt("gpt-4.1", "GPT-4.1", 1_047_576, 32_768, 2, 8),
	gpt("gpt-4.1-mini", "GPT-4.1 mini", 1_047_576, 32_768, 0.40, 1.60),
	gpt("gpt-4.1-nano", "GPT-4.1 nano", 1_047_576, 32_768, 0.10, 0.40),
	gpt("gpt-4o", "GPT-4o", 128_000, 16_384, 2.50, 10),
	gpt("gpt-4o-mini", "GPT-4o mini", 128_000, 16_384, 0.15, 0.60),
	gpt("o3", "o3", 200_000, 100_000, 2, 8),
	gpt("o4-mini", "o4-mini", 200_000, 100_000, 1.10, 4.40),
}

func claude(id, name string, window, out int64, in, outPrice float64) Info {
	return Info{ID: id, Provider: "anthropic", Name: name, ContextWindow: window, MaxOutput: out,
		InputPrice: in, OutputPrice: outPrice, Priced: true, Known: true}
}

func gpt(id, name string, window, out int64, in, outPrice float64) Info {
	i := claude(id, name, window, out, in, outPrice)
	i.Provider = "openai"
	return i
}

func unpriced(i Info) Info {
	i.InputPrice, i.OutputPrice, i.Priced = 0, 0, false
	return i
}

// Lookup returns what the table knows of model: an exact entry, or the entry
// of which model is a dated snapshot (claude-sonnet-4-5-20250929,
// gpt-4o-2024-08-06). A router's vendor prefix (anthropic/claude-…) is ignored,
// and so are the clouds' spellings of Claude's ids: Bedrock's
// (global.anthropic.claude-…-v1:0) and Vertex's (claude-…@20250929).
// An unknown model gets the default figures, unpriced, with Known false.
func Lookup(model string) Info {
	id := ClaudeAlias(model)
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	if m, ok := cloudID(id); ok {
		id = m
	}
	id = strings.Replace(id, "@", "-", 1)
	var best *Info
	for i := range table {
		e := &table[i]
		if id == e.ID {
			best = e
			break
		}
		rest, ok := strings.CutPrefix(id, e.ID+"-")
		if ok && snapshot(rest) && (best == nil || len(e.ID) > len(best.ID)) {
			best = e
		}
	}
	if best == nil {
		return Info{ID: model, Name: model, ContextWindow: DefaultContextWindow, MaxOutput: DefaultMaxOutput}
	}
	out := *best
	out.ID = model
	return out
}

// cloudID is the Claude id inside a Bedrock model id: after a region or
// global prefix and anthropic., before a version suffix — what
// ^(?:[a-z]{2,6}\.)?anthropic\.(.+?)(?:-v[0-9]+(?::[0-9]+)?)?$ captures, matched
// by hand: a new session's first status looks its model up, and compiling the
// expression was a part of what session/new cost a fresh process.
func cloudID(s string) (string, bool) {
	if i := strings.IndexByte(s, '.'); i >= 2 && i <= 6 && lowerLetters(s[:i]) {
		s = s[i+1:]
	}
	rest, ok := strings.CutPrefix(s, "anthropic.")
	if !ok || rest == "" || strings.IndexByte(rest, '\n') >= 0 {
		return "", false
	}
	if i := strings.LastIndex(rest, "-v"); i > 0 && versionSuffix(rest[i+2:]) {
		rest = rest[:i]
	}
	return rest, true
}

// versionSuffix says whether s, what follows "-v", is [0-9]+(?::[0-9]+)?.
func versionSuffix(s string) bool {
	major, minor, colon := strings.Cut(s, ":")
	return digits(major) && (!colon || digits(minor))
}

// snapshot says whether a suffix is a snapshot's: a date (20250929,
// 2024-08-06) or "latest". Anything else (gpt-5 + "-mini", claude-opus-4 +
// "-7") is another model.
func snapshot(s string) bool {
	switch len(s) {
	case 8:
		return digits(s)
	case 10:
		return digits(s[:4]) && s[4] == '-' && digits(s[5:7]) && s[7] == '-' && digits(s[8:])
	}
	return s == "latest"
}

// digits says whether s is one or more ASCII digits.
func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// lowerLetters says whether s is ASCII lower-case letters only.
func lowerLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

// Builtin returns the table's models of provider ("anthropic" or "openai"),
// newest first; every model for "".
func Builtin(provider string) []Info {
	var out []Info
	for _, e := range table {
		if provider == "" || e.Provider == provider {
			out = append(out, e)
		}
	}
	return out
}

// Usage is the tokens of one or more model calls.
type Usage struct {
	InputTokens, OutputTokens int64
}

// Cost returns what usage cost on model in US dollars, and false when the
// model's price is not known. Input is priced at the base rate: cache reads
// (cheaper) and cache writes (dearer) are not told apart.
func Cost(model string, u Usage) (float64, bool) {
	i := Lookup(model)
	if !i.Priced {
		return 0, false
	}
	return (float64(u.InputTokens)*i.InputPrice + float64(u.OutputTokens)*i.OutputPrice) / 1e6, true
}
