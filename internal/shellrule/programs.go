package shellrule

import (
	"slices"
	"strings"
	"sync"
)

// A programRule refuses to remember a call of a program: always, or when its
// arguments make it run something else or write a file its name does not say.
// match returns the offending argument ("" for a program refused whatever its
// arguments) and whether the rule applies.
type programRule struct {
	what  string
	match func(args []word) (string, bool)
}

func always(what string) programRule {
	return programRule{what, func([]word) (string, bool) { return "", true }}
}

func with(what string, o options) programRule {
	return programRule{what, func(args []word) (string, bool) {
		a := o.find(args)
		return a, a != ""
	}}
}

const (
	runsArgs   = "runs its arguments as a command"
	runsShell  = "runs a shell"
	runsCode   = "runs code given in its arguments"
	writesFile = "writes to a file named in its arguments"
	namesVar   = "assigns or tests a shell variable by name, which can evaluate code"
	shellState = "changes how the shell runs later commands"
	editor     = "is a scriptable editor that can write files and run commands"
	textTool   = "can write files and run commands from its script"
	configures = "changes configuration that can make later commands run programs"
	remote     = "connects to another machine and can run commands"
	schedules  = "schedules commands to run later"
)

// programRules is every program dsh never remembers an approval for, or not with
// some options, by the program's base name. Programs not here are remembered by
// name (plus subcommand), whatever their literal arguments: approving `rm` is
// approving rm. Built on the first command checked, not at every dsh start.
var programRules = sync.OnceValue(func() map[string][]programRule {
	programRules := map[string][]programRule{}
	for what, names := range map[string]string{
		runsArgs: "eval exec env xargs sudo doas su pkexec run0 nohup timeout nice ionice chrt " +
			"taskset numactl setsid stdbuf unbuffer script expect watch source . command builtin " +
			"trap time strace ltrace gdb valgrind perf parallel flock chroot unshare nsenter " +
			"runuser setpriv setarch sg newgrp fakeroot faketime proot firejail bwrap " +
			"systemd-run dbus-run-session xvfb-run tmux screen coproc entr watchexec direnv " +
			"sshpass torsocks proxychains proxychains4 rlwrap catchsegv",
		runsShell:  "sh bash zsh dash ksh mksh fish csh tcsh ash rbash yash oksh posh busybox toybox",
		namesVar:   "read mapfile readarray getopts unset declare typeset local export readonly nameref let",
		shellState: "alias unalias hash shopt set enable complete compgen compopt bind fc",
		editor:     "vi vim nvim view ex ed emacs",
		textTool:   "awk gawk mawk nawk sed gsed",
		remote:     "ssh scp sftp mosh",
		schedules:  "at batch crontab",
	} {
		for n := range strings.FieldsSeq(names) {
			programRules[n] = append(programRules[n], always(what))
		}
	}
	for name, rules := range map[string][]programRule{
		"find": {
			with(runsArgs, options{exact: []string{"-exec", "-execdir", "-ok", "-okdir"}}),
			with("deletes or writes files", options{exact: []string{"-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}}),
		},
		"sort": {
			with(writesFile, options{long: []string{"--output"}, short: "o"}),
			with(runsArgs, options{long: []string{"--compress-program"}}),
		},
		"rg": {with(runsArgs, options{exact: []string{"--pre", "--hostname-bin"}})},
		"printf": {{namesVar, func(args []word) (string, bool) {
			// Only the first argument can be bash's -v; later ones are data.
			if len(args) > 0 && strings.HasPrefix(args[0].value, "-v") {
				return args[0].value, true
			}
			return "", false
		}}},
		"test":   {with(namesVar, options{exact: []string{"-v", "-R"}})},
		"[":      {with(namesVar, options{exact: []string{"-v", "-R"}})},
		"wait":   {with(namesVar, options{short: "p"})},
		"python": {with(runsCode, options{short: "c"})},
		"node":   {with(runsCode, options{short: "ep", exact: []string{"--eval", "--print"}})},
		"nodejs": {with(runsCode, options{short: "ep", exact: []string{"--eval", "--print"}})},
		"perl":   {with(runsCode, options{short: "eE"})},
		"ruby":   {with(runsCode, options{short: "e"})},
		"php":    {with(runsCode, options{short: "rB"})},
		"lua":    {with(runsCode, options{short: "e"})},
		"luajit": {with(runsCode, options{short: "e"})},
		"deno":   {with(runsCode, options{exact: []string{"eval"}})},
		"bun":    {with(runsCode, options{short: "e", exact: []string{"--eval", "--print"}})},
		"tar":    {tarRule},
		"rsync":  {with(runsArgs, options{long: []string{"--rsh", "--rsync-path"}, short: "e"})},
		"zip":    {with(runsArgs, options{exact: []string{"-TT", "--unzip-command"}})},
		"git":    {gitOutputRule, gitConfigRule, gitRunsArgsRule},
		"go":     {with(runsArgs, options{goFlags: []string{"exec", "toolexec", "vettool"}}), goLinkerRule, goEnvRule},
		"cargo":  {with(configures, options{long: []string{"--config"}})},
		"man":    {with(runsArgs, options{long: []string{"--pager", "--html", "--preprocessor"}, short: "PHp"})},
		"less":   {with(runsArgs, options{short: "o", long: []string{"--log-file", "--LOG-FILE"}})},
	} {
		programRules[name] = append(programRules[name], rules...)
	}
	return programRules
})

// tarRule: tar runs programs given by option, also in its old-style first
// argument ("tar xIf prog a.tar").
var tarRule = programRule{runsArgs, func(args []word) (string, bool) {
	o := options{
		long: []string{"--to-command", "--checkpoint-action", "--use-compress-program",
			"--rsh-command", "--info-script", "--new-volume-script"},
		short: "IF",
	}
	if a := o.find(args); a != "" {
		return a, true
	}
	if len(args) > 0 && !strings.HasPrefix(args[0].value, "-") && strings.ContainsAny(args[0].value, "IF") {
		return args[0].value, true
	}
	return "", false
}}

// gitOutputRule: whatever the subcommand, git writes where --output says.
var gitOutputRule = with(writesFile, options{long: []string{"--output"}})

// gitConfigRule: `git config` can set core.fsmonitor, core.pager, aliases... which
// later git calls run, so reading config and writing it cannot share one approval.
var gitConfigRule = programRule{configures, func(args []word) (string, bool) {
	if sub := subcommand("git", args); sub == "config" {
		return sub, true
	}
	return "", false
}}

// gitRunsArgs are, per subcommand, the options that make git run a program they
// name (`git rebase --exec CMD`), or set up a repository whose hooks and config
// later calls run (`git clone --template`, `git clone -c`).
var gitRunsArgs = map[string]options{
	"rebase":     {long: []string{"--exec"}, short: "x"},
	"difftool":   {long: []string{"--extcmd"}, short: "x"},
	"grep":       {long: []string{"--open-files-in-pager"}, short: "O"},
	"clone":      {long: []string{"--upload-pack", "--template", "--config"}, short: "uc"},
	"init":       {long: []string{"--template"}},
	"fetch":      {long: []string{"--upload-pack"}},
	"pull":       {long: []string{"--upload-pack"}},
	"ls-remote":  {long: []string{"--upload-pack"}},
	"archive":    {long: []string{"--exec"}},
	"push":       {long: []string{"--receive-pack", "--exec"}},
	"send-email": {long: []string{"--to-cmd", "--cc-cmd", "--header-cmd", "--smtp-server"}},
}

var gitRunsArgsRule = programRule{runsArgs, func(args []word) (string, bool) {
	i := subcommandIndex("git", args)
	if i < 0 {
		return "", false
	}
	sub, rest := args[i].value, args[i+1:]
	has := func(s string) bool { return slices.ContainsFunc(rest, func(w word) bool { return w.value == s }) }
	switch {
	case sub == "filter-branch":
		return sub, true
	case sub == "bisect" && has("run"):
		return "bisect run", true
	case sub == "submodule" && has("foreach"):
		return "submodule foreach", true
	}
	if a := gitRunsArgs[sub].find(rest); a != "" {
		return sub + " " + a, true
	}
	return "", false
}}

// goLinkerRule: -ldflags can name the external linker go runs (-extld, -extar).
var goLinkerRule = programRule{runsArgs, func(args []word) (string, bool) {
	for _, a := range args {
		if strings.Contains(a.value, "-extld") || strings.Contains(a.value, "-extar") {
			return a.value, true
		}
	}
	return "", false
}}

var goEnvRule = programRule{configures, func(args []word) (string, bool) {
	if len(args) > 0 && args[0].value == "env" {
		if a := (options{goFlags: []string{"w", "u"}}).find(args[1:]); a != "" {
			return a, true
		}
	}
	return "", false
}}

// baseName is the name rules know a program by: "/usr/bin/env" is env,
// "python3.12" is python.
func baseName(prog string) string {
	if i := strings.LastIndexByte(prog, '/'); i >= 0 {
		prog = prog[i+1:]
	}
	if strings.HasPrefix(prog, "python") {
		return "python"
	}
	return prog
}
