// Package sample is read by the read tool's golden tests.
package sample

import "fmt"

// Greet says hello to name.
func Greet(name string) string {
	if name == "" {
		name = "world"
	}
	return fmt.Sprintf("hello, %s", name)
}

// Count returns how many times sub occurs in s: "a: b" has one ": ".
func Count(s, sub string) int {
	n := 0
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			n++
		}
	}
	return n
}
