// Package secretenv keeps credentials in dsh: it says which environment
// variables are secrets (Secret), and at start-up it moves them out of the
// process's environment, where commands could read them, into memory that only
// dsh reads (Hide, Getenv).
package secretenv

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// The rule, by name (upper-cased and split into words at "_") and by value. A
// false positive costs a variable the user can pass back with DSH_KEEP_ENV; a
// false negative leaks a credential to a model-driven command, so the rule errs
// towards secret.
var (
	// secretLastWords end a secret's name: STRIPE_KEY, GITLAB_PAT, MYSQL_PWD.
	// BW_SESSION (Bitwarden's unlocked vault).
	secretLastWords = []string{"PAT", "PWD", "DSN", "SESSION"}
	// secretWords are secret anywhere in a name: CI_JOB_JWT_V2, SLACK_WEBHOOK_URL,
	// TOKEN_GITHUB, GCP_CREDENTIALS_JSON, PRIVATE_KEY_PEM, SESSION_COOKIE, DB_PASS,
	// LDAP_BIND_PW, GOOGLE_CLOUD_KEYFILE_JSON.
	secretWords = []string{"JWT", "WEBHOOK", "WEBHOOKS", "SECRETS", "KEY", "KEYS", "KEYFILE", "APIKEY", "TOKEN", "TOKENS",
		"CREDENTIALS", "CREDENTIAL", "CREDS", "PASSPHRASE", "PRIVATE", "COOKIE", "COOKIES", "PASS", "PW"}
	// secretSubstrings are secret inside a word too: PGPASSWORD, NPM_CONFIG__AUTH,
	// SSH_AUTH_SOCK, DOCKER_AUTH_CONFIG, NGROK_AUTHTOKEN.
	secretSubstrings = []string{"SECRET", "PASSWORD", "PASSWD", "AUTH"}
	// harmlessWords contain a secret substring but are not secrets: GIT_AUTHOR_NAME.
	harmlessWords = []string{"AUTHOR", "AUTHORS"}
	// secretPrefixes are whole families of credentials and account settings.
	// OP_SESSION_<account> is 1Password's CLI session.
	secretPrefixes = []string{"AWS_", "AZURE_", "OP_SESSION_"}
	// secretNames are secrets whose names follow none of the rules: agent
	// sockets let a command use the user's keys without reading them;
	// IDENTITY_HEADER lets it take tokens of an Azure App Service's or
	// Container App's managed identity; ANTHROPIC_CUSTOM_HEADERS holds a
	// gateway's (cf-aig-authorization: Bearer …).
	secretNames = []string{"GOOGLE_APPLICATION_CREDENTIALS", "SSH_AUTH_SOCK", "GPG_AGENT_INFO", "IDENTITY_HEADER", "ANTHROPIC_CUSTOM_HEADERS"}
	// harmlessNames match a rule but are not secrets: the shell's directories.
	harmlessNames = []string{"PWD", "OLDPWD"}

	// credentialURL is a URL with a password: postgres://user:pass@host,
	// redis://:pass@host.
	credentialURL = lazyRegexp(`[A-Za-z][A-Za-z0-9+.-]*://[^/?#@\s]*:[^/?#@\s]*@`)
	// webhookHosts are URLs that anyone holding them can post to.
	webhookHosts = []string{"hooks.slack.com/", "discord.com/api/webhooks/", "discordapp.com/api/webhooks/", ".webhook.office.com/"}
	// credentialDSN is a password in a connection string without a scheme: Go's
	// MySQL "app:pw@tcp(db)/app", or key=value ones ("host=db password=pw",
	// "Server=db;Password=pw").
	credentialDSN = lazyRegexp(`^[^\s:/@=]+:[^\s/@]+@|(?i)(^|[\s;])(password|passwd|pwd)\s*=\s*[^\s;]`)
	// credentialConfig is a config file's text held in a variable: an .npmrc with
	// "//registry/:_authToken=…", "_auth=", "_password=".
	credentialConfig = lazyRegexp(`(?i)(^|[\s:])_(authToken|auth|password)\s*=`)
	// keyMarkers are what a key's own text holds: a service account's or an
	// OAuth client's JSON, a PEM private key.
	keyMarkers = []string{`"private_key"`, `"client_secret"`, `"refresh_token"`, "PRIVATE KEY-----"}
)

// maxKeyFile bounds what is read of a file a variable names: a key file is a
// few kilobytes.
const maxKeyFile = 1 << 20

// Secret reports whether the environment variable name=value is a credential.
func Secret(name, value string) bool {
	return secretName(name) || secretValue(value)
}

func secretName(name string) bool {
	n := strings.ToUpper(name)
	if slices.Contains(harmlessNames, n) {
		return false
	}
	if slices.Contains(secretNames, n) {
		return true
	}
	for _, p := range secretPrefixes {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	words := strings.Split(n, "_")
	if slices.Contains(secretLastWords, words[len(words)-1]) {
		return true
	}
	for _, w := range words {
		if slices.Contains(secretWords, w) {
			return true
		}
		if slices.Contains(harmlessWords, w) {
			continue
		}
		for _, s := range secretSubstrings {
			if strings.Contains(w, s) {
				return true
			}
		}
	}
	return false
}

// lazyRegexp compiles expr on first use: every start checks the environment,
// and most values never reach a pattern.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

func secretValue(v string) bool {
	if strings.ContainsAny(v, "@=") && (credentialDSN().MatchString(v) || credentialConfig().MatchString(v)) {
		return true
	}
	if holdsKey(v) || keyFile(v) {
		return true
	}
	if !strings.Contains(v, "://") {
		return false // the common case, cheaply
	}
	if credentialURL().MatchString(v) {
		return true
	}
	for _, h := range webhookHosts {
		if strings.Contains(v, h) {
			return true
		}
	}
	return false
}

func holdsKey(s string) bool {
	return slices.ContainsFunc(keyMarkers, func(m string) bool { return strings.Contains(s, m) })
}

// keyFile reports whether v names a JSON file that holds a key, as
// GOOGLE_APPLICATION_CREDENTIALS does under any name: a command given the
// variable knows where the key is. Only a regular file is read, capped, and
// without waiting on a FIFO.
func keyFile(v string) bool {
	if !filepath.IsAbs(v) || !strings.HasSuffix(strings.ToLower(v), ".json") {
		return false
	}
	f, err := os.OpenFile(v, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	b, _ := io.ReadAll(io.LimitReader(f, maxKeyFile))
	return holdsKey(string(b))
}
