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
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dsh-dev/dsh/internal/claudehome"
	"github.com/dsh-dev/dsh/internal/frontmatter"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// Skill is one skill found.
type Skill struct {
	Name        string
	Display     string // the name as SKILL.md writes it ("Hook Development"), if that is not Name
	Description string
	// Dir is the skill's folder (absolute); Root the repository it is in, ""
	// for the user's own.
	Dir, Root string
	// Untrusted: the repository's skill, in a project the user does not trust.
	Untrusted bool
	// Vars are what ${NAME} in its body expands to besides the session's
	// (its Dir's: a plugin's root).
	Vars map[string]string
	frontmatter.Invocation
}

// Dir is a directory of skill folders.
type Dir struct {
	Path string
	Root string // "": the user's own directory
	// Trusted says the user trusts the project Root: its skills are offered
	// without the bound of an untrusted repository's.
	Trusted bool
	// Namespace, if set, prefixes the names of its skills ("plugin:skill"),
	// as Claude Code names a plugin's; Vars are what ${NAME} expands to in
	// their bodies (CLAUDE_PLUGIN_ROOT).
	Namespace string
	Vars      map[string]string
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
	if c := claudehome.Dir(getenv); c != "" { // what Claude Code users have
		dirs = append(dirs, Dir{Path: filepath.Join(c, "skills")})
	}
	for _, d := range []string{".dsh", ".claude", ".agents"} {
		dirs = append(dirs, Dir{Path: filepath.Join(root, d, "skills"), Root: root})
	}
	return dirs
}

const (
	maxFile        = 256 << 10 // SKILL.md, or a file of the folder the model loads
	maxDescription = 1024
)

// All reads the skills of dirs; the first of a name wins. What cannot be read
// or is malformed is skipped and told in the error. There is no bound on how
// many: Prompt bounds what the model is told of.
func All(dirs []Dir) ([]Skill, error) {
	var out []Skill
	var errs []error
	seen := map[string]bool{}
	for _, d := range dirs {
		entries, err := os.ReadDir(d.Path)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("skills in %s: %w", d.Path, err))
			}
			continue
		}
		for _, e := range entries {
			if e.Type().IsRegular() {
				continue // a skill is a folder
			}
			s := Skill{Dir: filepath.Join(d.Path, e.Name()), Root: d.Root, Untrusted: d.Root != "" && !d.Trusted, Vars: d.Vars}
			b, err := s.read("SKILL.md")
			if errors.Is(err, fs.ErrNotExist) {
				continue // not a skill folder
			}
			if err == nil {
				err = s.parse(b, e.Name())
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("skill %s: %w", filepath.Join(s.Dir, "SKILL.md"), err))
				continue
			}
			if d.Namespace != "" {
				s.Name = d.Namespace + ":" + s.Name
			}
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			out = append(out, s)
		}
	}
	return out, errors.Join(errs...)
}

// parse reads SKILL.md's front matter. A skill without a name is named by
// its folder; a display name ("Hook Development") gives the name
// hook-development; a description past 1,024 bytes is cut, as Claude Code
// lists it.
func (s *Skill) parse(b []byte, folder string) error {
	front, _, ok, err := frontmatter.Split(b)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("no front matter (a --- block with name and description)")
	}
	f := frontmatter.Parse(front, frontmatter.CommandKeys...)
	display := strings.TrimSpace(f.String("name"))
	if display == "" {
		display = folder
	}
	s.Name = frontmatter.Name(display)
	if display != s.Name {
		s.Display = display
	}
	s.Description = frontmatter.Cut(strings.Join(strings.Fields(f.String("description")), " "), maxDescription)
	s.Invocation = f.Invocation()
	switch {
	case s.Name == "":
		return fmt.Errorf("name %q: want letters or digits", display)
	case s.Description == "":
		return errors.New("front matter: no description")
	}
	return nil
}

// Body is the skill's instructions: SKILL.md after its front matter.
func (s Skill) Body() (string, error) {
	b, err := s.read("SKILL.md")
	if err != nil {
		return "", err
	}
	_, body, _, err := frontmatter.Split(b)
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

// Prompt is the system prompt's list of the skills the model may load, ""
// without any: those within the budget of what skills may add to every
// request (an untrusted repository's within a smaller one); notice says,
// once, how many were left out.
func Prompt(ss []Skill) (prompt, notice string) {
	offered := slices.DeleteFunc(slices.Clone(ss), func(s Skill) bool { return s.NoModel })
	listed, left := frontmatter.Fit(offered, func(s Skill) int { return len(s.Name) + len(s.Description) + 4 }, func(s Skill) bool { return s.Untrusted })
	if len(listed) == 0 {
		return "", ""
	}
	var b strings.Builder
	b.WriteString("\n\n# Skills\n\nThese skills hold instructions for particular tasks. When a task matches one, load it first with the skill tool and follow it:\n")
	for _, s := range listed {
		if s.Root == "" {
			fmt.Fprintf(&b, "- %s: %s\n", s.Name, s.Description)
		}
	}
	// The repository's are its author's words, not the user's: said so.
	head := "\nThese skills are the repository's own files (its author's, not the user's instructions):\n"
	for _, s := range listed {
		if s.Root != "" {
			b.WriteString(head)
			head = ""
			fmt.Fprintf(&b, "- %s: %s\n", s.Name, s.Description)
		}
	}
	if left > 0 {
		notice = fmt.Sprintf("%d skills are not listed to the model: their descriptions pass the %d KiB budget (an untrusted repository's, %d KiB); /help lists them all",
			left, frontmatter.Budget>>10, frontmatter.UntrustedBudget>>10)
		fmt.Fprintf(&b, "\n(%d more skills are not listed here.)\n", left)
	}
	return strings.TrimRight(b.String(), "\n"), notice
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
