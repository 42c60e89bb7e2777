// Package attach is the one definition of a user prompt's attachments and
// pastes: how they travel in the user record (as structured content blocks,
// like images), the model text the agent's context builder makes of them, and
// the chips every consumer shows in their place. It is pure.
//
// A user record's Text is what the user typed; a long paste stays in it as a
// placeholder, [paste #N: L lines, B bytes], that names the Nth paste block of
// the record's Content. Attached files are resource blocks after it.
package attach

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/dsh-dev/dsh/internal/card"
)

// pasteRef is a paste's placeholder in the typed text.
var pasteRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[paste #(\d+): [^\]\n]*\]`) })

// Placeholder is what stands in the typed text for paste n (1-based).
func Placeholder(n int, text string) string {
	return fmt.Sprintf("[paste #%d: %s, %d bytes]", n, lines(text), len(text))
}

// Pastes turns raw, whose placeholders name the entries of pastes, into a user
// prompt's text and its paste blocks: the placeholders that name a paste are
// numbered again in the order they appear, so #N is the Nth block; the others
// stay as typed.
func Pastes(raw string, pastes map[int]string) (string, []card.Content) {
	if len(pastes) == 0 {
		return raw, nil
	}
	var blocks []card.Content
	text := pasteRef().ReplaceAllStringFunc(raw, func(ref string) string {
		n, _ := strconv.Atoi(pasteRef().FindStringSubmatch(ref)[1])
		p, ok := pastes[n]
		if !ok {
			return ref
		}
		blocks = append(blocks, card.Paste(p))
		return Placeholder(len(blocks), p)
	})
	return text, blocks
}

// ModelText is the text the model is sent for a user prompt: the typed text
// with each paste in place of its placeholder, then each attached resource in an
// <attached> block. A prompt without such blocks (every log written before
// them, whose attachments are already in the text) is sent as it is.
func ModelText(text string, content []card.Content) string {
	if ex := blocks(content, card.ContentExpansion); len(ex) > 0 {
		text = ex[0].Text // a typed command: the model gets what it expanded to
	}
	pastes := blocks(content, card.ContentPaste)
	if len(pastes) > 0 {
		text = pasteRef().ReplaceAllStringFunc(text, func(ref string) string {
			n, _ := strconv.Atoi(pasteRef().FindStringSubmatch(ref)[1])
			if n < 1 || n > len(pastes) {
				return ref
			}
			return pastes[n-1].Text
		})
	}
	var b strings.Builder
	b.WriteString(text)
	for _, r := range blocks(content, card.ContentResource) {
		fence := "```"
		for strings.Contains(r.Text, fence) {
			fence += "`"
		}
		fmt.Fprintf(&b, "%s%s>\n%s%s\n%s", attachOpen, strconv.Quote(r.URI), fence, lang(r.URI), r.Text)
		if r.Text != "" && !strings.HasSuffix(r.Text, "\n") {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s\n%s", fence, attachClose)
	}
	return b.String()
}

// Images are the image blocks of a user prompt's content, which follow its text.
func Images(content []card.Content) []card.Content { return blocks(content, card.ContentImage) }

// View is how consumers show a user prompt: the typed text, each paste's
// placeholder as "[paste: N lines]", and one chip per attached file, "attached
// PATH (N lines)". Attachments that an older log flattened into the text (the
// chat's <attached file> blocks, the editor's <context ref> blocks) are cut from
// the text and shown as chips too.
func View(text string, content []card.Content) (string, []string) {
	pastes := blocks(content, card.ContentPaste)
	if len(pastes) > 0 {
		text = pasteRef().ReplaceAllStringFunc(text, func(ref string) string {
			n, _ := strconv.Atoi(pasteRef().FindStringSubmatch(ref)[1])
			if n < 1 || n > len(pastes) {
				return ref
			}
			return PasteChip(pastes[n-1].Text)
		})
	}
	text, chips := splitLegacy(text)
	for _, e := range blocks(content, card.ContentExpansion) {
		chips = append(chips, ExpansionChip(e.URI, e.Text))
	}
	for _, r := range blocks(content, card.ContentResource) {
		chips = append(chips, Chip(r.URI, r.Text))
	}
	return text, chips
}

// ExpansionChip is the line that shows, under a typed slash command, what it
// expanded to: its first line and its size.
func ExpansionChip(command, text string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if r := []rune(first); len(r) > 60 {
		first = string(r[:59]) + "…"
	}
	return "expanded " + command + " (" + lines(text) + "): " + first
}

// PasteChip is what shows in place of a paste.
func PasteChip(text string) string { return "[paste: " + lines(text) + "]" }

// Chip is the line that shows an attached file.
func Chip(uri, text string) string { return "attached " + uri + " (" + lines(text) + ")" }

// ImageChips are the lines that show a prompt's images where images cannot be
// drawn (the terminal): each one's file (when the prompt named one), type and size.
func ImageChips(content []card.Content) []string {
	var out []string
	for _, c := range blocks(content, card.ContentImage) {
		out = append(out, imageChip(c))
	}
	return out
}

func imageChip(c card.Content) string {
	name := c.URI
	if name == "" {
		name = "an image"
	}
	kib := (base64.StdEncoding.DecodedLen(len(c.Data)) + 1023) / 1024
	return fmt.Sprintf("attached %s (%s, %d KiB)", name, c.MimeType, kib)
}

func lines(text string) string {
	n := strings.Count(strings.TrimSuffix(text, "\n"), "\n") + 1
	if text == "" {
		n = 0
	}
	if n == 1 {
		return "1 line"
	}
	return strconv.Itoa(n) + " lines"
}

func blocks(content []card.Content, t card.ContentType) []card.Content {
	var out []card.Content
	for _, c := range content {
		if c.Type == t {
			out = append(out, c)
		}
	}
	return out
}

// The <attached> block an attachment is sent to the model in (and that the
// chat's logs before structured attachments kept in the text):
//
//	<attached file="main.go">
//	```go
//	…
//	```
//	</attached>
const (
	attachOpen  = "\n\n<attached file="
	attachClose = "</attached>"
	// contextOpen starts the block an editor's embedded resource was flattened
	// into before structured attachments: <context ref="URI">…</context>.
	contextOpen  = "\n\n<context ref=\""
	contextClose = "</context>"
)

// lang is a fence's info string from a file's extension.
func lang(uri string) string {
	name := uri[strings.LastIndexByte(uri, '/')+1:]
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name[i+1:]
	}
	return ""
}

// splitLegacy cuts the attachment blocks an old log flattened into a prompt's
// text (they follow the typed text) and returns a chip for each.
func splitLegacy(text string) (string, []string) {
	i := strings.Index(text, attachOpen)
	if j := strings.Index(text, contextOpen); j >= 0 && (i < 0 || j < i) {
		i = j
	}
	if i < 0 {
		return text, nil
	}
	typed, rest := text[:i], text[i:]
	var chips []string
	for rest != "" {
		var name, body string
		var ok bool
		switch {
		case strings.HasPrefix(rest, attachOpen):
			name, body, rest, ok = cutBlock(rest[len(attachOpen):], attachClose)
			body = unfence(body)
		case strings.HasPrefix(rest, contextOpen):
			name, body, rest, ok = cutBlock(rest[len(contextOpen)-1:], contextClose)
		}
		if !ok {
			return text, nil // not what dsh wrote: show it as it is
		}
		chips = append(chips, Chip(name, body))
	}
	return typed, chips
}

// cutBlock reads `"NAME">\nBODY` up to end from s.
func cutBlock(s, end string) (name, body, rest string, ok bool) {
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", "", "", false
	}
	name, _ = strconv.Unquote(q)
	after, found := strings.CutPrefix(s[len(q):], ">\n")
	if !found {
		return "", "", "", false
	}
	k := strings.Index(after, end)
	if k < 0 {
		return "", "", "", false
	}
	return name, after[:k], after[k+len(end):], true
}

// unfence strips the code fence an <attached> block wraps its file in.
func unfence(body string) string {
	first, rest, ok := strings.Cut(body, "\n")
	if !ok || !strings.HasPrefix(first, "```") {
		return body
	}
	fence := first[:len(first)-len(strings.TrimLeft(first, "`"))]
	return strings.TrimSuffix(strings.TrimSuffix(rest, "\n"), fence)
}
