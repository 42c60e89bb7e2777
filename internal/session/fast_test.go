package session

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
)

// checkFast fails if decodeFast takes a line that json.Unmarshal refuses or
// decodes to anything else.
func checkFast(t *testing.T, line []byte) bool {
	t.Helper()
	var fast Record
	if !decodeFast(line, &fast, nil) {
		return false
	}
	var want Record
	if err := json.Unmarshal(line, &want); err != nil {
		t.Fatalf("decodeFast took what json.Unmarshal refuses (%v):\n%s", err, line)
	}
	if diff := cmp.Diff(want, fast); diff != "" {
		t.Fatalf("decodeFast and json.Unmarshal differ on\n%s\n(-json.Unmarshal +decodeFast):\n%s", line, diff)
	}
	return true
}

// fastSeeds are lines decodeFast must take, and lines near them.
var fastSeeds = []string{
	`{"type":"user","time":"2025-03-14T09:00:00.123456789Z","text":"fix \"it\"\n\tnow \\ /"}`,
	`{"type":"tool_call","time":"2025-03-14T09:00:00Z","callId":"c1","name":"read","args":{"path":"a.go","n":[1,-2,0,{"x":null}],"b":true},"preview":{"k":"v"},"continues":true}`,
	`{"type":"tool_result","time":"2025-03-14T09:00:01.5Z","callId":"c1","result":{"content":[{"type":"text","text":"é😀"},{"type":"image","data":"AA==","mimeType":"image/png","uri":"x"}],"isError":false,"meta":{"a":{"b":[]}}},"cwd":"sub"}`,
	`{"type":"turn_end","time":"2025-03-14T09:00:02Z","stopReason":"end_turn","usage":{"inputTokens":15230,"outputTokens":812,"contextTokens":9}}`,
	` { "type" : "header" , "time":"2025-03-14T09:00:00Z","version":1,"sessionId":"s","cwd":"/w","system":"sys" } `,
	`{"type":"compaction","time":"2025-03-14T09:00:00Z","text":"sum","keep":-2,"focus":"f"}`,
	`{"type":"user","text":"a","text":"b"}`,
	`{"type":"tool_call","args":{"a":1,"a":2}}`,
	`{"type":"user","text":"\u0041"}`,
	`{"type":"user","text":null}`,
	`{"type":"user","time":"2025-03-14T09:00:00+01:00"}`,
	`{"type":"user","time":"2025-03-14T9:00:00.Z"}`,
	`{"type":"tool_call","args":{"n":1.5e3}}`,
	`{"type":"tool_call","args":{"n":01}}`,
	`{"type":"tool_call","args":[1,]}`,
	`{"type":"user","text":"a"} x`,
	`{"type":"user","version":99999999999999999999}`,
	"{\"type\":\"user\",\"text\":\"\xff\"}",
	"{\"type\":\"user\",\"text\":\"a\tb\"}",
	`{"type":"tool_result","result":{"content":[],"isError":true}}`,
	`{"type":"tool_result","result":{"content":[{"type":"text","extra":1}]}}`,
	`{"Type":"user"}`,
}

func TestDecodeFast(t *testing.T) {
	for i, s := range fastSeeds {
		took := checkFast(t, []byte(s))
		if i < 6 && !took {
			t.Errorf("decodeFast left a plain line to json.Unmarshal:\n%s", s)
		}
	}
	// Every line of a log of every kind of record.
	path := filepath.Join(t.TempDir(), "bench.jsonl")
	writeBenchLog(t, path, 2000)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	took, all := 0, 0
	for sc.Scan() {
		all++
		if checkFast(t, sc.Bytes()) {
			took++
		}
	}
	if took < all*9/10 {
		t.Errorf("decodeFast took %d of %d lines", took, all)
	}
}

func FuzzDecodeFast(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkFast(t, line) })
}

// BenchmarkDecode decodes the lines of a log of every kind of record the fast
// way (json.Unmarshal for the lines it leaves) and with json.Unmarshal alone.
func BenchmarkDecode(b *testing.B) {
	path := filepath.Join(b.TempDir(), "bench.jsonl")
	writeBenchLog(b, path, 20_000)
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	for _, fast := range []bool{true, false} {
		name := map[bool]string{true: "fast", false: "json"}[fast]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				for _, l := range lines {
					var r Record
					if fast && decodeFast(l, &r, nil) {
						continue
					}
					r = Record{}
					if err := json.Unmarshal(l, &r); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
