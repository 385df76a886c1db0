package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// WaitOptions tunes WaitHTTP. Zero values mean: no timeout beyond ctx,
// poll every second.
type WaitOptions struct {
	Timeout  time.Duration
	Interval time.Duration
	// Client makes the requests; nil means a client with a 5 s timeout.
	Client *http.Client
}

// NotReadyError says why a process never became ready. Tail holds its last
// output lines; the message leaves them out, so a caller prints them once
// (a point's failed stage carries them as its log tail).
type NotReadyError struct {
	Name   string
	URL    string
	Reason string // "exited", "timeout" or "cancelled"
	Status Status // the exit status when Reason is "exited"
	Last   string // the last poll's outcome
	Tail   []string
	// Err is ctx's error when Reason is "cancelled" (errors.Is finds it
	// through Unwrap); the message says "cancelled" once and leaves it
	// out.
	Err error
}

func (e *NotReadyError) Unwrap() error { return e.Err }

func (e *NotReadyError) Error() string {
	var b strings.Builder
	switch e.Reason {
	case "exited":
		fmt.Fprintf(&b, "%s exited before it was ready (%s)", e.Name, e.Status)
	case "timeout":
		fmt.Fprintf(&b, "%s not ready at %s before the timeout (last poll: %s)", e.Name, e.URL, e.Last)
	default:
		fmt.Fprintf(&b, "%s readiness wait at %s cancelled (last poll: %s)", e.Name, e.URL, e.Last)
	}
	return b.String()
}

// WaitHTTP polls url until it answers 200, failing fast when p exits first,
// when the timeout passes or when ctx is done. A tcp://HOST:PORT url is
// ready once a TCP connection succeeds (a gRPC server: vLLM's gRPC worker
// answers no HTTP). The returned error is a
// *NotReadyError (wrapping ctx.Err() when cancelled, without repeating
// it in its message).
func WaitHTTP(ctx context.Context, p *Process, url string, o WaitOptions) error {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	client := o.Client
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Second}
	}
	var deadline <-chan time.Time
	if o.Timeout > 0 {
		t := time.NewTimer(o.Timeout)
		defer t.Stop()
		deadline = t.C
	}
	last := "no poll yet"
	ticker := time.NewTicker(o.Interval)
	defer ticker.Stop()
	for {
		ok, outcome := poll(ctx, client, url)
		if ok {
			return nil
		}
		if ctx.Err() == nil { // a poll ctx cut short says nothing of the server
			last = outcome
		}
		select {
		case <-p.Done():
			return &NotReadyError{Name: p.Name(), URL: url, Reason: "exited", Status: p.Status(), Last: last, Tail: p.Tail()}
		case <-deadline:
			return &NotReadyError{Name: p.Name(), URL: url, Reason: "timeout", Last: last, Tail: p.Tail()}
		case <-ctx.Done():
			return &NotReadyError{Name: p.Name(), URL: url, Reason: "cancelled", Last: last, Tail: p.Tail(), Err: ctx.Err()}
		case <-ticker.C:
		}
	}
}

// Healthy is one poll of url as WaitHTTP polls it (a tcp://HOST:PORT
// url: a TCP connect): nil when it answers 200 (or connects), else what
// it answered.
func Healthy(ctx context.Context, client *http.Client, url string) error {
	if ok, last := poll(ctx, client, url); !ok {
		return errors.New(last)
	}
	return nil
}

func poll(ctx context.Context, client *http.Client, url string) (bool, string) {
	if addr, ok := strings.CutPrefix(url, "tcp://"); ok {
		var d net.Dialer
		dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		conn, err := d.DialContext(dctx, "tcp", addr)
		if err != nil {
			return false, err.Error()
		}
		conn.Close()
		return true, "connected"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err.Error()
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode == http.StatusOK {
		return true, resp.Status
	}
	return false, resp.Status
}
