package models

import "github.com/dsh-dev/dsh/internal/provider"

// Rough rates for estimating a request before the provider counts it: about
// four bytes of English or code per token, and a fixed cost per image (the
// size both vendors charge for a picture of about a megapixel).
const (
	bytesPerToken = 4
	imageTokens   = 1600
	// partOverhead covers the framing each message part and tool costs.
	partOverhead = 4
)

// Estimate guesses how many input tokens req will count, for deciding before a
// call whether the context is near the window; after the call the provider's
// own count replaces it. It errs high rather than low.
func Estimate(req provider.Request) int64 {
	n := tokens(len(req.System))
	for _, t := range req.Tools {
		n += partOverhead + tokens(len(t.Name)+len(t.Description)+len(t.Schema))
	}
	for _, m := range req.Messages {
		n += EstimateMessage(m)
	}
	return n
}

// EstimateMessage guesses the tokens of one message, so that a caller that
// knows the provider's count up to some message can add only what came after.
func EstimateMessage(m provider.Message) int64 {
	var n int64
	for _, p := range m.Parts {
		n += EstimatePart(p)
	}
	return n
}

// EstimatePart guesses the tokens of one message part; a message's estimate is
// the sum of its parts'.
func EstimatePart(p provider.Part) int64 {
	n := partOverhead + tokens(len(p.Text)+len(p.Signature)+len(p.Name)+len(p.Args))
	for _, c := range p.Content {
		if c.Type == "image" {
			n += imageTokens
		} else {
			n += tokens(len(c.Text))
		}
	}
	return n
}

func tokens(bytes int) int64 { return int64((bytes + bytesPerToken - 1) / bytesPerToken) }
