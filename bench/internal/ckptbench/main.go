// Command ckptbench measures what checkpoints (the snapshots /undo goes back
// to) cost a prompt in `dsh acp`, on a copy of a large tree (Go's own src, a
// git repository), against the same prompt with checkpoints off (git not on
// PATH), for one build and, with -before, an earlier one, interleaved in one
// run:
//
//   - write: a prompt that makes one write call, over the same prompt with
//     checkpoints off (target <= 1.1x);
//   - command: what checkpoints add to a prompt that runs one command, over
//     one stat walk of the tree as git does it (`git ls-files --others
//     --modified`, target <= 1.1x), taken like the prompt's: after the same
//     pause. The first walk after a pause is slower than one right after
//     another (its caches are cold: ~3 ms of 28 on Go's src); the walk back
//     to back is printed too;
//   - first: session/new and a one-write prompt in a workspace dsh has not
//     snapshotted yet, over the same in one it has (target <= 1.2x).
//
// Prompts are paced (-gap between them), as a user sends them: what runs in
// the background after a prompt is not counted, unless the next prompt waits
// for it. Each figure is the median of -runs processes, each the median of
// -prompts prompts. It prints a table and one line per target:
//
//	RATIO <name> <value>x target <= <t>x
//
//	ckptbench -dsh ./dsh [-before ./dsh-old] -src $(go env GOROOT)/src
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

func main() {
	dsh := flag.String("dsh", "", "the dsh binary")
	before := flag.String("before", "", "an earlier dsh binary to compare with (optional)")
	src := flag.String("src", "", "the tree to copy (Go's own src)")
	runs := flag.Int("runs", 5, "processes per measurement; the median is reported")
	prompts := flag.Int("prompts", 9, "prompts measured per process")
	gap := flag.Duration("gap", 300*time.Millisecond, "the pause between prompts")
	flag.Parse()
	if *dsh == "" || *src == "" {
		fmt.Fprintln(os.Stderr, "usage: ckptbench -dsh BIN [-before BIN] -src DIR")
		os.Exit(2)
	}
	if err := run(*dsh, *before, *src, *runs, *prompts, *gap); err != nil {
		fmt.Fprintln(os.Stderr, "ckptbench:", err)
		os.Exit(1)
	}
}

// bench is one sitting: the tree, the PATH without git, the builds.
type bench struct {
	tmp, ws, nogit string
	prompts        int
	gap            time.Duration
	seq            int
}

func run(dsh, before, src string, runs, prompts int, gap time.Duration) error {
	tmp, err := os.MkdirTemp("", "ckptbench-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	b := &bench{tmp: tmp, ws: filepath.Join(tmp, "ws"), nogit: filepath.Join(tmp, "nogit"), prompts: prompts, gap: gap}
	if err := sh(tmp, "cp", "-r", src, b.ws); err != nil {
		return err
	}
	// Files older than the index, as in a checkout one works in: none is
	// "racily clean", which git would hash again at every walk.
	if err := sh(tmp, "find", b.ws, "-exec", "touch", "-h", "-d", "2020-01-01T00:00:00", "{}", "+"); err != nil {
		return err
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "src"}} {
		if err := sh(b.ws, "git", args...); err != nil {
			return err
		}
	}
	// Checkpoints off: a PATH with the shell and without git.
	if err := os.MkdirAll(b.nogit, 0o755); err != nil {
		return err
	}
	for _, name := range []string{"bash", "sh"} {
		p, err := exec.LookPath(name)
		if err != nil {
			return err
		}
		if err := os.Symlink(p, filepath.Join(b.nogit, name)); err != nil {
			return err
		}
	}
	bins := []string{dsh}
	if before != "" {
		bins = append(bins, before)
	}
	type figures struct{ writeOn, writeOff, cmdOn, cmdOff, walk, hotWalk, cold, warm []float64 }
	res := make([]figures, len(bins))
	// Warm stores: a session of each build takes its first snapshot.
	for i, bin := range bins {
		if _, err := b.measure(bin, b.sessions(i), true, "write", 1); err != nil {
			return fmt.Errorf("%s: %w", bin, err)
		}
	}
	for r := range runs { // interleaved, so that both builds see the same machine
		for i, bin := range bins {
			f := &res[i]
			for _, m := range []struct {
				kind string
				on   bool
				into *[]float64
			}{{"write", true, &f.writeOn}, {"write", false, &f.writeOff}, {"command", true, &f.cmdOn}, {"command", false, &f.cmdOff}} {
				d, err := b.measure(bin, b.sessions(i), m.on, m.kind, b.prompts)
				if err != nil {
					return fmt.Errorf("%s: %w", bin, err)
				}
				*m.into = append(*m.into, d)
			}
			w, hot, err := b.statWalk()
			if err != nil {
				return err
			}
			f.walk, f.hotWalk = append(f.walk, w), append(f.hotWalk, hot)
			cold := filepath.Join(tmp, fmt.Sprintf("cold-%d-%d", i, r))
			c, err := b.first(bin, cold)
			if err != nil {
				return fmt.Errorf("%s: %w", bin, err)
			}
			f.cold = append(f.cold, c)
			w, err = b.first(bin, cold) // the same workspace again: warm
			if err != nil {
				return fmt.Errorf("%s: %w", bin, err)
			}
			f.warm = append(f.warm, w)
		}
	}
	fmt.Printf("checkpoints on a copy of %s (%d processes x %d prompts, %v apart), medians in ms:\n", src, runs, prompts, gap)
	fmt.Printf("  %-44s %10s", "", "now")
	if len(bins) > 1 {
		fmt.Printf(" %10s", "before")
	}
	fmt.Println()
	ratios := make([][3]float64, len(bins))
	for i := range bins {
		f := res[i]
		wOn, wOff, cOn, cOff, walk := median(f.writeOn), median(f.writeOff), median(f.cmdOn), median(f.cmdOff), median(f.walk)
		ratios[i] = [3]float64{wOn / wOff, (cOn - cOff) / walk, median(f.cold) / median(f.warm)}
	}
	rows := []struct {
		name string
		pick func(i int) float64
	}{
		{"one-write prompt, checkpoints on", func(i int) float64 { return median(res[i].writeOn) }},
		{"one-write prompt, checkpoints off", func(i int) float64 { return median(res[i].writeOff) }},
		{"one-command prompt, checkpoints on", func(i int) float64 { return median(res[i].cmdOn) }},
		{"one-command prompt, checkpoints off", func(i int) float64 { return median(res[i].cmdOff) }},
		{"one stat walk (git ls-files -m -o), paced", func(i int) float64 { return median(res[i].walk) }},
		{"one stat walk, back to back", func(i int) float64 { return median(res[i].hotWalk) }},
		{"new + first prompt, new workspace", func(i int) float64 { return median(res[i].cold) }},
		{"new + first prompt, warm workspace", func(i int) float64 { return median(res[i].warm) }},
		{"ratio write on/off (<= 1.1)", func(i int) float64 { return ratios[i][0] }},
		{"ratio command's checkpoints/walk (<= 1.1)", func(i int) float64 { return ratios[i][1] }},
		{"ratio first new/warm (<= 1.2)", func(i int) float64 { return ratios[i][2] }},
	}
	for _, row := range rows {
		fmt.Printf("  %-44s", row.name)
		for i := range bins {
			fmt.Printf(" %10.2f", row.pick(i))
		}
		fmt.Println()
	}
	fmt.Printf("RATIO ckpt_write %.2fx target <= 1.1x\n", ratios[0][0])
	fmt.Printf("RATIO ckpt_command %.2fx target <= 1.1x\n", ratios[0][1])
	fmt.Printf("RATIO ckpt_first %.2fx target <= 1.2x\n", ratios[0][2])
	return nil
}

// sessions is build i's session directory, where its stores are kept warm.
func (b *bench) sessions(i int) string { return filepath.Join(b.tmp, fmt.Sprintf("sessions-%d", i)) }

// env is the environment of a dsh with checkpoints on or off.
func (b *bench) env(on bool) []string {
	if on {
		return nil
	}
	return []string{"PATH=" + b.nogit}
}

// script writes n prompts of kind (write: one write call; command: one bash
// call), each ending with a text, with names no other process uses.
func (b *bench) script(kind string, n int) (string, error) {
	type call struct {
		ID   string         `json:"id"`
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	}
	type turn struct {
		Text      string `json:"text,omitempty"`
		ToolCalls []call `json:"tool_calls,omitempty"`
	}
	b.seq++
	var ts []turn
	for i := range n {
		name := fmt.Sprintf("bench-%d-%d.txt", b.seq, i)
		c := call{ID: fmt.Sprintf("c%d", i), Name: "write", Args: map[string]any{"path": name, "content": "made by the bench\n"}}
		if kind == "command" {
			c = call{ID: fmt.Sprintf("c%d", i), Name: "bash", Args: map[string]any{"command": "echo made > " + name}}
		}
		ts = append(ts, turn{ToolCalls: []call{c}}, turn{Text: "Done."})
	}
	js, err := json.Marshal(map[string]any{"turns": ts})
	if err != nil {
		return "", err
	}
	path := filepath.Join(b.tmp, fmt.Sprintf("script-%d.json", b.seq))
	return path, os.WriteFile(path, js, 0o644)
}

// measure is the median latency of n prompts of kind in one session (after
// one not counted), in ms.
func (b *bench) measure(bin, sessions string, on bool, kind string, n int) (float64, error) {
	script, err := b.script(kind, n+1)
	if err != nil {
		return 0, err
	}
	a, err := spawn(bin, sessions, script, b.env(on))
	if err != nil {
		return 0, err
	}
	defer func() { _ = a.stop() }()
	id, err := a.open(b.ws)
	if err != nil {
		return 0, err
	}
	var ds []time.Duration
	for i := range n + 1 {
		time.Sleep(b.gap)
		t := time.Now()
		if err := a.prompt(id); err != nil {
			return 0, err
		}
		if i > 0 {
			ds = append(ds, time.Since(t))
		}
	}
	return median(ms(ds)), a.stop()
}

// first is session/new and a one-write prompt in a fresh process, in ms.
func (b *bench) first(bin, sessions string) (float64, error) {
	script, err := b.script("write", 1)
	if err != nil {
		return 0, err
	}
	a, err := spawn(bin, sessions, script, nil)
	if err != nil {
		return 0, err
	}
	defer func() { _ = a.stop() }()
	t := time.Now()
	id, err := a.open(b.ws)
	if err != nil {
		return 0, err
	}
	if err := a.prompt(id); err != nil {
		return 0, err
	}
	d := time.Since(t)
	return ms([]time.Duration{d})[0], a.stop()
}

// statWalk is one walk of the tree as git does it for `git status`, in the
// tree's own repository (its index warm), in ms: after a pause as long as
// the one before a prompt (the prompt's walk follows one), and then again
// at once.
func (b *bench) statWalk() (paced, hot float64, err error) {
	walk := func() (float64, error) {
		t := time.Now()
		err := sh(b.ws, "git", "ls-files", "-z", "--others", "--modified", "--exclude-standard")
		return ms([]time.Duration{time.Since(t)})[0], err
	}
	time.Sleep(b.gap)
	if paced, err = walk(); err != nil {
		return 0, 0, err
	}
	hot, err = walk()
	return paced, hot, err
}

func ms(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = float64(d.Microseconds()) / 1000
	}
	return out
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func sh(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %v: %w: %s", name, args, err, out)
	}
	return nil
}

// agent is a running `dsh acp` spoken to in raw JSON-RPC lines.
type agent struct {
	cmd     *exec.Cmd
	mu      sync.Mutex // guards in, next and waiting
	in      io.WriteCloser
	next    int
	waiting map[int]chan reply
	done    chan struct{}
	stopped bool
	err     error
}

type reply struct {
	result json.RawMessage
	err    error
}

func spawn(bin, sessions, script string, env []string) (*agent, error) {
	cmd := exec.Command(bin, "acp", "--session-dir", sessions, "--mode", "bypass", "--provider", "script", "--script", script)
	cmd.Env = append(os.Environ(), env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	a := &agent{cmd: cmd, in: in, waiting: map[int]chan reply{}, done: make(chan struct{})}
	go a.read(bufio.NewReaderSize(out, 1<<20))
	if _, err := a.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`); err != nil {
		_ = a.stop()
		return nil, err
	}
	return a, nil
}

func (a *agent) read(r *bufio.Reader) {
	defer close(a.done)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		if strings.HasPrefix(string(line), `{"jsonrpc":"2.0","method":"session/update"`) {
			continue
		}
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &m) != nil || m.ID == nil || m.Method != "" {
			continue
		}
		a.mu.Lock()
		ch := a.waiting[*m.ID]
		delete(a.waiting, *m.ID)
		a.mu.Unlock()
		if ch == nil {
			continue
		}
		if m.Error != nil {
			ch <- reply{err: fmt.Errorf("%s", m.Error)}
		} else {
			ch <- reply{result: m.Result}
		}
	}
}

func (a *agent) call(method, params string) (json.RawMessage, error) {
	ch := make(chan reply, 1)
	a.mu.Lock()
	a.next++
	id := a.next
	a.waiting[id] = ch
	_, err := fmt.Fprintf(a.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
	a.mu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("%s: %w", method, r.err)
		}
		return r.result, nil
	case <-a.done:
		return nil, fmt.Errorf("%s: the agent exited", method)
	case <-time.After(5 * time.Minute):
		return nil, fmt.Errorf("%s: no answer", method)
	}
}

func (a *agent) open(ws string) (string, error) {
	res, err := a.call("session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, ws))
	if err != nil {
		return "", err
	}
	var r struct {
		SessionID string `json:"sessionId"`
	}
	return r.SessionID, json.Unmarshal(res, &r)
}

func (a *agent) prompt(id string) error {
	res, err := a.call("session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"Go on."}]}`, id))
	if err != nil {
		return err
	}
	var r struct {
		StopReason string `json:"stopReason"`
	}
	if err := json.Unmarshal(res, &r); err != nil || r.StopReason != "end_turn" {
		return fmt.Errorf("the prompt ended %q: %w", r.StopReason, err)
	}
	return nil
}

// stop closes stdin and waits for the agent to exit (its sessions closed,
// their snapshots logged); it is idempotent.
func (a *agent) stop() error {
	a.mu.Lock()
	if a.stopped {
		a.mu.Unlock()
		return a.err
	}
	a.stopped = true
	a.mu.Unlock()
	_ = a.in.Close()
	done := make(chan struct{})
	go func() {
		_ = a.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		_ = a.cmd.Process.Kill()
		<-done
		a.err = errors.New("the agent did not exit after stdin closed")
	}
	return a.err
}
