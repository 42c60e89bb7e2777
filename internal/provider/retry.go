package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// DefaultMaxRetries is how many times a transient failure is retried when a
// provider's configuration leaves the count at zero.
const DefaultMaxRetries = 4

// maxRetryAfter bounds how long a server may ask us to wait: beyond it the
// request fails at once rather than leaving the user staring at a silent turn.
const maxRetryAfter = 60 * time.Second

// Backoff returns how long to wait before retry number attempt (1 for the first
// retry). retryAfter is the delay the server asked for, or 0 if it named none.
type Backoff func(attempt int, retryAfter time.Duration) time.Duration

// DefaultBackoff honours the server's retry-after and otherwise doubles from
// half a second, capped at eight seconds.
func DefaultBackoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return retryAfter
	}
	d := 500 * time.Millisecond << min(attempt-1, 4)
	return min(d, 8*time.Second)
}

// TransientError marks a failure that sending the same request again may cure:
// a rate limit, an overloaded or failing server, a dropped connection — and only
// while nothing of the response has reached the caller yet.
type TransientError struct {
	Err        error
	RetryAfter time.Duration // what the server asked for; 0 if nothing
}

func (e *TransientError) Error() string { return e.Err.Error() }
func (e *TransientError) Unwrap() error { return e.Err }

// ErrUnavailable matches a failure that retries did not cure: the model is
// overloaded, rate-limited or failing (a fallback model may be asked instead).
var ErrUnavailable = errors.New("the model is overloaded or unavailable")

// unavailable is a transient failure retries gave up on; it reads as the
// failure itself.
type unavailable struct{ error }

func (u unavailable) Unwrap() error        { return u.error }
func (u unavailable) Is(target error) bool { return target == ErrUnavailable }

// Retry calls attempt until it succeeds, fails with an error that is not a
// *TransientError, or maxRetries retries have failed. Between attempts it waits
// as backoff says (nil means DefaultBackoff); a cancelled ctx ends the wait.
// maxRetries 0 means DefaultMaxRetries; a negative value means no retries.
func Retry(ctx context.Context, maxRetries int, backoff Backoff, attempt func() (*Response, error)) (*Response, error) {
	if maxRetries == 0 {
		maxRetries = DefaultMaxRetries
	}
	if backoff == nil {
		backoff = DefaultBackoff
	}
	for n := 1; ; n++ {
		resp, err := attempt()
		if err == nil {
			return resp, nil
		}
		var t *TransientError
		if !errors.As(err, &t) {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if t.RetryAfter > maxRetryAfter {
			return nil, fmt.Errorf("%w (the server asks to wait %s before retrying)", t.Err, t.RetryAfter.Round(time.Second))
		}
		if n > maxRetries {
			if n == 1 {
				return nil, unavailable{t.Err}
			}
			return nil, unavailable{fmt.Errorf("%w (gave up after %d attempts)", t.Err, n)}
		}
		timer := time.NewTimer(backoff(n, t.RetryAfter))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
	}
}

// RetryableStatus reports whether an HTTP status says the same request may
// succeed later: a timeout, a conflict, a rate limit or a server-side failure
// (Anthropic's 529 "overloaded" included).
func RetryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusConflict ||
		code == http.StatusTooManyRequests || code >= http.StatusInternalServerError
}

// RetryAfter reads the delay a response asks for: retry-after-ms, else
// retry-after in seconds or as an HTTP date. It returns 0 when there is none.
func RetryAfter(h http.Header) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		return max(0, time.Duration(s*float64(time.Second)))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, time.Until(t))
	}
	return 0
}
