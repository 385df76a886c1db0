package recipes

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"sweep/configs/matrix"
	"sweep/metrics/aiperf"
	"sweep/metrics/result"
	"sweep/recipes/schema"
)

// HFSnapshotPlaceholder stands for the revision of a model snapshot in the
// HF hub cache, which the H200 MiniMax-M3 recipe resolves at run time
// (refs/main of the cached model).
const HFSnapshotPlaceholder = "${HF_SNAPSHOT_REVISION}"

// Plan builds the point of every row (Row.ConfigKey names each point's
// key in problems and output). Every command is checked against its
// schema; when any row cannot be planned the error is a *PlanError listing
// every problem of every point, and the points are nil.
func Plan(rows matrix.Matrix, opts PlanOptions) ([]Point, error) {
	cfg, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.Catalog == nil {
		return nil, fmt.Errorf("%w: no recipe catalog (pass models.Builtin() from sweep/recipes/models, or your own)", ErrInvalidOptions)
	}
	for _, row := range rows {
		if err := CheckRunner(row, cfg.Runners, cfg.RunnerName); err != nil {
			return nil, err
		}
	}
	points := make([]Point, 0, len(rows))
	probs, unsupported := unsupportedProblems(rows)
	for i, row := range rows {
		if unsupported[i] {
			continue
		}
		p, ps := cfg.plan(i, row)
		probs = append(probs, ps...)
		if len(ps) == 0 {
			points = append(points, p)
		}
	}
	if len(probs) > 0 {
		return nil, &PlanError{Problems: mergeNotSupported(probs)}
	}
	return points, nil
}

func kvName(r *matrix.Row) string {
	if r.KVOffloadBackend != nil {
		return "-" + r.KVOffloadBackend.Name
	}
	return "-" + r.KVOffloading
}

// plan builds one point; problems are returned rather than failing early so
// a plan reports everything at once.
func (o *planConfig) plan(i int, row *matrix.Row) (Point, []*Problem) {
	key := row.ConfigKey
	var probs []*Problem
	fail := func(recipe, role string, err error) {
		if ps := schema.Problems(err); len(ps) > 0 {
			for _, pe := range ps {
				probs = append(probs, &Problem{Index: i, ConfigKey: key, Point: describe(row), Recipe: recipe, Role: role, Err: pe})
			}
			return
		}
		probs = append(probs, &Problem{Index: i, ConfigKey: key, Point: describe(row), Recipe: recipe, Role: role, Err: err})
	}
	if row.Kind != matrix.AgenticSingleNode {
		fail("", "recipe", fmt.Errorf("only single-node agentic rows can be planned, not %s", row.Kind))
		return Point{}, probs
	}
	runners := o.Runners
	if o.RunnerName != "" {
		runners = nil
	}
	rc, err := o.Catalog.Lookup(rowWithRunner(row, o.RunnerName), runners)
	if err != nil {
		fail("", "recipe", err)
		return Point{}, probs
	}
	if rc.SpecFor != nil {
		rc = rc.Clone()
		rc.Spec = rc.SpecFor(row)
	}
	c, err := o.ctx(row, rc)
	if err != nil {
		fail(rc.Name, "recipe", err)
		return Point{}, probs
	}
	runner := o.runner(row)
	p := Point{
		Row: *row.Clone(), Recipe: rc.Name, CommandFile: rc.CommandFile,
		Port: c.Port, EnginePort: c.EnginePort, ResultDir: o.ResultDir,
		HealthURL: healthURL(c.EnginePort),
		Fast:      o.Fast && !c.EvalOnly,
		ResultFilename: result.ResultFilename(result.FilenameParts{
			ExpName: row.ExpName, Precision: row.Precision, Framework: row.Framework,
			Parallelism: row.Parallelism, Disagg: row.Disagg, SpecDecoding: row.SpecDecoding, Conc: row.Conc, RunnerName: runner,
			RecipeFingerprint: row.RecipeFingerprint,
		}),
	}
	if rc.Spec.Enabled() && !c.EvalOnly {
		al := c.GoldenAL
		p.GoldenAL = &al
	}
	off, err := rc.offloadFor(c)
	if err != nil {
		fail(rc.Name, "recipe", err)
		return Point{}, probs
	}

	env, clientOnly := o.env(c, rc, off)
	common := Command{Unset: []string{"MAX_MODEL_LEN"}}
	if rc.CopyHIPDevices {
		common.EnvFrom = map[string]string{"HIP_VISIBLE_DEVICES": "ROCR_VISIBLE_DEVICES"}
	}
	withEnv := func(argv []string, extra ...map[string]string) Command {
		cmd := common
		cmd.Argv = argv
		cmd.Env = maps.Clone(env)
		for _, e := range extra {
			maps.Copy(cmd.Env, e)
		}
		cmd.Unset, cmd.EnvFrom = slices.Clone(common.Unset), maps.Clone(common.EnvFrom)
		return cmd
	}

	// Engine.
	es, err := schema.Load(string(rc.Engine), rc.EngineVersion)
	if err != nil {
		fail(rc.Name, "engine", err)
		return Point{}, probs
	}
	engineArgs := append([]Arg{serveArgs(rc)}, rc.Args...)
	argv, escapes, err := build(es, c, rc, engineArgs)
	if err != nil {
		fail(rc.Name, "engine", err)
	}
	p.Engine = withEnv(argv)
	if strings.Contains(c.ModelPath, HFSnapshotPlaceholder) {
		p.Engine.Placeholders = []string{HFSnapshotPlaceholder}
	}
	p.Escapes = append(p.Escapes, escapes...)
	if off != nil && off.Sidecars != nil {
		for _, s := range off.Sidecars(c) {
			s.Command = withEnv(s.Command.Argv)
			for _, err := range sidecarProblems(s) {
				probs = append(probs, &Problem{Index: i, ConfigKey: key, Point: describe(row), Recipe: rc.Name, Role: "sidecar " + s.Name, Err: err})
			}
			p.Sidecars = append(p.Sidecars, s)
		}
	}

	// Router (DP attention).
	if c.DPAttn {
		name, rargv, err := routerCommand(c, rc)
		if err != nil {
			fail(rc.Name, "router", err)
		} else {
			r := withEnv(rargv)
			p.Router, p.RouterHealthURL = &r, healthURL(c.Port)
			p.Escapes = append(p.Escapes, schema.Escape{Flag: name, Reason: "no flag schema for the router yet; its argv is not validated"})
		}
	}

	// Client or eval.
	url := "http://localhost:" + strconv.Itoa(c.Port)
	var serverMetrics []string
	if rc.Client.ServerMetrics {
		serverMetrics = []string{metricsURL(c.EnginePort)}
	}
	if c.EvalOnly {
		e := evalCommand(c, o.ResultDir)
		cmd := withEnv(e.Argv, map[string]string{"PYTHONPATH": placeholderLMEvalPatchDir})
		cmd.Placeholders = e.Placeholders
		p.Eval = &cmd
		p.Escapes = append(p.Escapes, schema.Escape{Flag: "lm_eval", Reason: "no flag schema for lm-eval yet; its argv is not validated"})
	} else {
		rs := replaySettings{
			URL: url, Duration: o.duration(row), WarmupPerLane: officialWarmupPerLane,
			ArtifactDir: aiperf.ArtifactDir(o.ResultDir), ServerMetrics: serverMetrics,
		}
		if o.Fast {
			rs.WarmupPerLane = fastWarmupPerLane
		}
		cargv, cesc, err := build(o.aiperf, c, rc, clientArgs(c, rc, o.aiperf, rs))
		if err != nil {
			fail(rc.Name, "client", err)
		}
		cmd := withEnv(cargv, clientOnly, replayEnv)
		p.Client = &cmd
		p.ProbeDuration = o.ProbeDuration
		p.Escapes = append(p.Escapes, cesc...)
		p.RequiredMetricPrefix = rc.Client.RequiredMetricPrefix
	}
	p.MetricsURLs = append([]string{metricsURL(c.Port)}, serverMetrics...)
	p.MetricsURLs = slices.Compact(p.MetricsURLs)
	return p, probs
}

// CheckSidecar checks a sidecar's command against the flag schema of its
// program (an LMCache server's, lmcache), as the engine's and the
// client's argv are built through theirs: the schema (nil for a program
// with none, such as mooncake_master, which is not checked) and the
// schema's problems (*schema.Error, joined; nil when it parses). Plan
// reports each with its fix (sidecarProblems); sweep run --plan checks a
// plan file's sidecars with it.
func CheckSidecar(sc Sidecar) (*schema.Schema, error) {
	s := schema.OfProgram(sc.Command.Argv)
	if s == nil {
		return nil, nil
	}
	_, err := s.Parse(s.TrimProgram(sc.Command.Argv))
	return s, err
}

// sidecarProblems are CheckSidecar's problems, each wrapped with the fix:
// the offload's command in recipes/offload.go, or, for a partial schema
// that lists only the flags sweep's recipes pass, the schema file to add
// the flag to.
func sidecarProblems(sc Sidecar) []error {
	s, err := CheckSidecar(sc)
	if err == nil {
		return nil
	}
	fix := "fix the sidecar's command (the recipe's offload, recipes/offload.go)"
	if !s.Complete {
		fix += fmt.Sprintf(", or add a flag the program takes to its partial schema, recipes/schema/data/%s.yaml", s.ID())
	}
	var out []error
	for _, pe := range schema.Problems(err) {
		out = append(out, fmt.Errorf("%w; %s", pe, fix))
	}
	return out
}

// runner is the runner a row is planned for: the option's, else the first
// of the row's label.
func (o *planConfig) runner(row *matrix.Row) string {
	if o.RunnerName != "" {
		return o.RunnerName
	}
	return RunnerName(row, o.Runners)
}

func (o *planConfig) duration(row *matrix.Row) int {
	if o.ProbeDuration > 0 {
		return o.ProbeDuration
	}
	return Duration(row, o.Fast, o.Duration)
}

// Duration is the benchmark duration in seconds a row is planned with:
// agentx-fast's 1200 s in fast mode (an override is ignored there, as
// InferenceX ignores it), else the override when > 0, else the row's,
// else InferenceX's default.
func Duration(row *matrix.Row, fast bool, override int) int {
	switch {
	case fast:
		return fastDuration
	case override > 0:
		return override
	case row.Duration > 0:
		return row.Duration
	}
	return matrix.DefaultAgenticDuration
}

func rowWithRunner(row *matrix.Row, runner string) *matrix.Row {
	if runner == "" {
		return row
	}
	r := row.Clone()
	r.Runner = runner
	return r
}

func healthURL(port int) string  { return "http://localhost:" + strconv.Itoa(port) + "/health" }
func metricsURL(port int) string { return "http://localhost:" + strconv.Itoa(port) + "/metrics" }

// ctx derives the recipe context of a row.
func (o *planConfig) ctx(row *matrix.Row, rc *Recipe) (*Ctx, error) {
	par := row.Parallelism
	par.EP = max(par.EP, 1)
	c := &Ctx{
		Row: row, Parallelism: par, Conc: row.Conc,
		EvalOnly: o.Eval || row.EvalOnly != nil && *row.EvalOnly,
		Port:     o.Port, EnginePort: o.Port, Model: row.Model, ModelPath: o.ModelPath,
		ResultDir: o.ResultDir,
	}
	if c.ModelPath == "" {
		c.ModelPath = row.Model
		if prof, err := ProfileFor(o.runner(row)); err == nil && prof.ModelPath != nil && prof.ModelPath(row) != "" {
			c.ModelPath = prof.ModelPath(row)
			if prof.ModelIsPath {
				c.Model = c.ModelPath
			}
		} else if rc.ModelPath != nil {
			c.ModelPath = rc.ModelPath(c)
		}
	}
	if c.TP < 1 || c.Conc < 1 {
		return nil, fmt.Errorf("row needs tp >= 1 and conc >= 1 (tp %d, conc %d)", row.TP, row.Conc)
	}
	if c.DPAttn {
		if !rc.Parallel.DPAttention {
			return nil, errors.New("dp-attn rows are not supported: the recipe has no DP-attention path")
		}
		c.EnginePort = EnginePortBehindRouter(o.Port)
	}
	if rc.Check != nil {
		if err := rc.Check(c); err != nil {
			return nil, err
		}
	}
	if rc.Spec.Enabled() {
		al, err := rc.Spec.goldenAL(o.Golden)
		if err != nil {
			return nil, err
		}
		c.GoldenAL = al
	}
	return c, nil
}

// env returns the environment every process of the point shares (exported
// before the engine starts) and what only the client sees (exported after
// the engine is ready).
func (o *planConfig) env(c *Ctx, rc *Recipe, off *Offload) (shared, clientOnly map[string]string) {
	fast := "0"
	if o.Fast && !c.EvalOnly {
		fast = "1"
	}
	shared = map[string]string{
		// workflow (benchmark-tmpl.yml) and benchmark_lib.sh
		"PYTHONDONTWRITEBYTECODE":         "1",
		"PYTHONPYCACHEPREFIX":             "/tmp/inferencex-pycache",
		"AIPERF_EXPERIMENTAL_FAST":        fast,
		"AIPERF_FAILED_REQUEST_THRESHOLD": failedRequestThreshold,
	}
	clientOnly = map[string]string{}
	add := func(vars []EnvVar) {
		for _, v := range vars {
			if v.When != nil && !v.When(c) {
				continue
			}
			if v.AfterStart {
				clientOnly[v.Name] = v.Value(c)
			} else {
				shared[v.Name] = v.Value(c)
			}
		}
	}
	add(rc.Env)
	if off != nil {
		add(off.Env)
	}
	if c.DPAttn {
		maps.Copy(shared, routerEnv(rc))
	}
	maps.Copy(shared, syntheticAcceptanceEnv(c, rc))
	cl := rc.Client
	metricsEnv := shared
	if cl.MetricsEnvAfterStart {
		metricsEnv = clientOnly
		if c.EvalOnly {
			metricsEnv = map[string]string{} // exported in the replay branch only
		}
	}
	if cl.ServerMetrics && cl.MetricsURLEnv {
		metricsEnv["AIPERF_SERVER_METRICS_URLS"] = metricsURL(c.EnginePort)
	}
	if cl.RequiredMetricPrefix != "" {
		metricsEnv["AIPERF_REQUIRED_SERVER_METRIC_PREFIX"] = cl.RequiredMetricPrefix
	}
	return shared, clientOnly
}

// serveArgs are the flags every recipe starts its engine with: what to load,
// the served name, host and port.
func serveArgs(rc *Recipe) Arg {
	return Arg{Name: "<serve>", Expand: func(c *Ctx, r *Recipe) ([]Arg, error) {
		f := r.Engine.Facts()
		return []Arg{
			Flag(f.ModelFlag, c.ModelPath),
			Flag(f.ServedModelFlag, c.Model),
			Flag("--host", "0.0.0.0"),
			Flag("--port", c.EnginePort),
		}, nil
	}}
}

// build renders args through the schema's builder and returns the argv with
// the program first.
func build(s *schema.Schema, c *Ctx, r *Recipe, args []Arg) ([]string, []schema.Escape, error) {
	b := s.NewBuilder()
	var errs []error
	var apply func(args []Arg)
	apply = func(args []Arg) {
		for _, a := range args {
			if a.When != nil && !a.When(c) {
				continue
			}
			if a.Expand != nil {
				sub, err := a.Expand(c, r)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				apply(sub)
				continue
			}
			var v any
			if a.Value != nil {
				v = a.Value(c)
			}
			if _, known := s.Lookup(a.Name); !known && a.EscapeReason != "" {
				b.Unchecked(a.Name, escapeValues(v), a.EscapeReason)
				continue
			}
			if err := setFlag(b, a.Name, v); err != nil {
				errs = append(errs, err)
			}
		}
	}
	apply(args)
	argv, err := b.Argv()
	if err != nil || len(errs) > 0 {
		return nil, nil, errors.Join(append(errs, err)...)
	}
	return append(strings.Fields(s.Program), argv...), b.Escapes(), nil
}

// escapeValues renders a flag value as the tokens of an unchecked flag.
func escapeValues(v any) []string {
	switch x := v.(type) {
	case nil, bool:
		return nil
	case string:
		return []string{x}
	case int, int64, float64:
		return []string{fmt.Sprint(x)}
	default:
		data, err := json.Marshal(x)
		if err != nil {
			return []string{fmt.Sprint(x)}
		}
		return []string{string(data)}
	}
}

// setFlag applies one flag with the setter that matches its schema type. An
// unknown flag still goes through a setter, which records the problem
// with the closest known spelling.
func setFlag(b *schema.Builder, name string, v any) error {
	f, ok := b.Schema().Lookup(name)
	if !ok {
		switch x := v.(type) {
		case nil, bool:
			b.Bool(name, x == nil || x == true)
		default:
			b.String(name, fmt.Sprint(v))
		}
		return nil
	}
	switch f.Type {
	case schema.Bool, schema.BoolOptional:
		bv, isBool := v.(bool)
		if v != nil && !isBool {
			return fmt.Errorf("%s is a boolean flag; the recipe gives %v", name, v)
		}
		b.Bool(name, v == nil || bv)
	case schema.Int, schema.Float:
		switch x := v.(type) {
		case int:
			b.Int(name, int64(x))
		case int64:
			b.Int(name, x)
		case float64:
			b.Float(name, x)
		case string:
			if n, err := strconv.ParseInt(x, 10, 64); err == nil {
				b.Int(name, n)
			} else if fv, err := strconv.ParseFloat(x, 64); err == nil {
				b.Float(name, fv)
			} else {
				return fmt.Errorf("%s wants a number; the recipe gives %q", name, x)
			}
		default:
			return fmt.Errorf("%s wants a number; the recipe gives %v", name, v)
		}
	case schema.JSON:
		b.JSON(name, v)
	case schema.List:
		switch x := v.(type) {
		case []string:
			b.List(name, x...)
		default:
			b.List(name, fmt.Sprint(v))
		}
	default:
		b.String(name, fmt.Sprint(v))
	}
	return nil
}
