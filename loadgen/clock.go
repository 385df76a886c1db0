package loadgen

import "time"

// clock maps wall time to the timestamps the artifacts carry. With a
// time scale s, the run is the engine's compressed clock: every instant
// t becomes t0 + (t-t0)*s and every measured duration is multiplied by
// s, so latencies, durations and rates come out in the engine's
// simulated time, consistently across records and server metrics.
type clock struct {
	t0    time.Time
	scale float64
}

func (c clock) ns(t time.Time) int64 {
	if c.scale == 1 || c.scale == 0 {
		return t.UnixNano()
	}
	return c.t0.UnixNano() + int64(float64(t.Sub(c.t0))*c.scale)
}

func (c clock) now() int64 { return c.ns(time.Now()) }
