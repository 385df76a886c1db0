package simengine

import "sync"

// LagTolerance is how far, in simulated seconds, a step of the wall
// clock's scheduler may end behind its schedule and still count as on
// time: a client's latencies are then off by less than a tenth of a
// second.
const LagTolerance = 0.1

// LagPath answers the wall clock's schedule lag (Lag, JSON), counted
// since the engine started: a caller takes two readings and compares
// them (Lag.Since).
const LagPath = "/sim/lag"

// Lag is how far the wall clock's scheduler fell behind its schedule: a
// step that should have ended at simulated time T whose tokens went out
// later (the host too loaded for the time scale: the simulated engine's
// timers fire late, or its goroutines wait for a CPU). Seconds are
// simulated seconds, summed over the ranks.
type Lag struct {
	// Busy is the simulated time the ranks' steps lasted; Behind the part
	// of it in steps that ended more than LagTolerance behind schedule.
	Busy   float64 `json:"busy_s"`
	Behind float64 `json:"behind_s"`
	// Steps counts the steps, Late those behind schedule.
	Steps int64 `json:"steps"`
	Late  int64 `json:"late_steps"`
	// Worst is the most a step ended behind schedule.
	Worst float64 `json:"worst_s"`
}

// Since is the lag between an earlier reading and l (Worst is l's, the
// worst since the engine started).
func (l Lag) Since(earlier Lag) Lag {
	return Lag{Busy: l.Busy - earlier.Busy, Behind: l.Behind - earlier.Behind, Steps: l.Steps - earlier.Steps, Late: l.Late - earlier.Late, Worst: l.Worst}
}

// Share is the share of the busy time spent in late steps, 0 to 1 (0
// with no step).
func (l Lag) Share() float64 {
	if l.Busy <= 0 {
		return 0
	}
	return min(l.Behind/l.Busy, 1)
}

// lagMeter counts the wall clock's lag; its methods are safe for the
// ranks' loops and the handler at once.
type lagMeter struct {
	mu  sync.Mutex
	lag Lag
}

// step records a step of dur simulated seconds that ended late seconds
// behind its schedule (late <= 0: on time).
func (m *lagMeter) step(dur, late float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lag.Busy += dur
	m.lag.Steps++
	m.lag.Worst = max(m.lag.Worst, late)
	if late > LagTolerance {
		m.lag.Behind += dur
		m.lag.Late++
	}
}

func (m *lagMeter) read() Lag {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lag
}
