package rpcfix

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		line string
		code int // 0: passed on to the SDK
		id   string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, 0, ""},
		{`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"x"}}`, 0, ""},
		{`{"jsonrpc":"2.0","id":"a","result":{}}`, 0, ""},
		{`{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"m"}}`, 0, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":3}`, -32600, "1"},
		{`nope`, -32700, "null"},
		{`{"jsonrpc":"2.0",`, -32700, "null"},
		{`"just a string"`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":{},"method":"x"}`, -32600, "null"},
		{`{"id":3,"method":"x"}`, -32600, "3"},
		{`{"jsonrpc":"2.0","id":4,"method":""}`, -32600, "4"},
		{`{"jsonrpc":"2.0","id":5}`, -32600, "5"},
		{`{"jsonrpc":"2.0","result":{}}`, -32600, "null"},
	} {
		reply := check([]byte(tc.line), false)
		if tc.code == 0 {
			if reply != nil {
				t.Errorf("%s was refused: %s", tc.line, reply)
			}
			continue
		}
		var r struct {
			ID    json.RawMessage `json:"id"`
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(reply, &r); err != nil {
			t.Errorf("%s: reply %q: %v", tc.line, reply, err)
			continue
		}
		if r.Error.Code != tc.code || string(r.ID) != tc.id {
			t.Errorf("%s: reply %s, want code %d with id %s", tc.line, reply, tc.code, tc.id)
		}
	}
	if reply := check(nil, true); !strings.Contains(string(reply), "-32700") {
		t.Errorf("an over-long line got %s", reply)
	}
}
