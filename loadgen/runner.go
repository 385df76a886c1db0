package loadgen

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// runner holds the state of one Run. Lanes share it under mu.
type runner struct {
	o          Options
	hc         *http.Client
	url        string
	ds         *dataset
	convs      []*Conversation
	benchID    string
	procID     string
	progress   io.Writer
	start      time.Time
	clock      clock
	mu         sync.Mutex
	records    []*record
	counts     map[string]*Counts
	issued     int // profiling requests issued
	sessions   int // session plays started (session_num)
	profPlays  int // root plays started during profiling
	sampleNext int
	abort      *RunError
	cancelIss  context.CancelFunc
	cancelReq  context.CancelCauseFunc
	idle       *idleGuard

	// On the virtual clock (Options.VirtualClock): the clock, the run's
	// own participant, and the simulated limits of the current phase:
	// lanes issue nothing at or after issueEnd, and requests still open
	// at cancelAt are cancelled (+Inf: no limit).
	vc       *vclock
	main     *vpart
	issueEnd float64
	cancelAt float64
	// limitHit: the profiling phase ended at its request or session
	// count, before issueEnd (under mu).
	limitHit bool
	// simStart and simFront are the simulated start of profiling and the
	// latest end of a profiling request (artifact ns), for progress lines.
	simStart, simFront int64
	// ahead counts the turns sent ahead of their participant's wake-up,
	// again those sent again because the idle-gap cap woke it earlier.
	ahead, again int
	// phaseWindow is the profiling phase's start and end (artifact ns),
	// the window of the sweep-line metrics (0, 0: not profiled).
	phaseWindow [2]int64
	// branches counts the profiling phase's subagent spawns and joins.
	branches branchStats
}

// branchStats is aiperf 0.12.0's branch_stats: the subagent trees of the
// profiling phase. The built-in spawns a turn's subagents at once and
// joins them all (aiperf's SPAWN / SPAWN_JOIN), never delays a spawn,
// never suppresses a join and never fails a parent for its child's error,
// so those counts, and the graph ones (aiperf's DAG datasets), stay 0.
type branchStats struct {
	spawned, completed, errored, truncated, suspended, resumed int
}

func (b branchStats) object() object {
	return object{
		{"children_spawned", b.spawned}, {"children_completed", b.completed}, {"children_errored", b.errored},
		{"children_truncated", b.truncated}, {"children_delayed", 0}, {"parents_suspended", b.suspended},
		{"parents_resumed", b.resumed}, {"parents_failed_due_to_child_error", 0}, {"joins_suppressed", 0},
		{"graphs_admitted", 0}, {"graphs_completed_to_end", 0},
	}
}

// nowNs is the artifact timestamp of now: the wall clock (scaled), or
// the run participant's simulated time.
func (r *runner) nowNs() int64 {
	if r.vc != nil {
		return r.vc.ns(r.main.now)
	}
	return r.clock.now()
}

// issuing reports whether p (nil on the wall clock) may still issue.
func (r *runner) issuing(ctx context.Context, p *vpart) bool {
	return ctx.Err() == nil && (p == nil || p.now < r.issueEnd)
}

func (r *runner) logf(format string, a ...any) {
	fmt.Fprintf(r.progress, "loadgen: "+format+"\n", a...)
}

// lane is one concurrency slot: a worker id and its current root play.
type lane struct {
	idx    int
	worker string
	sess   *session
	plays  int    // root plays started on this lane
	p      *vpart // the lane's participant on the virtual clock
	// primed are the subagent sessions in flight at the lane's start,
	// primed at their first turn, of the block of main turn primedAt.
	primed   []*session
	primedAt int
}

// artifactID is the benchmark id the artifacts carry: 12 hex digits, as
// aiperf 0.12.0 writes it (benchID, a UUID, seeds the run's other ids).
func (r *runner) artifactID() string {
	return strings.ReplaceAll(r.benchID, "-", "")[:12]
}
