package campaign

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"sweep/configs/matrix"
	"sweep/internal/filename"
	"sweep/internal/usage"
	"sweep/metrics/result"
	"sweep/recipes"
	"sweep/recipes/models"
	"sweep/recipes/schema"
)

// Point is one scheduled benchmark point.
type Point struct {
	// ID is InferenceX's RESULT_FILENAME of the point: the name of its
	// subdirectory in the sweep directory and of its result file.
	ID string
	// Index is the point's 0-based position in the sweep.
	Index int
	// Arm is the arm's 0-based index in Schedule.Arms.
	Arm int
	// Plan is the planned point (engine, client, ...). With a shared
	// server, Plan.Engine (and Router, Sidecars) are the arm's server's.
	Plan recipes.Point
	// Server is the 0-based index of the server start that serves the
	// point within its arm.
	Server int
	// ProbeClient, when set, is the point's client planned as an adaptive
	// search's short bracketing probe of ProbeDuration seconds.
	ProbeClient   *recipes.Command
	ProbeDuration int
	// Probe marks a point chosen to run as a probe: a copy of the
	// scheduled one whose Plan.Client is its ProbeClient.
	Probe bool
	// Why is, on a copy an adaptive search chose (Adaptive), the rule
	// that asked for it, with the numbers it read (knee.Step.Why); its
	// point_start record and progress line give it. Empty otherwise.
	Why string
}

// AsProbe returns the point to run as a probe, or p when it has no probe
// client.
func (p *Point) AsProbe() *Point {
	if p.ProbeClient == nil {
		return p
	}
	q := *p
	q.Plan.Client, q.Plan.ProbeDuration, q.Probe = p.ProbeClient, p.ProbeDuration, true
	return &q
}

// Conc is the point's concurrency.
func (p *Point) Conc() int { return p.Plan.Row.Conc }

// Arm is a run of points that share everything but the concurrency (one
// search-space entry of one config key); its points run in a row on one
// node, against one server where the recipe allows.
type Arm struct {
	Index int
	// Identity is the arm's identity, the one its result files carry
	// (result.RowIdentity).
	Identity result.Identity
	// Name is the config key and the arm inside it:
	// "<key> tp8 ep8 dpa kv:dram" (the knees' Identity.Parallelism label).
	Name      string
	ConfigKey string
	Recipe    string
	Runner    string // the row's runner label
	// GPUs is how many GPUs a server of the arm uses (TP·PP·PCP); on a
	// disaggregated multi-node arm, the most any of its workers' nodes
	// uses, and Nodes is the workers' node count (0 on single-node arms).
	GPUs   int
	Nodes  int
	Points []*Point
	// Servers is how many server starts the arm needs (without failures).
	Servers int
	// Shared reports whether one server serves every point; Why says why
	// or why not, for the dry-run.
	Shared bool
	Why    string
	// ServerRow is the row the arm's servers are launched from (image,
	// runner, model: what every point of the arm shares): its largest
	// concurrency's, the one a shared server's engine command is planned
	// for. Set on every arm, also when the server restarts per point.
	ServerRow *matrix.Row
	// Grid is the arm's concurrencies in the config, ascending, before a
	// selection's ConcList narrowed them (SetGrids; nil: not given):
	// those of them not among Points are the config's, not measured.
	Grid []int
}

// Schedule is the order a sweep runs in: arms, each with its points in
// order and the server starts they need.
type Schedule struct {
	Arms   []*Arm
	Points []*Point
	// OnPort, set by Plan, plans points of the single-node arm a again
	// with the arm's server on another public port (a Slurm job's, known
	// once the job has its id): copies of points with the plans Plan
	// would have made on port. Nil on a schedule Plan did not make.
	OnPort func(a *Arm, points []*Point, port int) ([]*Point, error)
}

// ServerStarts is the number of server starts of the schedule.
func (s *Schedule) ServerStarts() int {
	n := 0
	for _, a := range s.Arms {
		n += a.Servers
	}
	return n
}

// ScheduleOptions tune BuildSchedule.
type ScheduleOptions struct {
	// Catalog holds the recipes and their ArmServer declarations (default
	// models.Builtin()).
	Catalog *recipes.Catalog
	// ExactServers runs every point with its own engine command, as
	// InferenceX does, ignoring ArmServer declarations.
	ExactServers bool
	// Official refuses points that cannot be valid submissions for their
	// scenario (recipes.Point.SubmissionProblem), e.g. shorter than its
	// minimum duration.
	Official bool
}

// BuildSchedule groups planned points into arms (same config key and
// row but for the concurrency), keeps the input order of arms and of
// points within an arm, and decides the server starts: consecutive points
// whose engine command and environment are identical (ServerKey) share a
// server; a recipe that declares ArmServer gets one server planned for the
// arm's largest concurrency. Points must have distinct ResultFilenames.
func BuildSchedule(points []recipes.Point, o ScheduleOptions) (*Schedule, error) {
	if o.Catalog == nil {
		o.Catalog = models.Builtin()
	}
	s := &Schedule{}
	byArm := map[string]*Arm{}
	seen := map[string]bool{}
	for i := range points {
		pp := points[i]
		// The point's directory in the sweep directory.
		if err := filename.Check("point "+strconv.Itoa(i+1)+"'s result file name", pp.ResultFilename); err != nil {
			return nil, err
		}
		if seen[pp.ResultFilename] {
			return nil, fmt.Errorf("two points named %s: the selection lists a point twice", pp.ResultFilename)
		}
		seen[pp.ResultFilename] = true
		if why := pp.SubmissionProblem(); o.Official && why != "" {
			// What the command was asked (--duration): a usage error.
			return nil, usage.Errorf("official point %s: %s; an official point must be a valid submission: drop --duration or give at least the scenario's minimum", pp.ResultFilename, why)
		}
		k := armKey(&pp)
		a, ok := byArm[k]
		if !ok {
			r := &pp.Row
			id := result.RowIdentity(r)
			a = &Arm{
				Index: len(s.Arms), Identity: id, ConfigKey: pp.Row.ConfigKey, Recipe: pp.Recipe, Runner: r.Runner,
				GPUs: r.GPUs(),
				Name: cmp(pp.Row.ConfigKey, r.ExpName) + " " + id.Parallelism(),
			}
			if l := pp.MultiNode; l != nil {
				a.GPUs, a.Nodes = 0, l.Point.Nodes
				for _, role := range l.Point.Roles {
					a.GPUs = max(a.GPUs, role.GPUsPerNode)
				}
			}
			byArm[k] = a
			s.Arms = append(s.Arms, a)
		}
		a.Points = append(a.Points, &Point{ID: pp.ResultFilename, Arm: a.Index, Plan: pp})
	}
	for _, a := range s.Arms {
		decideServers(a, o)
		for _, p := range a.Points {
			p.Index = len(s.Points)
			s.Points = append(s.Points, p)
		}
	}
	return s, nil
}

// decideServers sets the arm's server starts and the points' servers.
func decideServers(a *Arm, o ScheduleOptions) {
	largest := a.ServerPoint()
	rc, _ := o.Catalog.Recipe(a.Recipe)
	diff := engineDiff(a.Points, engineSchema(rc))
	declared := rc != nil && rc.ArmServer != ""
	switch {
	case len(diff) == 0:
		a.Shared, a.Why = true, "the engine command does not depend on the concurrency"
	case declared && !o.ExactServers:
		a.Shared = true
		a.Why = fmt.Sprintf("recipe %s declares one server for the arm, planned for conc %d (%s)", a.Recipe, largest.Conc(), rc.ArmServer)
		for _, p := range a.Points {
			p.Plan.Engine, p.Plan.Router, p.Plan.Sidecars = largest.Plan.Engine, largest.Plan.Router, largest.Plan.Sidecars
		}
	case declared:
		a.Why = fmt.Sprintf("restart per point (--exact-servers): the engine flags %s change with conc", strings.Join(diff, ", "))
	default:
		a.Why = fmt.Sprintf("restart per point: the engine flags %s change with conc and recipe %s does not declare that one server sized for the largest conc serves the smaller ones (recipes.Recipe.ArmServer)", strings.Join(diff, ", "), a.Recipe)
	}
	a.ServerRow = largest.Plan.Row.Clone()
	prev := ""
	for i, p := range a.Points {
		k := recipes.ServerKey(p.Plan)
		if i > 0 && k != prev {
			a.Servers++
		}
		if i == 0 {
			a.Servers = 1
		}
		p.Server = a.Servers - 1
		prev = k
	}
}

// ServerPoint is the arm's point of largest concurrency (the first of
// them on a tie): a shared server's engine command, router and sidecars
// are planned for it (decideServers), and its directory holds the
// sidecars' files. Nil on an arm without points.
func (a *Arm) ServerPoint() *Point {
	if len(a.Points) == 0 {
		return nil
	}
	largest := a.Points[0]
	for _, p := range a.Points {
		if p.Conc() > largest.Conc() {
			largest = p
		}
	}
	return largest
}

// armKey is the row without its concurrency and the names derived from it.
func armKey(p *recipes.Point) string {
	r := p.Row.Clone()
	r.Conc, r.Concs, r.ExpName, r.RecipeFingerprint = 0, nil, "", ""
	r.RunEval, r.EvalOnly = nil, nil
	data, _ := r.MarshalJSON() // a row always encodes
	return p.Row.ConfigKey + "\x00" + p.Recipe + "\x00" + string(data)
}

// engineSchema is the flag schema of a recipe's engine; nil when the
// recipe or its schema is unknown (the argv is then read without one).
func engineSchema(rc *recipes.Recipe) *schema.Schema {
	if rc == nil {
		return nil
	}
	s, err := schema.Load(string(rc.Engine), rc.EngineVersion)
	if err != nil {
		return nil
	}
	return s
}

// engineDiff names the engine flags and variables whose values differ
// between the points, their engine argvs read with the engine's flag
// schema s (nil: without one).
func engineDiff(points []*Point, s *schema.Schema) []string {
	if len(points) < 2 {
		return nil
	}
	first := flagValues(points[0].Plan, s)
	var out []string
	for _, p := range points[1:] {
		fv := flagValues(p.Plan, s)
		for _, k := range slices.Sorted(maps.Keys(union(first, fv))) {
			if first[k] != fv[k] && !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

// flagValues maps each engine flag to its value (as schema.ReadArgv
// reads the argv with s), each positional token (the program, vLLM's
// serve and model) to itself as arg<i>, and each environment variable,
// as $NAME, to its value.
func flagValues(p recipes.Point, s *schema.Schema) map[string]string {
	argv := schema.ReadArgv(p.Engine.Argv, schema.ArgvOptions{Schema: s})
	out := argv.Values()
	for _, i := range argv.Positionals {
		out["arg"+fmt.Sprint(i)] = argv.Tokens[i]
	}
	for k, v := range p.Engine.Env {
		out["$"+k] = v
	}
	if p.Router != nil {
		out["router"] = strings.Join(p.Router.Argv, " ")
	}
	return out
}

func union(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
