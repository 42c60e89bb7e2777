package host

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// initPrompt is /init's prompt, as Claude Code's /init: the model surveys
// the repository and writes AGENTS.md with the write tool, so the file shows
// as a diff card and is asked about like any write (AGENTS.md steers later
// sessions: it is asked in every mode but bypass).
const initPrompt = `Please survey this repository and write an AGENTS.md file at its root: the instructions that every later session working here reads first.

Explore before writing: the README, the build and test configuration (Makefile, go.mod, package.json, pyproject.toml, Cargo.toml, CI workflows...), the top-level layout and a few central source files. If AGENTS.md, CLAUDE.md, .cursorrules, .github/copilot-instructions.md or similar files exist, read them and keep what is still true.

AGENTS.md should hold, briefly and specifically for this repository:
- the commands to build, lint and run the tests (a single test too), exactly as they are run here;
- the architecture a newcomer needs to see the big picture: the main parts, where they live, how data flows between them — what takes reading several files to understand, not a list of every file;
- the conventions and rules the code keeps that are not obvious from one file.

Leave out generic advice (write tests, handle errors, keep secrets out), made-up sections, and anything you did not find in the repository. Start the file with "# AGENTS.md" and a line saying it guides coding agents working in this repository. If AGENTS.md exists already, improve it rather than starting over. Write the file with the write tool (or edit it), then say in a few lines what it holds.`

// reviewPrompt is /review's prompt; what is the diff the command above it
// showed (the working tree's, or a branch's).
func reviewPrompt(what string) string {
	return "Please review " + what + ": the output of the git command just above, which the user ran for you " +
		"(if it failed or shows nothing, say so and stop).\n\n" +
		"Read the changed files where the diff alone does not tell enough. Look for bugs, wrong edge cases, security problems, " +
		"missing or weak tests, unclear names and code that does not fit the repository's conventions. " +
		"Give your findings ordered by importance, each with its file and line and what to change; say plainly if the change looks good. " +
		"Do not change any file: this is a review."
}

// reviewBranch is a branch name /review accepts: it goes into a command.
var reviewBranch = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._/-]*$`) })

// reviewCommand is /review [BRANCH]: the command that shows the diff (run
// as the user's own, through the bash tool: its card, its sandbox, its
// output capped as any command's for the model) and the prompt about it.
func reviewCommand(args string) (cmd, prompt string, err error) {
	switch f := strings.Fields(args); {
	case len(f) == 0:
		return "git status --short && git diff --no-ext-diff --no-textconv HEAD", reviewPrompt("the uncommitted changes of the working tree"), nil
	case len(f) == 1 && reviewBranch().MatchString(f[0]) && !strings.Contains(f[0], ".."):
		return "git diff --no-ext-diff --no-textconv HEAD..." + f[0], reviewPrompt("the changes of the branch " + f[0] + " since it left the checked-out one"), nil
	}
	return "", "", fmt.Errorf("want /review for the working tree's changes or /review BRANCH, got %q", args)
}

// initReply is /init's Reply: its prompt.
func initReply(_ *Session, _ context.Context, _ string) (Reply, error) {
	return Reply{Prompt: initPrompt}, nil
}

// reviewReply is /review's Reply: its command and prompt, or why not.
func reviewReply(_ *Session, _ context.Context, args string) (Reply, error) {
	cmd, prompt, err := reviewCommand(args)
	if err != nil {
		return Reply{Text: "Cannot review: " + err.Error() + "."}, nil
	}
	return Reply{Prompt: prompt, Run: cmd}, nil
}
