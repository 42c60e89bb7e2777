// Package skills finds the Agent Skills a session may use: folders holding a
// SKILL.md whose YAML front matter names the skill and says what it is for.
// Only the name and description are read up front (they go in the system
// prompt); the body and the folder's other files are read when the model
// loads the skill. A project's skills are the repository's files and are read
// inside it only (workspace.ReadProjectFile's rule), capped; they are
// instructions, like AGENTS.md, and widen nothing. Until the user trusts the
// project, what its skills add to every request is bounded, and the system
// prompt lists them apart, as the repository's.
package skills

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/dsh-dev/dsh/internal/workspace"
)

// Skill is one skill found.
type Skill struct {
	Name        string
	Description string
	// Dir is the skill's folder (absolute); Root the repository it is in, ""
	// for the user's own.
	Dir, Root string
}

// Dir is a directory of skill folders.
type Dir struct {
	Path string
	Root string // "": the user's own directory
	// Trusted says the user trusts the project Root: its skills are offered
	// without the bound of an untrusted repository's.
	Trusted bool
	// Plugin names the plugin the directory is of: its skills are
	// PLUGIN:NAME, as Claude Code namespaces them.
	Plugin string
}

// Dirs are where skills are looked for, in order of precedence: the user's
// $XDG_CONFIG_HOME/dsh/skills (else ~/.config/dsh/skills) and ~/.claude/skills, so a repository
// cannot replace a skill the user relies on, then the project's .dsh/skills,
// .claude/skills and .agents/skills.
func Dirs(root string, getenv func(string) string) []Dir {
	var dirs []Dir
	if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		dirs = append(dirs, Dir{Path: filepath.Join(x, "dsh", "skills")})
	} else if h := getenv("HOME"); filepath.IsAbs(h) {
		dirs = append(dirs, Dir{Path: filepath.Join(h, ".config", "dsh", "skills")})
	}
	if h := getenv("HOME"); filepath.IsAbs(h) { // what Claude Code users have
		dirs = append(dirs, Dir{Path: filepath.Join(h, ".claude", "skills")})
	}
	for _, d := range []string{".dsh", ".claude", ".agents"} {
		dirs = append(dirs, Dir{Path: filepath.Join(root, d, "skills"), Root: root})
	}
	return dirs
}

const (
	maxFile        = 256 << 10 // SKILL.md, or a file of the folder the model loads
	maxDescription = 1024
	maxSkills      = 200
	// maxUntrusted bounds the bytes of names and descriptions an untrusted
	// repository's skills add to every request (200 of them added ~78k tokens).
	maxUntrusted = 8 << 10
)

// validName is the Agent Skills rule: lowercase letters, digits and single
// hyphens, at most 64 characters.
var validName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })

// All reads the skills of dirs; the first of a name wins. What cannot be read
// or is malformed is skipped and told in the error.
func All(dirs []Dir) ([]Skill, error) {
	var out []Skill
	var errs []error
	seen := map[string]bool{}
	untrusted, bounded := 0, false // bytes so far of an untrusted repository's, and whether some were left out
	for _, d := range dirs {
		entries, err := os.ReadDir(d.Path)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("skills in %s: %w", d.Path, err))
			}
			continue
		}
		for _, e := range entries {
			if len(out) == maxSkills {
				errs = append(errs, fmt.Errorf("skills in %s: more than %d; the rest are not offered", d.Path, maxSkills))
				break
			}
			if e.Type().IsRegular() {
				continue // a skill is a folder
			}
			s := Skill{Dir: filepath.Join(d.Path, e.Name()), Root: d.Root}
			b, err := s.read("SKILL.md")
			if errors.Is(err, fs.ErrNotExist) {
				continue // not a skill folder
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("skill %s: %w", s.Dir, err))
				continue
			}
			front, _, err := split(b)
			if err == nil {
				err = s.parse(front)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("skill %s: %w", filepath.Join(s.Dir, "SKILL.md"), err))
				continue
			}
			if d.Plugin != "" {
				s.Name = d.Plugin + ":" + s.Name
			}
			if seen[s.Name] {
				continue
			}
			if d.Root != "" && !d.Trusted {
				n := len(s.Name) + len(s.Description) + 4
				if bounded || untrusted+n > maxUntrusted {
					bounded = true
					continue
				}
				untrusted += n
			}
			seen[s.Name] = true
			out = append(out, s)
		}
	}
	if bounded {
		errs = append(errs, fmt.Errorf("the repository's skills past %d KiB of names and descriptions are not offered: the project is not trusted", maxUntrusted>>10))
	}
	return out, errors.Join(errs...)
}

func (s *Skill) parse(front []byte) error {
	var f struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
	}
	if err := yaml.Unmarshal(front, &f); err != nil {
		return fmt.Errorf("front matter: %w", err)
	}
	s.Name, s.Description = strings.TrimSpace(f.Name), strings.Join(strings.Fields(f.Description), " ")
	switch {
	case s.Name == "":
		return errors.New("front matter: no name")
	case len(s.Name) > 64 || !validName().MatchString(s.Name):
		return fmt.Errorf("name %q: want lowercase letters, digits and hyphens, at most 64 characters", s.Name)
	case s.Description == "":
		return errors.New("front matter: no description")
	case len(s.Description) > maxDescription:
		return fmt.Errorf("description longer than %d characters", maxDescription)
	}
	return nil
}

// split cuts SKILL.md into its front matter and its body.
func split(b []byte) (front, body []byte, err error) {
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	rest, ok := bytes.CutPrefix(b, []byte("---\n"))
	if !ok {
		return nil, nil, errors.New("no front matter (a --- block with name and description)")
	}
	front, body, ok = bytes.Cut(rest, []byte("\n---\n"))
	if !ok {
		if front, ok = bytes.CutSuffix(rest, []byte("\n---")); !ok {
			return nil, nil, errors.New("the front matter is not closed with ---")
		}
	}
	return front, body, nil
}

// Body is the skill's instructions: SKILL.md after its front matter.
func (s Skill) Body() (string, error) {
	b, err := s.read("SKILL.md")
	if err != nil {
		return "", err
	}
	_, body, err := split(b)
	return strings.TrimLeft(string(body), "\n"), err
}

// File reads a file of the skill's folder (rel, slash-separated, inside it).
func (s Skill) File(rel string) (string, error) {
	clean := filepath.Clean(filepath.FromSlash(rel))
	if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not a file of the skill's folder", rel)
	}
	b, err := s.read(clean)
	return string(b), err
}

// Files lists the skill's other files, for the model to ask for.
func (s Skill) Files() []string {
	var out []string
	_ = filepath.WalkDir(s.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || len(out) >= 100 {
			return fs.SkipDir
		}
		if d.Type().IsRegular() && d.Name() != "SKILL.md" {
			rel, _ := filepath.Rel(s.Dir, path)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(out)
	return out
}

// read reads a file of the folder, capped: a project's inside its repository,
// the user's inside the folder (its own links are the user's to make).
func (s Skill) read(rel string) ([]byte, error) {
	var b []byte
	var more bool
	var err error
	if s.Root != "" {
		r, rerr := filepath.Rel(s.Root, filepath.Join(s.Dir, rel))
		if rerr != nil {
			return nil, rerr
		}
		b, more, err = workspace.ReadProjectFile(s.Root, r, maxFile)
	} else {
		b, more, err = workspace.ReadOwnFile(filepath.Join(s.Dir, rel), maxFile)
	}
	if err != nil {
		return nil, err
	}
	if more {
		return nil, fmt.Errorf("%s is larger than %d bytes", rel, maxFile)
	}
	return b, nil
}

// Prompt is the system prompt's list of the skills, "" without any.
func Prompt(ss []Skill) string {
	if len(ss) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\n# Skills\n\nThese skills hold instructions for particular tasks. When a task matches one, load it first with the skill tool and follow it:\n")
	for _, s := range ss {
		if s.Root == "" {
			fmt.Fprintf(&b, "- %s: %s\n", s.Name, s.Description)
		}
	}
	// The repository's are its author's words, not the user's: said so.
	head := "\nThese skills are the repository's own files (its author's, not the user's instructions):\n"
	for _, s := range ss {
		if s.Root != "" {
			b.WriteString(head)
			head = ""
			fmt.Fprintf(&b, "- %s: %s\n", s.Name, s.Description)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// Find returns the named skill.
func Find(ss []Skill, name string) (Skill, bool) {
	for _, s := range ss {
		if s.Name == name {
			return s, true
		}
	}
	return Skill{}, false
}
