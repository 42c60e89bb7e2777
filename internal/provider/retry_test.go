package provider

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"testing"
	"time"
)

func TestDefaultBackoff(t *testing.T) {
	tests := []struct {
		attempt    int
		retryAfter time.Duration
		want       time.Duration
	}{
		{1, 0, 500 * time.Millisecond},
		{2, 0, time.Second},
		{3, 0, 2 * time.Second},
		{5, 0, 8 * time.Second},
		{9, 0, 8 * time.Second},
		{1, 7 * time.Second, 7 * time.Second},
		{4, 300 * time.Millisecond, 300 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := DefaultBackoff(tt.attempt, tt.retryAfter); got != tt.want {
			t.Errorf("DefaultBackoff(%d, %s) = %s, want %s", tt.attempt, tt.retryAfter, got, tt.want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "12"}, 12 * time.Second},
		{"fractional", map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{"ms wins", map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond},
		{"bad ms falls back", map[string]string{"Retry-After-Ms": "soon", "Retry-After": "2"}, 2 * time.Second},
		{"negative", map[string]string{"Retry-After": "-4"}, 0},
		{"garbage", map[string]string{"Retry-After": "later"}, 0},
		{"past date", map[string]string{"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			if got := RetryAfter(h); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
	h := http.Header{"Retry-After": {time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)}}
	if got := RetryAfter(h); got < 58*time.Minute || got > time.Hour {
		t.Errorf("a date an hour ahead gave %s", got)
	}
}

// attempts returns an attempt func that fails with errs in order, then succeeds.
func attempts(errs ...error) (func() (*Response, error), *int) {
	n := 0
	return func() (*Response, error) {
		n++
		if n <= len(errs) {
			return nil, errs[n-1]
		}
		return &Response{StopReason: StopEndTurn}, nil
	}, &n
}

func TestRetry(t *testing.T) {
	busy := &TransientError{Err: errors.New("busy"), RetryAfter: 2 * time.Second}
	flaky := &TransientError{Err: errors.New("flaky")}
	fatal := errors.New("bad request")
	tests := []struct {
		name       string
		maxRetries int
		errs       []error
		wantErr    string // "" means success
		wantCalls  int
		wantWaits  []time.Duration
	}{
		{"success", 3, nil, "", 1, nil},
		{"transient then success", 3, []error{busy, flaky}, "", 3, []time.Duration{2 * time.Second, 0}},
		{"fatal is not retried", 3, []error{fatal}, "bad request", 1, nil},
		{"gives up", 2, []error{flaky, flaky, flaky}, "flaky (gave up after 3 attempts)", 3, []time.Duration{0, 0}},
		{"no retries", -1, []error{flaky}, "flaky", 1, nil},
		{"zero means default", 0, []error{flaky, flaky, flaky, flaky}, "", DefaultMaxRetries + 1, []time.Duration{0, 0, 0, 0}},
		{"retry-after too long", 3, []error{&TransientError{Err: errors.New("slow down"), RetryAfter: 10 * time.Minute}},
			"slow down (the server asks to wait 10m0s before retrying)", 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			attempt, calls := attempts(tt.errs...)
			var waits []time.Duration
			var attemptsSeen []int
			backoff := func(a int, retryAfter time.Duration) time.Duration {
				attemptsSeen = append(attemptsSeen, a)
				waits = append(waits, retryAfter)
				return 0
			}
			resp, err := Retry(context.Background(), tt.maxRetries, backoff, attempt)
			if tt.wantErr == "" {
				if err != nil || resp == nil {
					t.Fatalf("resp %v err %v", resp, err)
				}
			} else if resp != nil || err == nil || err.Error() != tt.wantErr {
				t.Fatalf("resp %v err %v, want %q", resp, err, tt.wantErr)
			}
			if *calls != tt.wantCalls {
				t.Errorf("%d attempts, want %d", *calls, tt.wantCalls)
			}
			if !reflect.DeepEqual(waits, tt.wantWaits) {
				t.Errorf("retry-after seen %v, want %v", waits, tt.wantWaits)
			}
			for i, a := range attemptsSeen {
				if a != i+1 {
					t.Errorf("backoff attempt numbers %v", attemptsSeen)
					break
				}
			}
		})
	}
}

func TestRetryKeepsTheCause(t *testing.T) {
	cause := errors.New("socket closed")
	attempt, _ := attempts(&TransientError{Err: cause}, &TransientError{Err: cause})
	_, err := Retry(context.Background(), 1, func(int, time.Duration) time.Duration { return 0 }, attempt)
	if !errors.Is(err, cause) {
		t.Errorf("%v does not wrap its cause", err)
	}
}

func TestRetryStopsWaitingOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	attempt, calls := attempts(&TransientError{Err: errors.New("busy")})
	backoff := func(int, time.Duration) time.Duration {
		cancel()
		return time.Hour // only the cancel can end this wait
	}
	resp, err := Retry(ctx, 3, backoff, attempt)
	if resp != nil || !errors.Is(err, context.Canceled) || *calls != 1 {
		t.Errorf("resp %v err %v after %d attempts", resp, err, *calls)
	}
}
