package campaign

import (
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
// mean of its journal's server starts and of its completed points, each
// falling back to the plan's where the journal has none.
func MeasuredCost(dir string, duration int) (*Cost, error) {
	c := PlannedCost(duration)
	recs, err := ReadJournal(dir)
	if err != nil {
		return c, err
	}
	var starts, points []float64
	for _, r := range recs {
		switch {
		case r.Event == EventServerReady && r.Seconds > 0:
			starts = append(starts, r.Seconds)
		case r.Event == EventPointEnd && r.Status == StatusOK && r.Seconds > 0:
			points = append(points, r.Seconds)
		}
	}
	if len(starts) > 0 {
		c.StartSeconds, c.MeasuredStart = stats.Mean(starts), true
	}
	if len(points) > 0 {
		c.PointSeconds, c.MeasuredPoint = stats.Mean(points), true
	}
	return c, nil
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
