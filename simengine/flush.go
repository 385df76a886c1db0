package simengine

import (
	"net/http"
	"sync"
	"time"
)

// virtualFlushEvery is how often, in wall time, the engine and the router
// pass a streamed answer on to a virtual-clock client. Its events carry
// their simulated times, so when bytes leave changes no number; flushing
// at every engine write made the router's write syscalls a quarter of its
// CPU at conc 256. The end of an answer is passed on at once.
const virtualFlushEvery = 20 * time.Millisecond

// batchedFlusher passes a streamed answer on at most every every: the
// engine and the reverse proxy write an event stream into it and flush
// after each write; it keeps the bytes (net/http's own 4 KB buffer would
// send them a few events at a time) and hands them over in one write and
// one flush when every has passed since the answer began or the last
// flush, and at the end of the answer (close, which its user must call
// before the handler returns). Most virtual-clock answers take less wall
// time than every and leave in one piece.
type batchedFlusher struct {
	http.ResponseWriter
	every time.Duration
	last  time.Time
	buf   []byte
}

// Write keeps p for the next flush.
func (f *batchedFlusher) Write(p []byte) (int, error) {
	f.buf = append(f.buf, p...)
	return len(p), nil
}

// newBatchedFlusher starts the answer's interval now.
func newBatchedFlusher(w http.ResponseWriter) *batchedFlusher {
	f := &batchedFlusher{ResponseWriter: w, every: virtualFlushEvery, last: time.Now()}
	if b, ok := flushBufs.Get().(*[]byte); ok {
		f.buf = *b
	}
	return f
}

// flushBufs keeps the buffers of ended answers for the next ones: an
// answer usually leaves in one piece, so its buffer grows to the whole
// answer, which (grown anew for each) was a fifth of what the main job's
// engine allocated.
var flushBufs sync.Pool

// maxPooledFlushBuf bounds the buffers flushBufs keeps.
const maxPooledFlushBuf = 1 << 20

// close is finish at the end of the answer; the flusher is not used again.
func (f *batchedFlusher) close() error {
	err := f.finish()
	if cap(f.buf) <= maxPooledFlushBuf {
		b := f.buf[:0]
		flushBufs.Put(&b)
	}
	f.buf = nil
	return err
}

// FlushError implements what http.ResponseController.Flush calls.
func (f *batchedFlusher) FlushError() error {
	if time.Since(f.last) >= f.every {
		return f.finish()
	}
	return nil
}

// Flush implements http.Flusher.
func (f *batchedFlusher) Flush() { _ = f.FlushError() }

// finish writes and flushes what is kept, now.
func (f *batchedFlusher) finish() error {
	f.last = time.Now()
	if len(f.buf) == 0 {
		return nil
	}
	_, err := f.ResponseWriter.Write(f.buf)
	f.buf = f.buf[:0]
	if err != nil {
		return err
	}
	return http.NewResponseController(f.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection's other
// controls (deadlines).
func (f *batchedFlusher) Unwrap() http.ResponseWriter { return f.ResponseWriter }
