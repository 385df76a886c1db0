package loadgen

import (
	"crypto/tls"
	"net/http/httptrace"
	"sync"
	"time"
)

// httpTrace collects one request's connection events. The transport
// calls some hooks from its own goroutines (WroteRequest from the
// connection's write loop), so every field is read and written under mu.
type httpTrace struct {
	mu sync.Mutex

	getConn, gotConn, dnsStart, dnsDone, connStart, connDone, tlsStart, tlsDone, wrote, firstByte time.Time
	reused                                                                                        bool
	conn                                                                                          *countingConn
	sent0, recv0                                                                                  int64
}

func (h *httpTrace) clientTrace() *httptrace.ClientTrace {
	now := func(t *time.Time) {
		h.mu.Lock()
		*t = time.Now()
		h.mu.Unlock()
	}
	return &httptrace.ClientTrace{
		GetConn:  func(string) { now(&h.getConn) },
		DNSStart: func(httptrace.DNSStartInfo) { now(&h.dnsStart) },
		DNSDone:  func(httptrace.DNSDoneInfo) { now(&h.dnsDone) },
		ConnectStart: func(string, string) {
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.connStart.IsZero() { // the first of a dual-stack race
				h.connStart = time.Now()
			}
		},
		ConnectDone:       func(string, string, error) { now(&h.connDone) },
		TLSHandshakeStart: func() { now(&h.tlsStart) },
		TLSHandshakeDone:  func(tls.ConnectionState, error) { now(&h.tlsDone) },
		GotConn: func(info httptrace.GotConnInfo) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.gotConn = time.Now()
			h.reused = info.Reused
			if c, ok := info.Conn.(*countingConn); ok {
				h.conn, h.sent0, h.recv0 = c, c.sent.Load(), c.recv.Load()
			}
		},
		WroteRequest:         func(httptrace.WroteRequestInfo) { now(&h.wrote) },
		GotFirstResponseByte: func() { now(&h.firstByte) },
	}
}

// between is the ns from a to b, 0 when either is unset or b is before a.
func between(a, b time.Time) int64 {
	if a.IsZero() || b.IsZero() || b.Before(a) {
		return 0
	}
	return b.Sub(a).Nanoseconds()
}

// phases are the request's HTTP phases: end is the request's end offset
// from start, body the request body's size, recv the response body bytes
// and reads (see countingBody).
func (h *httpTrace) phases(start time.Time, t *timing, body int, recv *countingBody) httpPhases {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := httpPhases{chunksSent: 1, chunksRecv: recv.reads, sentBytes: int64(body), recvBytes: recv.n}
	if h.conn != nil {
		p.sentBytes, p.recvBytes = h.conn.sent.Load()-h.sent0, h.conn.recv.Load()-h.recv0
	}
	p.reused = h.reused
	if t.sim != nil {
		// The simulated timeline has no connections: every request is as
		// on a warm one, its bytes are the bodies' and its chunks the
		// content events (the pool's reuse and the reads' sizes vary from
		// run to run; the artifacts of a seed do not).
		p.reused, p.sentBytes, p.recvBytes, p.chunksRecv = true, int64(body), recv.n, len(t.chunkNs)
	}
	if t.sim != nil || h.gotConn.IsZero() {
		p.waiting = t.ackNs
		p.receiving = max(0, t.endNs-t.ackNs)
		return p
	}
	p.dns, p.connecting, p.tls = between(h.dnsStart, h.dnsDone), between(h.connStart, h.connDone), between(h.tlsStart, h.tlsDone)
	p.blocked = max(0, between(h.getConn, h.gotConn)-p.dns-p.connecting-p.tls)
	p.sending = between(h.gotConn, h.wrote)
	p.waiting = between(h.wrote, h.firstByte)
	p.receiving = max(0, t.endNs-between(start, h.firstByte))
	return p
}
