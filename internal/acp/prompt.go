package acp

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/card"
)

// maxImages bounds the images of one prompt (Anthropic takes at most 100 in a
// request; a prompt should leave room for the conversation's others).
const maxImages = 20

// promptText turns a prompt's content blocks into the text the user typed and
// the prompt's structured parts. Text is kept as written; a mentioned resource
// becomes a Markdown link where it was mentioned, or, when one of the
// session's MCP servers lists it, its @SERVER:URI mention, which the host
// reads and attaches (mcp gives the session's mentions by URI, asked only
// for a prompt with links; nil: none); the text of an embedded
// resource (a file an editor attaches) becomes a resource block (package
// attach says how the model gets it and how every consumer shows it); images
// follow. Audio is refused: dsh does not advertise it.
func promptText(blocks []sdk.ContentBlock, mcp func() map[string]string) (string, []card.Content, error) {
	var b strings.Builder
	var images, files []card.Content
	var served map[string]string
	apart := false // a mention was just written: it ends at a space
	for _, c := range blocks {
		if c.Text != nil && c.Text.Text == "" {
			continue
		}
		if apart && (c.Text == nil || !startsSpace(c.Text.Text)) {
			b.WriteByte(' ')
		}
		apart = false
		switch {
		case c.Text != nil:
			b.WriteString(c.Text.Text)
		case c.ResourceLink != nil:
			if served == nil && mcp != nil {
				served = mcp()
			}
			if m, ok := served[c.ResourceLink.Uri]; ok {
				// A mention starts after a space and ends at one.
				if s := b.String(); s != "" && !endsSpace(s) {
					b.WriteByte(' ')
				}
				b.WriteString(m)
				apart = true
				continue
			}
			b.WriteString(mention(c.ResourceLink.Name, c.ResourceLink.Uri))
		case c.Resource != nil:
			switch r := c.Resource.Resource; {
			case r.TextResourceContents != nil:
				b.WriteString(mention(r.TextResourceContents.Uri, r.TextResourceContents.Uri))
				if r.TextResourceContents.Uri != "" {
					files = append(files, card.Resource(r.TextResourceContents.Uri, r.TextResourceContents.Text))
				}
			case r.BlobResourceContents != nil:
				b.WriteString(mention(r.BlobResourceContents.Uri, r.BlobResourceContents.Uri))
			}
		case c.Image != nil:
			img, err := image(c.Image)
			if err != nil {
				return "", nil, err
			}
			if len(images) == maxImages {
				return "", nil, fmt.Errorf("a prompt takes at most %d images", maxImages)
			}
			images = append(images, img)
		case c.Audio != nil:
			return "", nil, errors.New("dsh does not take audio in prompts")
		}
	}
	text := b.String()
	if strings.TrimSpace(text) == "" && len(images) == 0 && len(files) == 0 {
		return "", nil, errors.New("the prompt is empty")
	}
	return text, append(files, images...), nil
}

func startsSpace(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}

func endsSpace(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return unicode.IsSpace(r)
}

// image checks an image block: base64 data of an image type (the providers
// scale and convert it to what they take).
func image(c *sdk.ContentBlockImage) (card.Content, error) {
	if !strings.HasPrefix(c.MimeType, "image/") {
		return card.Content{}, fmt.Errorf("an image block has MIME type %q, not an image type", c.MimeType)
	}
	if c.Data == "" {
		return card.Content{}, errors.New("an image block has no data (images by URI are not fetched)")
	}
	if _, err := base64.StdEncoding.DecodeString(c.Data); err != nil {
		return card.Content{}, fmt.Errorf("an image block's data is not base64: %w", err)
	}
	return card.Image(c.MimeType, c.Data), nil
}

// mention is a resource reference in the prompt, e.g. [@main.go](file:///src/main.go).
func mention(name, uri string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 && i < len(name)-1 {
		name = name[i+1:]
	}
	return "[@" + name + "](" + uri + ")"
}
