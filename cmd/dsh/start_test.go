package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
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

// TestStartDefersMarkdown: the Markdown library's package initialisation
// builds nothing — its regexps and tables wait for the first Markdown the chat
// or the web view renders (third_party/goldmark). Upstream builds them in
// every process: 0.55 MB of heap and the pages of the regexp compiler, in a
// `dsh acp` that renders no Markdown. GODEBUG=inittrace=1 makes the runtime
// print each package's initialisation with the bytes it allocated.
func TestStartDefersMarkdown(t *testing.T) {
	const budget = 64 << 10 // what is left: tables of attribute names, node kinds
	cmd := exec.Command(dsh(t), "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("dsh --version: %v\n%s", err, stderr.Bytes())
	}
	total, pkgs := 0, 0
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		// init github.com/yuin/goldmark/util @4.0 ms, 0.001 ms clock, 144 bytes, 4 allocs
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[0] != "init" || !strings.HasPrefix(f[1], "github.com/yuin/goldmark") || f[8] != "bytes," {
			continue
		}
		n, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("reading %q: %v", sc.Text(), err)
		}
		total += n
		pkgs++
	}
	if pkgs == 0 {
		t.Fatalf("no goldmark package in dsh's inittrace:\n%s", stderr.Bytes())
	}
	if total > budget {
		t.Errorf("goldmark's %d packages allocate %d bytes at start, want at most %d", pkgs, total, budget)
	}
}
