package simengine

import (
	"net/http"
	"time"
)

// virtualFlushEvery is how often, in wall time, the engine and the router
// pass a streamed answer on to a virtual-clock client. Its events carry
// their simulated times, so when bytes leave changes no number; flushing
// at every engine write made the router's write syscalls a quarter of its
// CPU at conc 256. The end of an answer is passed on at once.
const virtualFlushEvery = 20 * time.Millisecond

// batchedFlusher passes a streamed answer on at most every every: the
// engine and the reverse proxy flush after each write of an event
// stream, and a flush within every of the last one is left to the next
// write, the next flush past every, or the end of the answer (net/http
// flushes it when the handler returns).
type batchedFlusher struct {
	http.ResponseWriter
	every time.Duration
	last  time.Time
}

// FlushError implements what http.ResponseController.Flush calls.
func (f *batchedFlusher) FlushError() error {
	if now := time.Now(); now.Sub(f.last) >= f.every {
		f.last = now
		return http.NewResponseController(f.ResponseWriter).Flush()
	}
	return nil
}

// Flush implements http.Flusher.
func (f *batchedFlusher) Flush() { _ = f.FlushError() }

// Unwrap lets http.ResponseController reach the connection's other
// controls (deadlines).
func (f *batchedFlusher) Unwrap() http.ResponseWriter { return f.ResponseWriter }
