package fs

import (
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/tool"
)

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

// The file tools' results as Claude Code's give them to PostToolUse hooks.
type (
	readHookResponse struct {
		Type string               `json:"type"` // text
		File readHookResponseFile `json:"file"`
	}
	readHookResponseFile struct {
		FilePath   string `json:"filePath"`
		Content    string `json:"content"`
		NumLines   int    `json:"numLines"`
		StartLine  int    `json:"startLine"`
		TotalLines int    `json:"totalLines"`
	}
	writeHookResponse struct {
		Type     string `json:"type"` // create or update
		FilePath string `json:"filePath"`
		Content  string `json:"content"`
		Success  bool   `json:"success"`
	}
	editHookResponse struct {
		FilePath   string `json:"filePath"`
		OldString  string `json:"oldString"`
		NewString  string `json:"newString"`
		ReplaceAll bool   `json:"replaceAll"`
		Success    bool   `json:"success"`
	}
)

func readUnhook(p ReadParams, input jsontext.Value, cwd string) (ReadParams, error) {
	var in readHookInput
	if err := json.Unmarshal(input, &in); err != nil {
		return p, err
	}
	return ReadParams{Path: tool.RelPath(cwd, p.Path, in.FilePath), Offset: in.Offset, Limit: in.Limit}, nil
}

func writeUnhook(p writeParams, input jsontext.Value, cwd string) (writeParams, error) {
	var in writeHookInput
	if err := json.Unmarshal(input, &in); err != nil {
		return p, err
	}
	return writeParams{Path: tool.RelPath(cwd, p.Path, in.FilePath), Content: in.Content}, nil
}

func editUnhook(p editParams, input jsontext.Value, cwd string) (editParams, error) {
	var in editHookInput
	if err := json.Unmarshal(input, &in); err != nil {
		return p, err
	}
	return editParams{Path: tool.RelPath(cwd, p.Path, in.FilePath), OldString: in.OldString, NewString: in.NewString, ReplaceAll: in.ReplaceAll}, nil
}

func readResponse(p ReadParams, r tool.Result, m *readMeta, cwd string) any {
	f := readHookResponseFile{FilePath: tool.AbsPath(cwd, p.Path)}
	if m != nil {
		var b strings.Builder
		for i, l := range m.Lines {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(l.Text)
		}
		f.Content, f.NumLines, f.StartLine, f.TotalLines = b.String(), len(m.Lines), max(m.Offset, 1), m.TotalLines
	} else {
		f.Content = r.TextOf()
	}
	return readHookResponse{Type: "text", File: f}
}

func writeResponse(p writeParams, r tool.Result, m *diffMeta, cwd string) any {
	typ := "update"
	if m != nil && m.Created {
		typ = "create"
	}
	return writeHookResponse{Type: typ, FilePath: tool.AbsPath(cwd, p.Path), Content: p.Content, Success: !r.IsError}
}

func editResponse(p editParams, r tool.Result, _ *diffMeta, cwd string) any {
	return editHookResponse{FilePath: tool.AbsPath(cwd, p.Path), OldString: p.OldString, NewString: p.NewString,
		ReplaceAll: p.ReplaceAll, Success: !r.IsError}
}
