package bash

import (
	"slices"
	"strings"

	"github.com/dsh-dev/dsh/internal/secretenv"
)

// scrub returns environ without the credentials (secretenv.Secret: keys, tokens,
// passwords, credential-bearing URLs, webhooks, agent sockets), except those
// named in keep: a model that runs `env`, or a script that logs its
// environment, must not see the user's keys.
func scrub(environ, keep []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if secretenv.Secret(name, value) && !slices.Contains(keep, name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}
