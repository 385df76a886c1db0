package campaign

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/metrics/result"
	"sweep/recipes"
	"sweep/recipes/models"
)

// Selection narrows a matrix to the points a sweep runs; a zero field
// selects every value.
type Selection struct {
	TP, EP []int
	// DPAttn is "", "true" or "false".
	DPAttn   string
	ConcList []int
	// KVOffloading keeps only the arms of this KV offloading mode ("none",
	// "dram"; "" every mode): a key's kv:none and kv:dram search spaces
	// are arms of their own.
	KVOffloading string
}

// Select keeps the agentic rows the selection names, stamped with their
// recipe fingerprint as InferenceX's CI stamps them. A multi-node row is
// selected by its prefill workers' layout and keeps the concurrencies
// of ConcList.
func (s Selection) Select(rows matrix.Matrix) matrix.Matrix {
	var out matrix.Matrix
	for _, r := range rows {
		if r.Kind == matrix.AgenticMultiNode {
			r = s.selectMultiNode(r)
		} else if !s.selectsSingleNode(r) {
			r = nil
		}
		if r != nil {
			r.StampFingerprint()
			out = append(out, r)
		}
	}
	return out
}

// selectsSingleNode reports whether r is a single-node agentic row the
// selection names.
func (s Selection) selectsSingleNode(r *matrix.Row) bool {
	return r.Kind == matrix.AgenticSingleNode && s.selectsLayout(r.ArmLayout()) && s.selectsKV(r) &&
		(len(s.ConcList) == 0 || slices.Contains(s.ConcList, r.Conc))
}

// selectsKV reports whether the selection's KVOffloading names r's.
func (s Selection) selectsKV(r *matrix.Row) bool {
	return s.KVOffloading == "" || r.KVOffloading == s.KVOffloading
}

// selectsLayout reports whether the selection's TP, EP and DPAttn name
// the layout p.
func (s Selection) selectsLayout(p configs.Parallelism) bool {
	switch {
	case len(s.TP) > 0 && !slices.Contains(s.TP, p.TP):
	case len(s.EP) > 0 && !slices.Contains(s.EP, p.EP):
	case s.DPAttn != "" && strconv.FormatBool(p.DPAttn) != s.DPAttn:
	default:
		return true
	}
	return false
}

// selectMultiNode is the multi-node row r with the concurrencies the
// selection names, or nil when it names none of them or not its prefill
// layout.
func (s Selection) selectMultiNode(r *matrix.Row) *matrix.Row {
	if r.Prefill == nil || !s.selectsLayout(r.ArmLayout()) || !s.selectsKV(r) {
		return nil
	}
	if len(s.ConcList) == 0 {
		return r
	}
	var concs []int
	for _, c := range r.Concs {
		if slices.Contains(s.ConcList, c) {
			concs = append(concs, c)
		}
	}
	if len(concs) == 0 {
		return nil
	}
	c := r.Clone()
	c.Concs = concs
	return c
}

// SetGrids sets each arm's Grid from rows, the matrix before Select
// narrowed it: the concurrencies of the rows of the arm's identity.
func (s *Schedule) SetGrids(rows matrix.Matrix) {
	grids := map[string][]int{}
	for _, r := range rows {
		k := result.RowIdentity(r).ArmKey()
		switch r.Kind {
		case matrix.AgenticSingleNode:
			grids[k] = append(grids[k], r.Conc)
		case matrix.AgenticMultiNode:
			grids[k] = append(grids[k], r.Concs...)
		}
	}
	for _, a := range s.Arms {
		g := slices.Clone(grids[a.Identity.ArmKey()])
		slices.Sort(g)
		a.Grid = slices.Compact(g)
	}
}

// ArmConcs is an agentic arm with every concurrency it has.
type ArmConcs struct {
	// ConfigKey and Layout name the arm as Arm.Name does: the key (a
	// multi-node row's exp-name when it has no key) and the layout
	// ("tp8 ep8"; a multi-node arm's prefill and decode).
	ConfigKey, Layout string
	Concs             []int // ascending
}

// ConcMismatch is a ConcList holding concurrencies that no arm the
// selection names has: Select leaves them out.
type ConcMismatch struct {
	Missing []int      // the ConcList values no arm has, in ConcList's order
	Arms    []ArmConcs // the arms the selection names, ConcList aside
	// None is every ConcList value missing: Select keeps no row.
	None bool
}

// CheckConcList compares the selection's ConcList with the concurrencies
// of the agentic arms of rows its TP, EP and DPAttn name. It returns nil
// when every ConcList value is some arm's (or ConcList is empty), and
// when those filters name no arm at all (nothing to compare with:
// CheckEmpty lists the arms then).
func (s Selection) CheckConcList(rows matrix.Matrix) *ConcMismatch {
	if len(s.ConcList) == 0 {
		return nil
	}
	m := &ConcMismatch{Arms: armConcs(rows, s.selectsLayout)}
	if len(m.Arms) == 0 {
		return nil
	}
	has := map[int]bool{}
	for _, a := range m.Arms {
		for _, c := range a.Concs {
			has[c] = true
		}
	}
	found := false
	for _, c := range s.ConcList {
		switch {
		case has[c]:
			found = true
		case !slices.Contains(m.Missing, c):
			m.Missing = append(m.Missing, c)
		}
	}
	if len(m.Missing) == 0 {
		return nil
	}
	m.None = !found
	return m
}

// armConcs are the agentic arms of rows whose layout (Row.ArmLayout)
// keep names, in the rows' order, each with its concurrencies ascending.
func armConcs(rows matrix.Matrix, keep func(configs.Parallelism) bool) []ArmConcs {
	var arms []ArmConcs
	index := map[string]int{}
	for _, r := range rows {
		var concs []int
		switch {
		case r.Kind == matrix.AgenticSingleNode && keep(r.ArmLayout()):
			concs = []int{r.Conc}
		case r.Kind == matrix.AgenticMultiNode && r.Prefill != nil && keep(r.ArmLayout()):
			concs = r.Concs
		default:
			continue
		}
		a := ArmConcs{ConfigKey: cmp(r.ConfigKey, r.ExpName), Layout: result.RowIdentity(r).Parallelism()}
		k := a.ConfigKey + "\x00" + a.Layout
		i, ok := index[k]
		if !ok {
			i = len(arms)
			index[k] = i
			arms = append(arms, a)
		}
		arms[i].Concs = append(arms[i].Concs, concs...)
	}
	for i := range arms {
		slices.Sort(arms[i].Concs)
		arms[i].Concs = slices.Compact(arms[i].Concs)
	}
	return arms
}

// Error names the missing concurrencies and lists the arms'
// concurrencies (armsText).
func (m *ConcMismatch) Error() string {
	missing := make([]string, len(m.Missing))
	for i, c := range m.Missing {
		missing[i] = strconv.Itoa(c)
	}
	them, it := "these concurrencies", "they are"
	if len(m.Missing) == 1 {
		them, it = "this concurrency", "it is"
	}
	s := fmt.Sprintf("--conc-list %s: no selected arm has %s", strings.Join(missing, ", "), them)
	if m.None {
		s += "; pick from "
	} else {
		s += fmt.Sprintf(", so %s left out and the other values run; ", it)
	}
	return s + armsText(m.Arms, "selected arms")
}

// NoMatch is a selection whose TP, EP and DPAttn name no agentic arm of
// the rows (CheckEmpty): Select keeps no row.
type NoMatch struct {
	// Filters are the selection's flags ("--tp 3 --ep 1").
	Filters string
	// Arms are every agentic arm of the rows, each with its
	// concurrencies.
	Arms []ArmConcs
}

// CheckEmpty returns the NoMatch of a selection whose TP, EP and DPAttn
// name no agentic arm of rows, for a sweep that would run nothing: nil
// when they name one, or rows hold no agentic arm (nothing to list). A
// ConcList that names none of the named arms' concurrencies is
// CheckConcList's (None).
func (s Selection) CheckEmpty(rows matrix.Matrix) *NoMatch {
	if len(armConcs(rows, s.selectsLayout)) > 0 {
		return nil
	}
	arms := armConcs(rows, func(configs.Parallelism) bool { return true })
	if len(arms) == 0 {
		return nil
	}
	var f []string
	for _, l := range []struct {
		flag string
		vals []int
	}{{"--tp", s.TP}, {"--ep", s.EP}} {
		if len(l.vals) > 0 {
			f = append(f, l.flag+" "+joinInts(l.vals, ","))
		}
	}
	if s.DPAttn != "" {
		f = append(f, "--dp-attn "+s.DPAttn)
	}
	return &NoMatch{Filters: strings.Join(f, " "), Arms: arms}
}

// CheckKV refuses a selection whose KVOffloading no agentic row of rows
// its layout filters name has (a key with only kv:none search spaces
// asked for dram), naming the modes they have; nil when one has it, no
// mode is asked for or no row is named (CheckEmpty's).
func (s Selection) CheckKV(rows matrix.Matrix) error {
	if s.KVOffloading == "" {
		return nil
	}
	var modes []string
	for _, r := range rows {
		if (r.Kind == matrix.AgenticSingleNode || r.Kind == matrix.AgenticMultiNode) && s.selectsLayout(r.ArmLayout()) {
			if r.KVOffloading == s.KVOffloading {
				return nil
			}
			if !slices.Contains(modes, r.KVOffloading) {
				modes = append(modes, r.KVOffloading)
			}
		}
	}
	if len(modes) == 0 {
		return nil
	}
	return fmt.Errorf("no selected arm has --kv-offloading %s; theirs is %s: drop --kv-offloading, or give one of those", s.KVOffloading, strings.Join(modes, ", "))
}

// Error names the filters and lists every arm with its concurrencies
// (armsText).
func (m *NoMatch) Error() string {
	return fmt.Sprintf("no agentic point matches %s: no arm has that layout; pick from %s", m.Filters, armsText(m.Arms, "arms"))
}

// armsText lists arms and their concurrencies, one line per distinct
// list (arms with the same list share a line), the key named once when
// every arm has the same: "the concurrencies of KEY's selected arms
// (sweep plan lists the points):\n  tp8: 1 4 8\n  tp4, tp2: 4 8" (which:
// "selected arms").
func armsText(arms []ArmConcs, which string) string {
	var b strings.Builder
	oneKey := true
	for _, a := range arms {
		oneKey = oneKey && a.ConfigKey == arms[0].ConfigKey
	}
	if oneKey {
		b.WriteString("the concurrencies of " + arms[0].ConfigKey + "'s " + which + " (sweep plan lists the points):")
	} else {
		b.WriteString("the concurrencies of the " + which + " (sweep plan lists the points):")
	}
	var lines []string
	names := map[string][]string{}
	for _, a := range arms {
		line := joinInts(a.Concs, " ")
		if _, ok := names[line]; !ok {
			lines = append(lines, line)
		}
		name := a.Layout
		if !oneKey {
			name = a.ConfigKey + " " + a.Layout
		}
		names[line] = append(names[line], name)
	}
	for _, line := range lines {
		b.WriteString("\n  " + strings.Join(names[line], ", ") + ": " + line)
	}
	return b.String()
}

// joinInts joins vs with sep: "1 4 8".
func joinInts(vs []int, sep string) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, sep)
}

// PlanOptions say how Plan turns rows into a sweep's schedule.
type PlanOptions struct {
	// Recipe plans each point; ResultDir and Port are set per point, and
	// a zero Port is recipes.DefaultPort.
	Recipe recipes.PlanOptions
	// ExactServers restarts the engine for every point whose planned
	// command differs (ScheduleOptions.ExactServers).
	ExactServers bool
	// Official schedules official points (ScheduleOptions.Official).
	Official bool
	// ProbeDuration, when > 0, plans each point's client once more as an
	// adaptive search's bracketing probe of that many seconds
	// (Point.ProbeClient): MinProbeSeconds or more, and less than the
	// point's full length (Plan refuses it otherwise).
	ProbeDuration int
	// ArmPort picks the public port of the arm with the given 0-based
	// index (nil: Recipe.Port + 2·index, so that an arm's router and
	// engine ports do not meet the next arm's).
	ArmPort func(arm int) (int, error)
	// MultiNodePorts picks the n ports of the disaggregated multi-node
	// arm with the given index, laid out on this host: its router's, then
	// one per worker (nil: the router on the arm's port as ArmPort would
	// give it, the workers on ports above every arm's pair).
	MultiNodePorts func(arm, n int) ([]int, error)
}

// Plan plans rows into the sweep directory dir: each point writes into
// result.PointDir(dir, RESULT_FILENAME), each arm runs on its own port. It plans twice:
// once to learn the points' names and arms, then each point into its
// directory on its arm's port. A planning error wraps recipes' error: a
// recipes.ErrInvalidOptions one as it is, any other behind "plan: ".
func Plan(rows matrix.Matrix, dir string, o PlanOptions) (*Schedule, error) {
	po := o.Recipe
	po.ResultDir = dir
	if po.Port == 0 {
		po.Port = recipes.DefaultPort
	}
	if po.Catalog == nil {
		po.Catalog = models.Builtin()
	}
	so := ScheduleOptions{ExactServers: o.ExactServers, Official: o.Official, Catalog: po.Catalog}
	single, multi := splitMultiNode(rows)
	first, err := recipes.Plan(single, po)
	if err != nil {
		return nil, planError(err)
	}
	for _, r := range multi {
		got, err := planMultiNode(r, po, nil)
		if err != nil {
			return nil, err
		}
		first = append(first, got...)
	}
	sched, err := BuildSchedule(first, so)
	if err != nil {
		return nil, err
	}
	base := po.Port
	points := make([]recipes.Point, 0, len(first))
	probes := map[string]*recipes.Command{}
	next := base + 2*len(sched.Arms) // the workers' ports by default
	for _, a := range sched.Arms {
		if a.Points[0].Plan.MultiNode != nil {
			l := a.Points[0].Plan.MultiNode
			n := 1 + len(l.Workers)
			var ports []int
			if o.MultiNodePorts != nil {
				if ports, err = o.MultiNodePorts(a.Index, n); err != nil {
					return nil, err
				}
			} else {
				ports = []int{base + 2*a.Index}
				for range n - 1 {
					ports = append(ports, next)
					next++
				}
			}
			pp := po
			for _, p := range a.Points {
				pp.ResultDir = result.PointDir(dir, p.ID)
				got, err := planMultiNode(&p.Plan.Row, pp, ports)
				if err != nil {
					return nil, err
				}
				points = append(points, got...)
			}
			continue
		}
		port := base + 2*a.Index
		if o.ArmPort != nil {
			if port, err = o.ArmPort(a.Index); err != nil {
				return nil, err
			}
		}
		for _, p := range a.Points {
			got, err := planOnPort(p, po, dir, port)
			if err != nil {
				return nil, err
			}
			points = append(points, got)
			if o.ProbeDuration > 0 {
				if full := recipes.Duration(&p.Plan.Row, po.Fast, po.Duration); o.ProbeDuration >= full {
					return nil, fmt.Errorf("%w: probe duration %d s: %s runs %d s at the full length, and a probe must be shorter (the search reads its probes against the full-length points): give less than %d s, or 0 to run every point at the full length",
						recipes.ErrInvalidOptions, o.ProbeDuration, p.ID, full, full)
				}
				pp := po
				pp.ProbeDuration = o.ProbeDuration
				probe, err := planOnPort(p, pp, dir, port)
				if err != nil {
					return nil, err
				}
				probes[p.ID] = probe.Client
			}
		}
	}
	s, err := BuildSchedule(points, so)
	if err != nil {
		return nil, err
	}
	for _, p := range s.Points {
		if c := probes[p.ID]; c != nil {
			p.ProbeClient, p.ProbeDuration = c, o.ProbeDuration
		}
	}
	s.OnPort = func(a *Arm, points []*Point, port int) ([]*Point, error) {
		return onPort(a, points, port, po, dir, so)
	}
	return s, nil
}

// planOnPort plans the single-node point p again into its directory
// below dir with its server on port.
func planOnPort(p *Point, po recipes.PlanOptions, dir string, port int) (recipes.Point, error) {
	po.Port = port
	po.ResultDir = result.PointDir(dir, p.ID)
	got, err := recipes.Plan(matrix.Matrix{&p.Plan.Row}, po)
	if err != nil {
		return recipes.Point{}, planError(err)
	}
	return got[0], nil
}

// onPort is Schedule.OnPort of a schedule Plan planned with po and so
// into dir: every point of the single-node arm a planned on port and its
// servers decided again (a shared server is planned for the arm's
// largest concurrency, as on the planned port), then points as copies
// with those plans. A probe's client is not planned again: an arm with
// probes is refused.
func onPort(a *Arm, points []*Point, port int, po recipes.PlanOptions, dir string, so ScheduleOptions) ([]*Point, error) {
	if a.Nodes > 0 {
		return nil, fmt.Errorf("arm %d: a multi-node arm's ports are its deployment's", a.Index+1)
	}
	var planned []recipes.Point
	for _, p := range a.Points {
		got, err := planOnPort(p, po, dir, port)
		if err != nil {
			return nil, err
		}
		planned = append(planned, got)
	}
	s, err := BuildSchedule(planned, so)
	if err != nil {
		return nil, err
	}
	byID := map[string]*Point{}
	for _, p := range s.Points {
		byID[p.ID] = p
	}
	out := make([]*Point, 0, len(points))
	for _, p := range points {
		got := byID[p.ID]
		if got == nil || p.ProbeClient != nil {
			return nil, fmt.Errorf("arm %d: point %s cannot be planned on port %d (not of the arm, or a probe)", a.Index+1, p.ID, port)
		}
		c := *p
		c.Plan = got.Plan
		out = append(out, &c)
	}
	return out, nil
}

// MinProbeSeconds is the shortest probe an adaptive search takes: a probe
// of a few seconds reads little but its warm-up (1 s probes put a
// simulated MiniMax-M3 arm, knee c14, saturated at c1).
const MinProbeSeconds = 60

// splitMultiNode separates the multi-node rows from the single-node ones.
func splitMultiNode(rows matrix.Matrix) (single, multi matrix.Matrix) {
	for _, r := range rows {
		if r.Kind == matrix.AgenticMultiNode {
			multi = append(multi, r)
		} else {
			single = append(single, r)
		}
	}
	return single, multi
}

// planMultiNode plans each concurrency of the multi-node row r as a
// disaggregated point on this host (recipes.PlanLocalMultiNode) with the
// given ports (nil: placeholders from po.Port, for a first plan that only
// names the points).
func planMultiNode(r *matrix.Row, po recipes.PlanOptions, ports []int) ([]recipes.Point, error) {
	var out []recipes.Point
	for _, c := range r.Concs {
		if ports == nil {
			p, err := recipes.PlanMultiNode(matrix.Matrix{r}, po)
			if err != nil {
				return nil, planError(err)
			}
			for i := range 1 + recipes.LocalWorkerCount(&p[0]) {
				ports = append(ports, po.Port+i)
			}
		}
		l, err := recipes.PlanLocalMultiNode(r, c, po, ports)
		if err != nil {
			return nil, planError(err)
		}
		p := l.SweepPoint()
		p.Fast = po.Fast
		out = append(out, p)
	}
	return out, nil
}

func planError(err error) error {
	if errors.Is(err, recipes.ErrInvalidOptions) {
		return err
	}
	return fmt.Errorf("plan: %w", err)
}

// Parallel is how many of the schedule's arms run at once on a node of
// nGPUs, for the first ETA: as many of the first arm's size as fit, at
// least one.
func (s *Schedule) Parallel(nGPUs int) int {
	if len(s.Arms) == 0 {
		return 1
	}
	return max(1, min(len(s.Arms), nGPUs/max(1, s.Arms[0].GPUs)))
}
