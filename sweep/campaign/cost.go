package campaign

import (
	"fmt"
	"math"
	"strings"
	"time"

	"sweep/internal/stats"
	"sweep/recipes"
)

// DefaultServerStartSeconds is the planned time from engine start to
// /health: weight loading plus graph capture of a large MoE model on
// one node, about 10 minutes on MI325X/MI355X-class nodes.
const DefaultServerStartSeconds = 600

// Cost predicts a schedule's times on a real cluster: the time of a
// server start and of each point.
type Cost struct {
	// StartSeconds is a server start's time (DefaultServerStartSeconds
	// when planned).
	StartSeconds float64
	// PointSeconds is every full point's time (0: from the plan).
	PointSeconds float64
	// Duration is the --duration override of the points (0: the row's).
	Duration int
	// MeasuredStart and MeasuredPoint say the times came from a journal.
	MeasuredStart, MeasuredPoint bool
}

// PlannedCost is the cost model of the plan: a default server start and
// each point's benchmark duration (override: --duration) plus a minute.
func PlannedCost(duration int) *Cost {
	return &Cost{StartSeconds: DefaultServerStartSeconds, Duration: duration}
}

// MeasuredCost is the cost model of the earlier sweep directory dir: the
// mean of its journal's server starts and of its completed full-length
// points (measured), each falling back to the plan's where the journal
// has none. A simulated sweep's times are this host's, not the
// hardware's: its directory gives an error and the plan's times.
func MeasuredCost(dir string, duration int) (*Cost, error) {
	c := PlannedCost(duration)
	recs, err := ReadJournal(dir)
	if err != nil {
		return c, err
	}
	if len(recs) > 0 && recs[0].Identity.Simulated() {
		return c, fmt.Errorf("%s holds a simulated sweep: its times are this host's, not the hardware's", dir)
	}
	return c.measured(recs), nil
}

// measured is c with the times recs measured: the mean server start
// (server_ready) and the mean completed full-length point (a probe's
// time is its own length's, not a point's), each where recs have one.
func (c *Cost) measured(recs []Record) *Cost {
	m := *c
	var starts, points []float64
	for _, r := range recs {
		switch {
		case r.Event == EventServerReady && r.Seconds > 0:
			starts = append(starts, r.Seconds)
		case r.Event == EventPointEnd && r.Status == StatusOK && !r.Probe && r.Seconds > 0:
			points = append(points, r.Seconds)
		}
	}
	if len(starts) > 0 {
		m.StartSeconds, m.MeasuredStart = stats.Mean(starts), true
	}
	if len(points) > 0 {
		m.PointSeconds, m.MeasuredPoint = stats.Mean(points), true
	}
	return &m
}

// Point is a point's load time on a real cluster in seconds: measured,
// else its benchmark duration plus a minute for warm-up and drain; a
// probe's is its own duration plus the minute.
func (c *Cost) Point(p *Point) float64 {
	if p.Plan.ProbeDuration > 0 {
		return float64(p.Plan.ProbeDuration) + 60
	}
	if c.PointSeconds > 0 {
		return c.PointSeconds
	}
	return float64(recipes.Duration(&p.Plan.Row, p.Plan.Fast, c.Duration)) + 60
}

// PointWall is a point's expected wall time here: Point, compressed by
// the time scale when simulated.
func (c *Cost) PointWall(p *Point, simulate bool, scale float64) time.Duration {
	s := c.Point(p)
	if simulate {
		s = s/scale + 3
	}
	return time.Duration(s * float64(time.Second))
}

// VirtualWork is a point's cost to this host on the simulated engine's
// virtual clock, relative to the others' (Options.Work): there a point
// takes the host the time to simulate its tokens, not its length, so its
// length (a probe's own) times log2(16·conc): a fixed part (the client's
// start and the result's writing, about four doublings' worth) plus about
// as much per doubling of the concurrency, as a saturating arm's
// throughput grows. On the recorded times of three simulated discoveries
// (TestVirtualWorkETA) the ETA it gives is within 26 % of the time left
// where one point each took was within 51 %.
func (c *Cost) VirtualWork(p *Point) float64 {
	d := p.Plan.ProbeDuration
	if d == 0 {
		d = recipes.Duration(&p.Plan.Row, p.Plan.Fast, c.Duration)
	}
	return float64(d) * math.Log2(16*float64(max(1, p.Conc())))
}

// Watchdog bounds a point's run: twice its expected wall time, plus slack
// for the client's own start and drain.
func (c *Cost) Watchdog(simulate bool, scale float64) func(*Point) time.Duration {
	return func(p *Point) time.Duration { return 2*c.PointWall(p, simulate, scale) + time.Minute }
}

// Arm is an arm's time in seconds with the schedule's server starts, and
// InferenceX's (one server start per point).
func (c *Cost) Arm(a *Arm) (ours, theirs float64) {
	for _, p := range a.Points {
		ours += c.Point(p)
		theirs += c.Point(p) + c.StartSeconds
	}
	ours += float64(a.Servers) * c.StartSeconds
	return ours, theirs
}

// Estimate is a schedule's predicted cost.
type Estimate struct {
	ServerStarts int
	GPUHours     float64
	// WallSeconds is the time to run every arm on the node.
	WallSeconds float64
}

// Packer predicts the wall time of arms of the given lengths in seconds,
// placed as an executor places them (local.Executor.Wall).
type Packer func(arms []*Arm, seconds []float64) float64

// Estimate prices the schedule with its server starts (ours) and with
// InferenceX's one server start per point (theirs), the arms packed by
// pack.
func (c *Cost) Estimate(s *Schedule, pack Packer) (ours, theirs Estimate) {
	oursArm := make([]float64, len(s.Arms))
	theirsArm := make([]float64, len(s.Arms))
	for i, a := range s.Arms {
		oursArm[i], theirsArm[i] = c.Arm(a)
		gpus := float64(a.GPUs * max(a.Nodes, 1))
		ours.GPUHours += oursArm[i] * gpus / 3600
		theirs.GPUHours += theirsArm[i] * gpus / 3600
	}
	ours.ServerStarts, theirs.ServerStarts = s.ServerStarts(), len(s.Points)
	ours.WallSeconds, theirs.WallSeconds = pack(s.Arms, oursArm), pack(s.Arms, theirsArm)
	return ours, theirs
}

// SimulatedSeconds is the wall time of the schedule's load when
// simulated at the time scale, one point after the other.
func (c *Cost) SimulatedSeconds(s *Schedule, scale float64) float64 {
	total := 0.0
	for _, p := range s.Points {
		total += c.PointWall(p, true, scale).Seconds()
	}
	return total
}

// serverStartFailed begins the error of a point whose server did not
// start: its load never ran.
const serverStartFailed = "server start: "

// notTried follows serverStartFailed in the error of a point failed
// without a start of its own: its arm's server had not started.
const notTried = "not tried"

// Spending is what a sweep directory's runs cost on the hardware, over
// every invocation, beside what its schedule's grid costs.
type Spending struct {
	// ServerStarts, Runs (at the full length) and Probes count what ran:
	// every run of a point (a probe and its full-length run again count
	// one each), a server start that failed too. A point whose server did
	// not start never ran, and a run whose end records no time (its job
	// killed before the node recorded it) is not counted.
	ServerStarts int     `json:"server_starts"`
	Runs         int     `json:"full_length_runs"`
	Probes       int     `json:"probes"`
	GPUHours     float64 `json:"gpu_hours"`
	// Interrupted counts the runs and probes above that were interrupted
	// (Ctrl-C, a sweep that stopped): priced whole when simulated, at
	// their time when measured. Unended counts the runs the journal
	// started and never ended (the sweep killed): what they cost is not
	// recorded, and they are neither counted above nor priced.
	Interrupted int `json:"interrupted_runs,omitempty"`
	Unended     int `json:"unended_runs,omitempty"`
	// GridGPUHours is the schedule's every point once at the full length
	// on its planned server starts; InferenceXGPUHours the same points
	// with a server start each, as InferenceX runs them (Estimate).
	GridGPUHours       float64 `json:"grid_gpu_hours"`
	InferenceXGPUHours float64 `json:"inferencex_gpu_hours"`
	// Measured says a run is priced at its recorded time and a server
	// start at the directory's mean (StartSeconds); otherwise, for a
	// simulated sweep whose times are this host's, each as the cost model
	// plans it.
	Measured     bool    `json:"measured"`
	StartSeconds float64 `json:"server_start_seconds"`
}

// Spent prices what the journal records recs of schedule s say ran
// (Spending), the grid with them. simulated prices every run as c plans
// it (a failed or interrupted run as a whole one); otherwise a run
// costs its recorded time and a server start the records' mean
// (measured). A server start that failed costs its recorded time when
// measured, and when simulated the plan's or its recorded wait if longer
// (a ready timeout is waited out in full).
func (c *Cost) Spent(s *Schedule, recs []Record, simulated bool) Spending {
	price := c
	if !simulated {
		price = c.measured(recs)
	}
	sp := Spending{Measured: !simulated, StartSeconds: price.StartSeconds}
	open := map[string]bool{} // points whose last start has no end yet
	for _, r := range recs {
		switch r.Event {
		case EventPointStart:
			if open[r.Point] {
				sp.Unended++
			}
			open[r.Point] = !r.NoServer
		case EventPointEnd:
			open[r.Point] = false
			if r.Status == StatusInterrupted && ran(r) {
				sp.Interrupted++
			}
		}
		if r.Arm < 1 || r.Arm > len(s.Arms) {
			continue
		}
		a := s.Arms[r.Arm-1]
		gpus := float64(a.GPUs * max(a.Nodes, 1))
		switch {
		case r.Event == EventServerStart:
			sp.ServerStarts++
			sp.GPUHours += gpus * price.StartSeconds / 3600
		case r.Event == EventPointEnd && startFailed(r):
			// The start above failed after r.Seconds: measured, that is
			// what it cost; simulated, a ready timeout is waited out in
			// full here too, so a longer wait than the plan's is the
			// hardware's as well.
			d := r.Seconds - price.StartSeconds
			if simulated {
				d = max(d, 0)
			}
			sp.GPUHours += gpus * d / 3600
		case r.Event == EventPointEnd && ran(r) && r.Index >= 1 && r.Index <= len(s.Points):
			p := s.Points[r.Index-1]
			if r.Probe {
				p = p.AsProbe()
				sp.Probes++
			} else {
				sp.Runs++
			}
			t := price.Point(p)
			if !simulated && r.Seconds > 0 {
				t = r.Seconds
			}
			sp.GPUHours += gpus * t / 3600
		}
	}
	for _, o := range open {
		if o {
			sp.Unended++
		}
	}
	ours, theirs := price.Estimate(s, func([]*Arm, []float64) float64 { return 0 })
	sp.GridGPUHours, sp.InferenceXGPUHours = ours.GPUHours, theirs.GPUHours
	return sp
}

// startFailed reports whether the point_end record r ends the server
// start made for its point, which failed (not a point failed unstarted
// because its arm's server had not started: "not tried").
func startFailed(r Record) bool {
	return strings.HasPrefix(r.Error, serverStartFailed) && !strings.HasPrefix(r.Error, serverStartFailed+notTried) && r.Seconds > 0
}

// ran reports whether the point_end record r ends a run of the point's
// load: it completed, or it failed or was interrupted after its load
// started (a job that never started records no time, a point whose
// server did not start its error).
func ran(r Record) bool {
	switch r.Status {
	case StatusOK:
		return true
	case StatusFailed, StatusInterrupted:
		return r.Seconds > 0 && !strings.HasPrefix(r.Error, serverStartFailed)
	}
	return false
}
