// Package demo holds what `dsh demo` needs to show every card with no API key: a
// small sample project and a scripted conversation that uses every tool on it.
package demo

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
)

// Project is the sample project; its files are under "project/".
//
//go:embed project
var Project embed.FS

// Script is the scripted provider's conversation (see internal/provider/script):
// it reads, edits (one site and replace_all), writes a new file and overwrites a
// read one, runs a command that succeeds and one that fails, starts two background
// jobs, lists them, waits for one's output and kills the other, and keeps a todo
// list. Its job_output and job_kill calls name the jobs "job-1" and "job-2", the
// ids the bash tool gives the first two background jobs of a process.
//
//go:embed script.json
var Script []byte

// Prompt is the user's prompt the script answers.
const Prompt = "Tidy up this little project: fix the greeting, correct the misspelled " +
	"`lenght` in shapes.py, add a changelog, refresh the README, and check the result."

// Install copies the sample project into dir, which must not hold any of its files.
func Install(dir string) error {
	sub, err := fs.Sub(Project, "project")
	if err != nil {
		return fmt.Errorf("demo project: %w", err)
	}
	if err := os.CopyFS(dir, sub); err != nil {
		return fmt.Errorf("install the demo project: %w", err)
	}
	return nil
}
