package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestStartLinksOneMajorVersion: dsh links one major version of each library
// family below; a second would run its package initialisation and fault its
// pages into every dsh process, the ones that never read a file in that format
// too (an idle `dsh acp` maps most pages of the binary it touches at start).
func TestStartLinksOneMajorVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, tc := range []struct {
		family   string
		prefixes []string
	}{
		{"YAML", []string{"go.yaml.in/yaml/v", "gopkg.in/yaml.v", "github.com/goccy/go-yaml"}},
	} {
		t.Run(tc.family, func(t *testing.T) {
			var linked []string
			for _, d := range deps {
				for _, p := range tc.prefixes {
					if strings.HasPrefix(d, p) && !strings.Contains(d[len(p):], "/") {
						linked = append(linked, d)
					}
				}
			}
			if len(linked) > 1 {
				t.Errorf("dsh links %d %s libraries, want one: %v", len(linked), tc.family, linked)
			}
		})
	}
}
