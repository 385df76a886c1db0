package loadgen

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"time"
)

// HTTP phase metrics (aiperf 0.12.0's http_req_*): where a request's time
// went on its connection, from Go's httptrace hooks, and the bytes the
// connection carried for it. The client dials its connections itself and
// counts their bytes (countingConn); with a transport of the caller's
// (Options.Transport) no connection is seen, and the connection phases are
// 0, waiting is until the response headers, and the bytes are the bodies'.
// On the virtual clock the engine's timeline has no connection costs:
// the phases come from the simulated offsets (waiting until the headers,
// receiving to the end), the connection phases are 0, the connection
// counts as reused, the bytes are the bodies' and the chunks received
// the content events.

// httpPhases is what a request's http_req_* metrics are computed from:
// durations in ns, bytes and chunk counts.
type httpPhases struct {
	blocked, dns, connecting, tls, sending, waiting, receiving int64
	reused                                                     bool
	sentBytes, recvBytes                                       int64
	chunksSent, chunksRecv                                     int
}

// scale multiplies the durations by s (the compressed wall clock).
func (p *httpPhases) scale(s float64) {
	for _, d := range []*int64{&p.blocked, &p.dns, &p.connecting, &p.tls, &p.sending, &p.waiting, &p.receiving} {
		*d = int64(float64(*d) * s)
	}
}

// metrics appends the http_req_* record metrics, in aiperf's units.
func (p *httpPhases) metrics(add func(tag string, v float64, unit string)) {
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	overhead := p.blocked + p.dns + p.connecting + p.tls
	duration := p.sending + p.waiting + p.receiving
	reused := 0.0
	if p.reused {
		reused = 1
	}
	add("http_req_dns_lookup", ms(p.dns), "ms")
	add("http_req_blocked", ms(p.blocked), "ms")
	add("http_req_connecting", ms(p.connecting), "ms")
	add("http_req_waiting", ms(p.waiting), "ms")
	add("http_req_connection_reused", reused, "ratio")
	add("http_req_data_sent", float64(p.sentBytes)/1024, "KB")
	add("http_req_receiving", ms(p.receiving), "ms")
	add("http_req_sending", ms(p.sending), "ms")
	add("http_req_chunks_received", float64(p.chunksRecv), "count")
	add("http_req_duration", ms(duration), "ms")
	add("http_req_chunks_sent", float64(p.chunksSent), "count")
	add("http_req_data_received", float64(p.recvBytes)/1024, "KB")
	add("http_req_connection_overhead", ms(overhead), "ms")
	add("http_req_total", ms(overhead+duration), "ms")
}

// countingConn counts the bytes a connection sent and received.
type countingConn struct {
	net.Conn
	sent, recv atomic.Int64
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.recv.Add(int64(n))
	return n, err
}

func (c *countingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.sent.Add(int64(n))
	return n, err
}

// countingDialer dials TCP connections that count their bytes.
func countingDialer() func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: c}, nil
	}
}

// countingBody counts a response body's bytes and the reads that
// returned any (the chunks as they arrived).
type countingBody struct {
	io.Reader
	n     int64
	reads int
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	if n > 0 {
		b.n += int64(n)
		b.reads++
	}
	return n, err
}
