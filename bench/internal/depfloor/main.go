// Command depfloor is the floor of start-up with dsh's dependencies: an ACP
// agent that answers every request line with an initialize response and does
// nothing else, linked with the libraries whose package initialisation every
// dsh process runs before main (the MCP SDK, Markdown, the chat's text area,
// HTML to Markdown, YAML; the provider SDKs are the model runner's, not
// dsh's). bench/start.sh sets it beside dsh and the bare floor: what dsh
// cannot go below while it links them.
package main

import (
	"bufio"
	"os"

	_ "charm.land/bubbles/v2/textarea"
	_ "github.com/JohannesKaufmann/html-to-markdown/v2"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/yuin/goldmark/extension"
	_ "go.yaml.in/yaml/v4"
)

func main() {
	r := bufio.NewReader(os.Stdin)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		id := idOf(line)
		_, _ = os.Stdout.WriteString(`{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":1,"agentCapabilities":{},"authMethods":[]}}` + "\n")
	}
}

// idOf is the request's numeric id as it was written, "null" without one.
func idOf(line []byte) string {
	const key = `"id":`
	for i := 0; i+len(key) < len(line); i++ {
		if string(line[i:i+len(key)]) != key {
			continue
		}
		j := i + len(key)
		for j < len(line) && line[j] == ' ' {
			j++
		}
		k := j
		for k < len(line) && line[k] >= '0' && line[k] <= '9' {
			k++
		}
		return string(line[j:k])
	}
	return "null"
}
