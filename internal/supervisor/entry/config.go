package entry

import (
	"time"

	"github.com/dsh-dev/dsh/internal/sandbox/confine"
)

// The config travels as a list of length-prefixed strings ("5:hello"): simple
// to read without the packages that would initialise before this one.

// Encode is the config as Decode reads it.
func (c Config) Encode() string {
	var e encoder
	e.str(c.Path)
	e.strs(c.Args)
	e.str(c.Dir)
	e.strs(c.Env)
	e.bool(c.Extra)
	e.bool(c.Input)
	e.bool(c.Errors)
	e.int(int(c.Grace))
	e.int(int(c.Drain))
	e.bool(c.Sandbox != nil)
	if c.Sandbox != nil {
		e.strs(c.Sandbox.Write)
		e.bool(c.Sandbox.Network)
		e.strs(c.Sandbox.Protect)
		e.strs(c.Sandbox.Hide)
	}
	e.bool(c.Mounted)
	e.int(c.ProxyPort)
	e.bool(c.Stay)
	return string(e)
}

// Decode reads what Encode wrote.
func Decode(s string) (c Config, ok bool) {
	d := decoder{s: s, ok: true}
	c.Path = d.str()
	c.Args = d.strs()
	c.Dir = d.str()
	c.Env = d.strs()
	c.Extra = d.bool()
	c.Input = d.bool()
	c.Errors = d.bool()
	c.Grace = time.Duration(d.int())
	c.Drain = time.Duration(d.int())
	if d.bool() {
		c.Sandbox = &confine.Rules{Write: d.strs(), Network: d.bool(), Protect: d.strs(), Hide: d.strs()}
	}
	c.Mounted = d.bool()
	c.ProxyPort = d.int()
	c.Stay = d.bool()
	return c, d.ok && d.s == ""
}

type encoder []byte

func (e *encoder) str(s string) {
	*e = append(*e, itoa(len(s))...)
	*e = append(*e, ':')
	*e = append(*e, s...)
}

func (e *encoder) int(n int) { e.str(itoa(n)) }

func (e *encoder) bool(b bool) {
	if b {
		e.str("1")
	} else {
		e.str("0")
	}
}

func (e *encoder) strs(ss []string) {
	e.int(len(ss))
	for _, s := range ss {
		e.str(s)
	}
}

type decoder struct {
	s  string
	ok bool
}

func (d *decoder) str() string {
	i := 0
	for i < len(d.s) && d.s[i] != ':' {
		i++
	}
	n, ok := atoi(d.s[:i])
	if !ok || i == len(d.s) || n > len(d.s)-i-1 {
		d.ok = false
		d.s = ""
		return ""
	}
	v := d.s[i+1 : i+1+n]
	d.s = d.s[i+1+n:]
	return v
}

func (d *decoder) int() int {
	s := d.str()
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	n, ok := atoi(s)
	d.ok = d.ok && ok
	if neg {
		return -n
	}
	return n
}

func (d *decoder) bool() bool { return d.str() == "1" }

func (d *decoder) strs() []string {
	n := d.int()
	if n < 0 || n > len(d.s) {
		d.ok = false
		return nil
	}
	var out []string
	for range n {
		out = append(out, d.str())
	}
	return out
}

func itoa(n int) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// atoi reads a non-negative decimal number.
func atoi(s string) (int, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
