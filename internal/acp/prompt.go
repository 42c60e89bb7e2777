package acp

import (
	"errors"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
)

// promptText turns a prompt's content blocks into the text the agent sends the
// model. Text is kept as written; a mentioned resource becomes a Markdown link
// where it was mentioned; the text of embedded resources (the files an editor
// attaches) follows the prompt in <context> blocks. Images and audio are refused:
// dsh does not advertise them.
func promptText(blocks []sdk.ContentBlock) (string, error) {
	var b, ctx strings.Builder
	for _, c := range blocks {
		switch {
		case c.Text != nil:
			b.WriteString(c.Text.Text)
		case c.ResourceLink != nil:
			b.WriteString(mention(c.ResourceLink.Name, c.ResourceLink.Uri))
		case c.Resource != nil:
			switch r := c.Resource.Resource; {
			case r.TextResourceContents != nil:
				b.WriteString(mention(r.TextResourceContents.Uri, r.TextResourceContents.Uri))
				ctx.WriteString("\n\n<context ref=\"" + r.TextResourceContents.Uri + "\">\n" +
					strings.TrimSuffix(r.TextResourceContents.Text, "\n") + "\n</context>")
			case r.BlobResourceContents != nil:
				b.WriteString(mention(r.BlobResourceContents.Uri, r.BlobResourceContents.Uri))
			}
		case c.Image != nil:
			return "", errors.New("dsh does not take images in prompts")
		case c.Audio != nil:
			return "", errors.New("dsh does not take audio in prompts")
		}
	}
	text := b.String() + ctx.String()
	if strings.TrimSpace(text) == "" {
		return "", errors.New("the prompt is empty")
	}
	return text, nil
}

// mention is a resource reference in the prompt, e.g. [@main.go](file:///src/main.go).
func mention(name, uri string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 && i < len(name)-1 {
		name = name[i+1:]
	}
	return "[@" + name + "](" + uri + ")"
}
