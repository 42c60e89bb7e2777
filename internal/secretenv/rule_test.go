package secretenv

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestSecret attacks the rule with the credential names of issue 12 (the 13 the
// old rule missed first) and with harmless variables that must survive.
func TestSecret(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		secret      bool
	}{
		// Missed by the old name-only rule.
		{"DATABASE_URL", "postgres://app:hunter2@db.internal:5432/app", true},
		{"REDIS_URL", "redis://:hunter2@cache:6379/0", true},
		{"MYSQL_PWD", "hunter2", true},
		{"STRIPE_KEY", "sk_live_x", true},
		{"GCP_SA_KEY", "{}", true},
		{"SENTRY_DSN", "https://abc@o1.ingest.sentry.io/1", true},
		{"SLACK_WEBHOOK_URL", "https://hooks.slack.com/services/T/B/x", true},
		{"CI_JOB_JWT", "eyJ...", true},
		{"NPM_CONFIG__AUTH", "dXNlcjpwYXNz", true},
		{"GITLAB_PAT", "glpat-x", true},
		{"COOKIE_SIGNING_KEY", "x", true},
		{"DOCKER_AUTH_CONFIG", `{"auths":{}}`, true},
		{"SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1", true},
		// Caught before and still caught.
		{"ANTHROPIC_API_KEY", "sk-ant-x", true},
		{"OPENAI_API_KEY", "sk-x", true},
		{"GITHUB_TOKEN", "ghp_x", true},
		{"GH_TOKEN", "gho_x", true},
		{"NPM_TOKEN", "npm_x", true},
		{"HF_TOKEN", "hf_x", true},
		{"AWS_ACCESS_KEY_ID", "AKIA", true},
		{"AWS_SECRET_ACCESS_KEY", "x", true},
		{"AWS_SESSION_TOKEN", "x", true},
		{"AZURE_CLIENT_SECRET", "x", true},
		{"GOOGLE_APPLICATION_CREDENTIALS", "/k.json", true},
		{"PGPASSWORD", "x", true},
		{"DB_PASSWORD", "x", true},
		{"SSH_PRIVATE_KEY", "-----BEGIN", true},
		{"CLIENT_SECRET", "x", true},
		// More of the same families.
		{"CI_JOB_JWT_V2", "eyJ", true},
		{"GPG_AGENT_INFO", "/run/gpg:0:1", true},
		{"IDENTITY_HEADER", "0f3c6a1e-8f4b-4d0e-9a51-2b7c1d9e6f42", true},
		{"IDENTITY_ENDPOINT", "http://localhost:42356/msi/token", false},
		{"ANTHROPIC_CUSTOM_HEADERS", "cf-aig-authorization: Bearer x", true},
		{"ANTHROPIC_AUTH_TOKEN", "gw-x", true},
		{"NGROK_AUTHTOKEN", "x", true},
		{"OPENAI_APIKEY", "x", true},
		{"HTTPS_PROXY", "http://user:pw@proxy:3128", true},
		{"ANTHROPIC_BASE_URL", "https://u:p@gateway.example/v1", true},
		{"NOTIFY_URL", "https://discord.com/api/webhooks/1/x", true},
		{"TEAMS_URL", "https://acme.webhook.office.com/webhookb2/x", true},
		{"api_key", "x", true},
		{"TOKEN", "x", true},
		// Issue 19's spellings.
		{"DB_PASS", "x", true},
		{"SMTP_PASS", "x", true},
		{"LDAP_BIND_PW", "x", true},
		{"BW_SESSION", "x", true},
		{"OP_SESSION_my_team", "x", true},
		{"TOKEN_GITHUB", "ghp_x", true},
		{"GCP_CREDENTIALS_JSON", "{}", true},
		{"SESSION_COOKIE", "x", true},
		{"PRIVATE_KEY_PEM", "-----BEGIN", true},
		{"NPM_RC", "//registry.npmjs.org/:_authToken=npm_x", true},
		{"NPMRC", "registry=https://r.example\n_auth=dXNlcjpwYXNz", true},
		{"MYSQL_CONN", "app:hunter2@tcp(db:3306)/app", true},
		{"PG_CONN", "host=db user=app password=hunter2", true},
		{"MSSQL_CONN", "Server=db;Database=app;Password=hunter2;", true},
		{"DB_CREDS", "x", true},
		{"SIGNING_KEYS", "x", true},
		{"GH_PASS_FILE", "/p", true},
		// Issue 34: JSON keys in a variable whatever its name.
		{"GOOGLE_CLOUD_KEYFILE_JSON", `{"type": "service_account"}`, true},
		{"TF_VAR_sa", `{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\nMII"}`, true},
		{"CLOUDSDK_CONFIG_BLOB", `{"installed": {"client_id": "x", "client_secret": "y"}}`, true},
		{"SIGNER", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl", true},
		// Harmless: must reach commands.
		{"PATH", "/usr/bin:/bin", false},
		{"HOME", "/home/u", false},
		{"TERM", "xterm-256color", false},
		{"LANG", "C.UTF-8", false},
		{"LC_ALL", "C.UTF-8", false},
		{"USER", "u", false},
		{"SHELL", "/bin/bash", false},
		{"PWD", "/home/u/src", false},
		{"OLDPWD", "/home/u", false},
		{"EDITOR", "vi", false},
		{"GOPATH", "/home/u/go", false},
		{"GOCACHE", "/home/u/.cache/go-build", false},
		{"GOMODCACHE", "/home/u/go/pkg/mod", false},
		{"GOFLAGS", "-mod=mod", false},
		{"CARGO_HOME", "/home/u/.cargo", false},
		{"KEYTIMEOUT", "1", false},
		{"KEYBOARD", "us", false},
		{"TOKENIZERS_PARALLELISM", "false", false},
		{"GIT_AUTHOR_NAME", "A. U. Thor", false},
		{"GIT_AUTHOR_EMAIL", "a@example.com", false},
		{"GIT_COMMITTER_NAME", "C", false},
		{"SSL_CERT_FILE", "/etc/ssl/cert.pem", false},
		{"HTTP_PROXY", "http://proxy:3128", false},
		{"DATABASE_URL", "postgres://localhost/app", false},
		{"GIT_URL", "ssh://git@github.com/o/r.git", false},
		{"JDBC_URL", "jdbc:mysql://db:3306/app", false},
		{"DSH_KEEP_ENV", "GITHUB_TOKEN", false},
		{"XDG_SESSION_ID", "2", false},
		{"XDG_SESSION_TYPE", "tty", false},
		{"SESSION_MANAGER", "local/x:@/tmp/.ICE-unix/1", false},
		{"EMAIL", "a@example.com", false},
		{"GIT_REMOTE", "git@github.com:o/r.git", false},
		{"GOPROXY", "https://proxy.golang.org,direct", false},
		{"LS_COLORS", "rs=0:di=01;34:ln=01;36", false},
		{"MAKEFLAGS", "-j4 V=1", false},
		{"NODE_OPTIONS", `--require ./hook.js`, false},
		{"APP_CONFIG", `{"port": 8080, "debug": true}`, false},
	} {
		if got := Secret(tc.name, tc.value); got != tc.secret {
			t.Errorf("Secret(%q, %q) = %v, want %v", tc.name, tc.value, got, tc.secret)
		}
	}
}

// TestSecretKeyFile: a variable naming a JSON key file (a service account's,
// an OAuth client's) is a secret whatever its name; one naming any other JSON
// file, a FIFO or nothing is not, and reading it never blocks.
func TestSecretKeyFile(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"sa.json":       `{"type": "service_account", "project_id": "p", "private_key": "-----BEGIN PRIVATE KEY-----\nMII"}`,
		"client.JSON":   `{"web": {"client_id": "x", "client_secret": "y"}}`,
		"tsconfig.json": `{"compilerOptions": {"strict": true}}`,
		"sa.txt":        `{"private_key": "x"}`, // not named as JSON: not read
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fifo := filepath.Join(dir, "pipe.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		value  string
		secret bool
	}{
		{filepath.Join(dir, "sa.json"), true},
		{filepath.Join(dir, "client.JSON"), true},
		{filepath.Join(dir, "tsconfig.json"), false},
		{filepath.Join(dir, "sa.txt"), false},
		{fifo, false},
		{filepath.Join(dir, "missing.json"), false},
		{"sa.json", false}, // relative: not looked up
	} {
		if got := Secret("MY_SETTINGS", tc.value); got != tc.secret {
			t.Errorf("Secret(MY_SETTINGS=%s) = %v, want %v", tc.value, got, tc.secret)
		}
	}
}
