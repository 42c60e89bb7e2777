package fs

import "github.com/dsh-dev/dsh/internal/tool"

// The file tools' calls as Claude Code's Read, Write and Edit give them to
// hooks: file_path absolute.
type (
	readHookInput struct {
		FilePath string `json:"file_path"`
		Offset   int    `json:"offset,omitzero"`
		Limit    int    `json:"limit,omitzero"`
	}
	writeHookInput struct {
		FilePath string `json:"file_path"`
		Content  string `json:"content"`
	}
	editHookInput struct {
		FilePath   string `json:"file_path"`
		OldString  string `json:"old_string"`
		NewString  string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all,omitzero"`
	}
)

func readHook(p ReadParams, cwd string) (string, any) {
	return "Read", readHookInput{FilePath: tool.AbsPath(cwd, p.Path), Offset: p.Offset, Limit: p.Limit}
}

func writeHook(p writeParams, cwd string) (string, any) {
	return "Write", writeHookInput{FilePath: tool.AbsPath(cwd, p.Path), Content: p.Content}
}

func editHook(p editParams, cwd string) (string, any) {
	return "Edit", editHookInput{FilePath: tool.AbsPath(cwd, p.Path), OldString: p.OldString, NewString: p.NewString, ReplaceAll: p.ReplaceAll}
}
