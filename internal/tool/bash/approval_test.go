package bash

import (
	"slices"
	"testing"
)

func TestCommandPrefixes(t *testing.T) {
	tests := []struct {
		cmd  string
		want []string
		ok   bool
	}{
		{"ls", []string{"ls"}, true},
		{"ls -la src", []string{"ls"}, true},
		{"git status", []string{"git status"}, true},
		{"git -C dir status", []string{"git"}, true},
		{"go test ./...", []string{"go test"}, true},
		{"make", []string{"make"}, true},
		{"npm run build && npm test", []string{"npm run", "npm test"}, true},
		{"cat a | grep x | wc -l", []string{"cat", "grep", "wc"}, true},
		{"echo $(date) `whoami`", []string{"echo", "date", "whoami"}, true},
		{"FOO=1 BAR=2 env", []string{"env"}, true},
		{"X=1", nil, true},
		{"ls; ls -a", []string{"ls"}, true},
		{"echo 'a; rm -rf /'", []string{"echo"}, true},
		{"f() { rm -rf x; }; f", []string{"rm", "f"}, true},
		{"$CMD", nil, false},
		{`"ls" -la`, nil, false},
		{"if true; then", nil, false},
	}
	for _, tt := range tests {
		got, ok := CommandPrefixes(tt.cmd)
		if ok != tt.ok || !slices.Equal(got, tt.want) {
			t.Errorf("CommandPrefixes(%q) = %q, %v; want %q, %v", tt.cmd, got, ok, tt.want, tt.ok)
		}
	}
}
