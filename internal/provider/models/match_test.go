package models

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// The expressions cloudID and snapshot match by hand; they stay here as the
// reference the hand matchers must agree with.
var (
	cloudIDRef  = regexp.MustCompile(`^(?:[a-z]{2,6}\.)?anthropic\.(.+?)(?:-v[0-9]+(?::[0-9]+)?)?$`)
	snapshotRef = regexp.MustCompile(`^(latest|[0-9]{8}|[0-9]{4}-[0-9]{2}-[0-9]{2})$`)
)

func TestMatchersAgreeWithTheExpressions(t *testing.T) {
	cases := []string{
		"", "anthropic.", "anthropic.x", "anthropic.claude-opus-4-6-v1", "anthropic.claude-3-5-haiku-20241022-v1:0",
		"global.anthropic.claude-sonnet-5-5-v1:0", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "u.anthropic.x",
		"abcdefg.anthropic.x", "US.anthropic.x", "eu.anthropic.", "eu.anthropic.-v1", "anthropic.-v1", "anthropic.a-v",
		"anthropic.a-v1:", "anthropic.a-v1:2:3", "anthropic.a-v1-v2", "anthropic.a-v1x", "anthropic.a\n-v1", "anthropic.a\n",
		"anthropic.a-v1\n", "xx.yy.anthropic.a", "anthropic.anthropic.a", "meta.llama3-1-70b-instruct-v1:0", "claude-opus-4",
		"latest", "20250929", "2024-08-06", "2024-08-6", "202509291", "2025092", "latest1", "2024/08/06", "2024-0806-",
		"12345678\n", "-v1", "a-v-v1",
	}
	// And strings made of the pieces the expressions care about.
	pieces := []string{"anthropic", ".", "us", "global", "abcdefg", "-v", "1", "12", ":", "0", "-", "x", "latest", "\n", "2024", "08"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		s := ""
		for range r.IntN(7) {
			s += pieces[r.IntN(len(pieces))]
		}
		cases = append(cases, s)
	}
	for _, s := range cases {
		want, wantOK := "", false
		if m := cloudIDRef.FindStringSubmatch(s); m != nil {
			want, wantOK = m[1], true
		}
		if got, ok := cloudID(s); got != want || ok != wantOK {
			t.Errorf("cloudID(%q) = %q, %v; the expression says %q, %v", s, got, ok, want, wantOK)
		}
		if got, want := snapshot(s), snapshotRef.MatchString(s); got != want {
			t.Errorf("snapshot(%q) = %v; the expression says %v", s, got, want)
		}
	}
}
