package acpschema

import (
	"strings"
	"testing"
)

// TestConversation: a conversation's messages are checked in both directions,
// a response as the result of the request it answers, an unstable method
// against the unstable schema alone; what the schema forbids is found.
func TestConversation(t *testing.T) {
	const (
		initReq  = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`
		initResp = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"auth":{"logout":{}},"sessionCapabilities":{"delete":{}}},"authMethods":[{"id":"k","name":"Key"}]}}`
		chunk    = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"hi"}}}}`
		forkReq  = `{"jsonrpc":"2.0","id":1,"method":"session/fork","params":{"sessionId":"s","cwd":"/w","mcpServers":[]}}`
		forkResp = `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"t"}}`
		cancel   = `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}`
		elicit   = `{"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{"sessionId":"s","mode":"form","message":"Which?","requestedSchema":{"type":"object","properties":{"answer":{"type":"string","oneOf":[{"const":"a","title":"A"}]}}}}}`
		elicited = `{"jsonrpc":"2.0","id":7,"result":{"action":"accept","content":{"answer":"a"}}}`
	)
	for _, tc := range []struct {
		name          string
		agent, client []string
		want          Counts
		bad           string // a violation says this
	}{
		{"initialize", []string{initResp}, []string{initReq}, Counts{2, 2, 2}, ""},
		{"a chunk with its message id", []string{chunk}, nil, Counts{1, 1, 1}, ""},
		{"a message id that is no string", []string{strings.Replace(chunk, `"m1"`, `7`, 1)}, nil, Counts{}, "SessionNotification"},
		{"session/fork is unstable", []string{forkResp}, []string{forkReq}, Counts{2, 0, 2}, ""},
		{"$/cancel_request, either side", []string{cancel}, []string{cancel}, Counts{2, 2, 2}, ""},
		{"a request id that is an object", nil, []string{strings.Replace(cancel, `1}`, `{}}`, 1)}, Counts{}, "CancelRequestNotification"},
		{"elicitation", []string{elicit}, []string{elicited}, Counts{2, 2, 2}, ""},
		{"an elicitation without its message", []string{strings.Replace(elicit, `"message":"Which?",`, "", 1)}, nil, Counts{}, "CreateElicitationRequest"},
		{"a stop reason the protocol lacks", []string{`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"tired"}}`},
			[]string{`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`}, Counts{1, 1, 1}, "PromptResponse"},
		{"a result for no request", []string{`{"jsonrpc":"2.0","id":9,"result":{}}`}, nil, Counts{}, "names no request"},
		{"an error", []string{`{"jsonrpc":"2.0","id":9,"error":{"code":-32800,"message":"Cancelled"}}`}, nil, Counts{1, 1, 1}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := Conversation(tc.agent, tc.client)
			if tc.bad == "" {
				for _, err := range errs {
					t.Error(err)
				}
			} else if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.bad) {
				t.Errorf("violations %v, want one about %s", errs, tc.bad)
			}
			if got != tc.want {
				t.Errorf("counts %+v, want %+v", got, tc.want)
			}
		})
	}
}
