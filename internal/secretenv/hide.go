package secretenv

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// hidden holds the secrets Hide took out of the environment. It is written once,
// before main starts any goroutine, and only read after.
var hidden map[string]string

// Hide keeps the process's credentials from the commands it runs, which run as
// the same user and could otherwise read them from /proc/<pid>/environ,
// /proc/<pid>/mem or with ptrace. Call it first thing in main, before any
// goroutine starts.
//
// It moves every secret (Secret) not named in DSH_KEEP_ENV out of the
// environment: out of Go's copy, so that no child inherits it, and out of the
// block the kernel shows as environ, which is overwritten in place. Then it
// marks the process non-dumpable, which makes the kernel refuse all three to
// anyone but root (and this process its own /proc/self/mem, hence the order).
// Getenv still returns the moved values.
func Hide() error {
	err := hide()
	if perr := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); perr != nil {
		err = errors.Join(err, fmt.Errorf("marking the process non-dumpable: %w", perr))
	}
	return err
}

func hide() error {
	keep := KeepList(os.Getenv)
	moved := map[string]string{}
	var kept []string
	for _, kv := range os.Environ() {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			continue // not a variable; Go's environment drops it too
		}
		if Secret(name, value) && !slices.Contains(keep, name) {
			moved[name] = strings.Clone(value)
			continue
		}
		kept = append(kept, strings.Clone(kv))
	}
	if len(moved) == 0 {
		return nil
	}
	hidden = moved
	// Go's (and libc's) environment strings point into the kernel-visible block:
	// rebuild them in fresh memory before that block is overwritten.
	os.Clearenv()
	for _, kv := range kept {
		name, value, _ := strings.Cut(kv, "=")
		if err := os.Setenv(name, value); err != nil {
			return fmt.Errorf("restoring %s: %w", name, err)
		}
	}
	if err := overwriteEnviron(kept); err != nil {
		return fmt.Errorf("removing secrets from /proc/self/environ: %w", err)
	}
	return nil
}

// Getenv is os.Getenv that also sees the secrets Hide moved out.
func Getenv(name string) string {
	if v, ok := hidden[name]; ok {
		return v
	}
	return os.Getenv(name)
}

// KeepList parses DSH_KEEP_ENV: the comma-separated names of secrets that
// commands may still see.
func KeepList(getenv func(string) string) []string {
	var out []string
	for s := range strings.SplitSeq(getenv("DSH_KEEP_ENV"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// overwriteEnviron rewrites the process's initial environment block, which
// /proc/self/environ shows, to hold only kept, padded with NULs. It writes
// through /proc/self/mem: the block's address comes from /proc/self/stat.
func overwriteEnviron(kept []string) error {
	start, end, err := environBounds()
	if err != nil {
		return err
	}
	var block bytes.Buffer
	for _, kv := range kept {
		if block.Len()+len(kv)+1 > int(end-start) {
			break // cannot happen: kept is a subset of what the block held
		}
		block.WriteString(kv)
		block.WriteByte(0)
	}
	block.Write(make([]byte, int(end-start)-block.Len()))
	mem, err := os.OpenFile("/proc/self/mem", os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = mem.WriteAt(block.Bytes(), int64(start))
	return errors.Join(err, mem.Close())
}

// environBounds reads env_start and env_end, fields 50 and 51 of /proc/self/stat.
func environBounds() (start, end uint64, err error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, err
	}
	// pid (comm) state …: comm may hold spaces and parentheses, so count from
	// the last ')', after which field 3 comes first.
	i := bytes.LastIndexByte(b, ')')
	fields := strings.Fields(string(b[i+1:]))
	const envStart, envEnd = 50 - 3, 51 - 3
	if i < 0 || len(fields) <= envEnd {
		return 0, 0, errors.New("/proc/self/stat has no env_start and env_end")
	}
	if start, err = strconv.ParseUint(fields[envStart], 10, 64); err == nil {
		end, err = strconv.ParseUint(fields[envEnd], 10, 64)
	}
	if err != nil || end < start {
		return 0, 0, fmt.Errorf("/proc/self/stat: bad env bounds %q %q", fields[envStart], fields[envEnd])
	}
	return start, end, nil
}
