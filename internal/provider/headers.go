package provider

import (
	"fmt"
	"net/http"
	"strings"
)

// HeaderLines reads headers written "Name: Value", one a line, as Claude
// Code's ANTHROPIC_CUSTOM_HEADERS holds them. Blank lines are skipped.
func HeaderLines(s string) (http.Header, error) {
	var h http.Header
	for i, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("line %d is not a header written Name: Value", i+1)
		}
		if h == nil {
			h = http.Header{}
		}
		h.Add(name, strings.TrimSpace(value))
	}
	return h, nil
}
