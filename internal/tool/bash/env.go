package bash

import (
	"slices"
	"strings"
)

// Names that look like credentials never reach a command: a model that runs `env`
// or a script that logs its environment must not see the user's keys.
var (
	secretSuffixes = []string{"API_KEY", "APIKEY", "TOKEN", "SECRET_KEY", "ACCESS_KEY", "PRIVATE_KEY", "CREDENTIALS", "PASSPHRASE"}
	secretWords    = []string{"SECRET", "PASSWORD", "PASSWD"}
	secretPrefixes = []string{"AWS_", "AZURE_"}
	secretNames    = []string{"GOOGLE_APPLICATION_CREDENTIALS"}
)

// looksSecret reports whether an environment variable name looks like a credential.
func looksSecret(name string) bool {
	n := strings.ToUpper(name)
	for _, s := range secretSuffixes {
		if n == s || strings.HasSuffix(n, "_"+s) {
			return true
		}
	}
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	for _, p := range secretPrefixes {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return slices.Contains(secretNames, n)
}

// scrub returns environ without the secret-looking variables, except those named
// in keep.
func scrub(environ, keep []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if looksSecret(name) && !slices.Contains(keep, name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}
