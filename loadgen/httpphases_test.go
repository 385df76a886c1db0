package loadgen

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// httpReqMetrics are aiperf 0.12.0's HTTP phase metrics of a record.
var httpReqMetrics = []string{
	"http_req_blocked", "http_req_chunks_received", "http_req_chunks_sent", "http_req_connecting",
	"http_req_connection_overhead", "http_req_connection_reused", "http_req_data_received",
	"http_req_data_sent", "http_req_dns_lookup", "http_req_duration", "http_req_receiving",
	"http_req_sending", "http_req_total", "http_req_waiting",
}

// TestHTTPPhases: over a real loopback connection the first request dials
// (connecting > 0, not reused) and the second reuses it; the bytes are the
// connection's (the request's headers and body, the response's headers
// and chunked SSE events); the phases add up as aiperf's do.
func TestHTTPPhases(t *testing.T) {
	fake := &fakeServer{t: t, ttft: 20 * time.Millisecond, tokenGap: 2 * time.Millisecond}
	srv := fake.start(t)
	tr := &http.Transport{DialContext: countingDialer()}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	metrics := func() map[string]float64 {
		req := &chatRequest{url: srv.URL + "/v1/chat/completions", model: "m", maxTokens: 5, streaming: true,
			messages: []message{{Role: "user", Content: "hello there"}}, xRequestID: "r", xCorrelationID: "c"}
		_, tm, rerr := send(t.Context(), hc, req)
		require.Nil(t, rerr)
		out := map[string]float64{}
		for _, m := range recordMetrics(&tm, true, 5) {
			out[m.Tag], _ = m.Value.Number()
		}
		body, err := req.body()
		require.NoError(t, err)
		assert.Greater(t, out["http_req_data_sent"]*1024, float64(len(body)), "headers and body")
		return out
	}
	first, second := metrics(), metrics()
	assert.Equal(t, 0.0, first["http_req_connection_reused"])
	assert.Positive(t, first["http_req_connecting"])
	assert.Equal(t, 1.0, second["http_req_connection_reused"])
	assert.Zero(t, second["http_req_connecting"])
	for _, m := range []map[string]float64{first, second} {
		assert.InDelta(t, m["http_req_blocked"]+m["http_req_dns_lookup"]+m["http_req_connecting"], m["http_req_connection_overhead"], 1e-9)
		assert.InDelta(t, m["http_req_sending"]+m["http_req_waiting"]+m["http_req_receiving"], m["http_req_duration"], 1e-9)
		assert.InDelta(t, m["http_req_connection_overhead"]+m["http_req_duration"], m["http_req_total"], 1e-9)
		assert.GreaterOrEqual(t, m["http_req_receiving"], 10.0, "5 tokens 2 ms apart after the first")
		assert.Less(t, m["http_req_waiting"], m["time_to_first_token"], "headers come before the first token")
		assert.GreaterOrEqual(t, m["http_req_chunks_received"], 2.0)
		assert.Equal(t, 1.0, m["http_req_chunks_sent"])
		assert.Greater(t, m["http_req_data_received"]*1024, 5*10.0, "5 content events")
	}
}
