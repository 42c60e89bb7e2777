package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/dsh-dev/dsh/internal/credentials"
)

// runLoginCmd stores a provider's API key in the user's credentials file,
// where every dsh finds it when the environment has none (an editor's sign-in
// runs it in a terminal).
func runLoginCmd(_ context.Context, io IO, args []string) error {
	fs := newFlags(io, "login", "", `Reads an API key from the terminal (or one line of stdin) and keeps it in
the credentials file, $XDG_CONFIG_HOME/dsh/credentials (else
~/.config/dsh/credentials), readable by you alone. dsh uses it whenever the
environment has no key of its own; it never reaches a session log or a
command's environment. A key starting sk-ant- is Anthropic's, another sk- key
OpenAI's; --provider says which when it cannot be told.`)
	prov := fs.String("provider", "", "whose key it is: anthropic or openai (default: told from the key)")
	if err := parse(io, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageErr(io, fs, "takes no arguments: the key is read from the terminal")
	}
	if *prov != "" && *prov != "anthropic" && *prov != "openai" {
		return usageErr(io, fs, "--provider: want anthropic or openai, got %q", *prov)
	}
	path := credentials.Path(io.Getenv)
	key, err := readKey(io)
	if err != nil {
		return err
	}
	name, err := keyName(*prov, key)
	if err != nil {
		return err
	}
	if err := credentials.Store(path, name, key); err != nil {
		return err
	}
	fmt.Fprintf(io.Out, "Stored %s in %s (readable by you alone).\ndsh uses it wherever the environment sets no %s.\n", name, path, name)
	return nil
}

// readKey reads the key without echoing it when stdin is a terminal.
func readKey(io IO) (string, error) {
	if f, ok := io.In.(*os.File); ok && io.InIsTerminal {
		fmt.Fprint(io.Err, "API key (not shown): ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(io.Err)
		if err != nil {
			return "", fmt.Errorf("reading the key: %w", err)
		}
		return strings.TrimSpace(string(b)), nonEmpty(string(b))
	}
	line, err := bufio.NewReader(io.In).ReadString('\n')
	if err != nil && line == "" {
		return "", errors.New("no key on stdin")
	}
	return strings.TrimSpace(line), nonEmpty(line)
}

func nonEmpty(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("no key given")
	}
	return nil
}

func keyName(prov, key string) (string, error) {
	switch {
	case prov == "anthropic", prov == "" && strings.HasPrefix(key, "sk-ant-"):
		return "ANTHROPIC_API_KEY", nil
	case prov == "openai", prov == "" && strings.HasPrefix(key, "sk-"):
		return "OPENAI_API_KEY", nil
	}
	return "", errors.New("cannot tell whose key this is: pass --provider anthropic or --provider openai")
}
