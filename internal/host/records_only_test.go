package host

import (
	"slices"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/session"
)

// A records-only subscriber gets the records alone, in order, and Flush
// neither waits for the events it skips nor passes a record still in hand.
func TestRecordsOnlySubscriber(t *testing.T) {
	b := newBus()
	defer b.close(time.Second)
	inHand, release := make(chan struct{}), make(chan struct{})
	var got []string
	sub := b.subscribeAt(func(e Event) {
		if e.Kind != KindRecord {
			t.Errorf("got a %v event", e.Kind)
		}
		got = append(got, e.Record.CallID)
		if e.Record.CallID == "slow" {
			close(inHand)
			<-release
		}
	}, nil, true)

	status := Event{Kind: KindStatus, Status: Status{State: StateWorking}}
	b.publish(status)
	if !sub.Flush(0) {
		t.Error("Flush waited for a status the subscriber never gets")
	}
	b.publish(Event{Kind: KindRecord, Record: session.Record{Type: session.TypeToolCall, CallID: "a"}})
	b.publish(Event{Kind: KindCallStarted, CallID: "a"})
	b.publish(Event{Kind: KindRecord, Record: session.Record{Type: session.TypeToolResult, CallID: "slow"}})
	<-inHand
	b.publish(status) // while the record before it is in hand
	if sub.Flush(50 * time.Millisecond) {
		t.Error("Flush returned before the record in hand was handled")
	}
	close(release)
	if !sub.Flush(10 * time.Second) {
		t.Fatal("Flush did not catch up")
	}
	if want := []string{"a", "slow"}; !slices.Equal(got, want) {
		t.Errorf("records %q, want %q", got, want)
	}
}
