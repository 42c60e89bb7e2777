// Command searchbench runs dsh's search tools in process, for bench/search.sh:
//
//	searchbench time DIR TOOL ARGS   best wall time of 5 in-process calls, in seconds
//	searchbench lines DIR ARGS       every match of a grep, as sorted path:line (or
//	                                 path) lines, paging with offset through the tool
//	                                 as a model would
//
// Timing in process leaves out what a dsh process costs to start, so the script
// can tell the scan from the start-up.
package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/tool/search"
	"github.com/dsh-dev/dsh/internal/toolset"
	"github.com/dsh-dev/dsh/internal/workspace"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "searchbench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 3 {
		return fmt.Errorf("usage: searchbench time DIR TOOL ARGS | lines DIR ARGS")
	}
	ws, err := workspace.New(args[1], false)
	if err != nil {
		return err
	}
	if err := os.Chdir(args[1]); err != nil {
		return err
	}
	reg := toolset.New(toolset.Options{})
	env := tool.Env{Session: tool.NewSession("bench", ws)}
	ctx := context.Background()
	switch args[0] {
	case "time":
		if len(args) != 4 {
			return fmt.Errorf("usage: searchbench time DIR TOOL ARGS")
		}
		best := time.Duration(1 << 62)
		for range 5 {
			start := time.Now()
			r, err := reg.Run(ctx, env, args[2], []byte(args[3]), nil)
			if err != nil {
				return err
			}
			if r.IsError {
				return fmt.Errorf("%s", r.TextOf())
			}
			best = min(best, time.Since(start))
		}
		fmt.Printf("%.3f\n", best.Seconds())
	case "lines":
		var p search.GrepParams
		if err := json.Unmarshal([]byte(args[2]), &p); err != nil {
			return err
		}
		p.HeadLimit = 2000
		var out []string
		for {
			raw, err := json.Marshal(p)
			if err != nil {
				return err
			}
			r, err := reg.Run(ctx, env, "grep", raw, nil)
			if err != nil {
				return err
			}
			m := tool.DecodeMeta[search.Meta](r.Meta)
			if r.IsError || m == nil {
				return fmt.Errorf("grep %s: %s", raw, r.TextOf())
			}
			n := len(m.Paths)
			out = append(out, m.Paths...)
			for _, f := range m.Files {
				for _, l := range f.Matches {
					if l.Ranges != nil {
						out = append(out, fmt.Sprintf("%s:%d", f.Path, l.Line))
						n++
					}
				}
			}
			if !m.Truncated || n == 0 {
				break
			}
			p.Offset += n
		}
		slices.Sort(out)
		for _, l := range out {
			fmt.Println(l)
		}
	default:
		return fmt.Errorf("unknown mode %q", args[0])
	}
	return nil
}
