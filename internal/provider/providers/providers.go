// Package providers chooses and builds the model provider from command-line
// flags and the environment. It lives apart from package provider because it
// imports the implementations, which import provider.
package providers

import (
	"errors"
	"fmt"
	"os"

	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/anthropic"
	"github.com/dsh-dev/dsh/internal/provider/openai"
	"github.com/dsh-dev/dsh/internal/provider/script"
)

// Flags are the command-line choices that shape the provider.
type Flags struct {
	Provider string // "" (choose from the environment), "anthropic", "openai" or "script"
	Model    string // "" for the provider's default
	Script   string // the script file, for "script"; setting it alone implies "script"
}

// ErrNoProvider says that nothing selects a provider, and what would.
var ErrNoProvider = errors.New(`no model provider is configured. Set one of:
  ANTHROPIC_API_KEY  to use Anthropic (Claude)
  OPENAI_API_KEY     to use OpenAI
  OPENAI_BASE_URL    to use an OpenAI-compatible server, e.g. http://localhost:11434/v1 for ollama
or pass --provider script --script FILE.
To see dsh at work without any of these, run: dsh demo`)

// Keyed reports whether getenv sets what FromEnv needs to choose a provider
// by itself.
func Keyed(getenv func(string) string) bool {
	return getenv("ANTHROPIC_API_KEY") != "" || getenv("OPENAI_API_KEY") != "" || getenv("OPENAI_BASE_URL") != ""
}

// FromEnv builds the provider the flags ask for, reading its settings through
// getenv (os.Getenv in production). With no provider named it picks Anthropic
// when ANTHROPIC_API_KEY is set, else OpenAI when OPENAI_API_KEY or
// OPENAI_BASE_URL is, else it returns ErrNoProvider.
func FromEnv(getenv func(string) string, flags Flags) (provider.Provider, error) {
	name := flags.Provider
	if name == "" {
		switch {
		case flags.Script != "":
			name = "script"
		case getenv("ANTHROPIC_API_KEY") != "":
			name = "anthropic"
		case getenv("OPENAI_API_KEY") != "" || getenv("OPENAI_BASE_URL") != "":
			name = "openai"
		default:
			return nil, ErrNoProvider
		}
	}
	switch name {
	case "anthropic":
		p, err := anthropic.New(anthropic.Config{
			APIKey:  getenv("ANTHROPIC_API_KEY"),
			BaseURL: getenv("ANTHROPIC_BASE_URL"),
			Model:   flags.Model,
		})
		if err != nil {
			return nil, err // not a typed nil in a non-nil interface
		}
		return p, nil
	case "openai":
		p, err := openai.New(openai.Config{
			APIKey:  getenv("OPENAI_API_KEY"),
			BaseURL: getenv("OPENAI_BASE_URL"),
			Model:   flags.Model,
		})
		if err != nil {
			return nil, err
		}
		return p, nil
	case "script":
		if flags.Script == "" {
			return nil, errors.New("--provider script needs --script FILE")
		}
		f, err := os.Open(flags.Script)
		if err != nil {
			return nil, err
		}
		defer func() { _ = f.Close() }()
		s, err := script.Load(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", flags.Script, err)
		}
		return s, nil
	default:
		return nil, fmt.Errorf("unknown provider %q: use anthropic, openai or script", name)
	}
}
