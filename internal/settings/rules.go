package settings

import (
	"fmt"

	"github.com/dsh-dev/dsh/internal/config"
	"github.com/dsh-dev/dsh/internal/credentials"
	"github.com/dsh-dev/dsh/internal/rules"
)

// ruleSet reads the configuration's permission rules; one dsh cannot match
// is left out and told in notes, never kept to silently fail.
func ruleSet(perms []config.PermissionRule, cwd string, getenv func(string) string) (*rules.Set, []string) {
	var rs []rules.Rule
	var notes []string
	base := rules.Base{Root: cwd, Cwd: cwd, Home: getenv("HOME")}
	for _, p := range perms {
		e, err := rules.ParseEffect(p.Effect)
		if err == nil {
			var r rules.Rule
			if r, err = rules.Parse(p.Rule, e, p.Source, base); err == nil {
				rs = append(rs, r)
				continue
			}
		}
		notes = append(notes, fmt.Sprintf("%s: permission rule ignored: %v", p.Source, err))
	}
	return rules.NewSet(rs...), notes
}

// editRules changes the user's own rules (dsh's permissions.json) and reads
// every file's again: /permissions' add and remove.
func (s Settings) editRules(effect, rule string, remove bool) (*rules.Set, error) {
	e, err := rules.ParseEffect(effect)
	if err != nil {
		return nil, err
	}
	if _, err := rules.Parse(rule, e, "", rules.Base{Root: s.in.Cwd, Cwd: s.in.Cwd, Home: s.in.Getenv("HOME")}); err != nil && !remove {
		return nil, err
	}
	if err := config.EditRules(s.in.Getenv, effect, rule, remove); err != nil {
		return nil, err
	}
	cfg, err := config.Load(s.in.Cwd, credentials.Env(s.in.Getenv))
	if err != nil {
		return nil, err
	}
	set, _ := ruleSet(cfg.Permissions, s.in.Cwd, s.in.Getenv)
	return set, nil
}
