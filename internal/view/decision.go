package view

import "github.com/dsh-dev/dsh/internal/session"

// DecisionNote says what a client answered a permission request or a
// question with, and which client: "allowed once from web".
func DecisionNote(rec session.Record) string {
	what := map[string]string{session.DecisionAllow: "allowed once", session.DecisionAlways: "always allowed",
		session.DecisionReject: "rejected", session.DecisionAnswer: "answered"}[rec.Decision]
	return what + " from " + rec.From
}
