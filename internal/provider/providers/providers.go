// Package providers chooses and builds the model provider from command-line
// flags and the environment. It lives apart from package provider because it
// imports the implementations, which import provider.
package providers

import (
	"errors"
	"fmt"
	"os"
	"sync"

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
		s, err := loadScript(flags.Script)
		if err != nil {
			return nil, err
		}
		return s, nil
	default:
		return nil, fmt.Errorf("unknown provider %q: use anthropic, openai or script", name)
	}
}

// scripts are the script files read so far, by path: each session builds its
// provider, and a process's sessions that play one unchanged file share its
// parsed turns instead of each parsing (and keeping) them again.
var scripts struct {
	sync.Mutex
	m map[string]scriptFile
}

type scriptFile struct {
	fi os.FileInfo
	s  *script.Script
}

// loadScript is the script in path, its turns none played yet.
func loadScript(path string) (*script.Script, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	scripts.Lock()
	defer scripts.Unlock()
	if c, ok := scripts.m[path]; ok && os.SameFile(c.fi, fi) && c.fi.Size() == fi.Size() && c.fi.ModTime().Equal(fi.ModTime()) {
		return c.s.Fresh(), nil
	}
	s, err := script.Load(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if scripts.m == nil {
		scripts.m = map[string]scriptFile{}
	}
	scripts.m[path] = scriptFile{fi, s}
	return s.Fresh(), nil
}
