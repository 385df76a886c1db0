package recipes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/internal/filename"
	"sweep/metrics/result"
	"sweep/recipes/schema"
)

// Command is one process of a point: argv (the program first, as InferenceX
// runs it) and its environment.
//
// Env is the environment InferenceX gives the process beyond the runner's
// own: workflow settings, benchmark_lib exports and the recipe's exports.
// Left out are launcher site paths (HF cache mounts, the MI355X aiperf mmap
// cache, VLLM_CACHE_ROOT) and the Bash-only knobs sweep resolves at plan
// time (MODEL_PATH, EVAL_FRAMEWORK, WEKA_LOADER_OVERRIDE, GPU_METRICS_CSV).
// Unset names variables removed from the inherited environment; EnvFrom
// copies one variable to another at run time when the source is set
// (HIP_VISIBLE_DEVICES from ROCR_VISIBLE_DEVICES). Placeholders lists the
// ${NAME} tokens in Argv or Env that the runner fills in at run time.
type Command struct {
	Argv         []string          `json:"argv"`
	Env          map[string]string `json:"env"`
	Unset        []string          `json:"unset,omitempty"`
	EnvFrom      map[string]string `json:"env_from,omitempty"`
	Placeholders []string          `json:"placeholders,omitempty"`
}

// Point is one planned benchmark point: everything needed to run one matrix
// row. Router is nil without DP attention; exactly one of Client (benchmark
// rows) and Eval (eval-only rows) is set.
type Point struct {
	// Row is the matrix row the point runs; Row.ConfigKey names its key.
	Row    matrix.Row
	Recipe string // recipe name = InferenceX script stem
	// Engine is the inference server; CommandFile is where InferenceX
	// records its argv (sglang_command.txt, ...).
	Engine      Command
	CommandFile string
	Router      *Command
	Client      *Command
	Eval        *Command
	// Sidecars must be started and ready before the engine (LMCache).
	Sidecars []Sidecar
	// MetricsURLs are the Prometheus endpoints aiperf records: its --url
	// base plus every --server-metrics URL. RequiredMetricPrefix must
	// appear in the exported server metrics ("" for no check).
	MetricsURLs          []string
	RequiredMetricPrefix string
	// GoldenAL is the golden acceptance length the engine simulates; nil
	// without speculative decoding and on eval-only rows (real acceptance).
	GoldenAL *float64
	// HealthURL is the engine's readiness endpoint; RouterHealthURL the
	// router's ("" without a router).
	HealthURL, RouterHealthURL string
	// Port is the point's public port (the router's with DP attention);
	// EnginePort the engine's.
	Port, EnginePort int
	// ResultDir holds server.log, the command files and aiperf_artifacts/;
	// ResultFilename is InferenceX's RESULT_FILENAME (no extension).
	ResultDir, ResultFilename string
	// Fast is true for agentx-fast discovery points (1200 s, 1 warm-up).
	Fast bool
	// ProbeDuration is the benchmark duration in seconds of a point planned
	// as an adaptive search's short bracketing probe (0: not a probe).
	ProbeDuration int
	// Escapes lists flags or commands not checked against a schema.
	Escapes []schema.Escape
	// Launch are the host commands that run the point on its runner, in
	// order (filled by the launch package; empty when not asked for).
	Launch []HostCommand
	// ClientSetup are the steps that make the client's environment in the
	// container before the engine starts (ClientEnv.Steps: the aiperf
	// venv, the trace set); empty when the client is already there.
	ClientSetup []SetupStep
}

type pointJSON struct {
	Row                  *matrix.Row     `json:"row"`
	ConfigKey            string          `json:"config_key,omitempty"`
	Recipe               string          `json:"recipe"`
	Engine               Command         `json:"engine"`
	CommandFile          string          `json:"command_file"`
	Router               *Command        `json:"router"`
	Client               *Command        `json:"client"`
	Eval                 *Command        `json:"eval"`
	Sidecars             []Sidecar       `json:"sidecars,omitempty"`
	MetricsURLs          []string        `json:"metrics_urls"`
	RequiredMetricPrefix string          `json:"required_metric_prefix"`
	GoldenAL             *float64        `json:"golden_al"`
	HealthURL            string          `json:"health_url"`
	RouterHealthURL      string          `json:"router_health_url,omitempty"`
	Port                 int             `json:"port"`
	EnginePort           int             `json:"engine_port"`
	ResultDir            string          `json:"result_dir"`
	ResultFilename       string          `json:"result_filename"`
	Fast                 bool            `json:"fast"`
	ProbeDuration        int             `json:"probe_duration,omitempty"`
	Escapes              []schema.Escape `json:"escapes,omitempty"`
	Launch               []HostCommand   `json:"launch,omitempty"`
	ClientSetup          []SetupStep     `json:"client_setup,omitempty"`
}

// MarshalJSON writes the point as `sweep plan --format json` prints it:
// {"row", "config_key", "engine": {"argv", "env"}, "router", "client",
// "eval", "metrics_urls", "required_metric_prefix", "golden_al", ...}. The
// row is InferenceX's row JSON; its key is the separate "config_key".
func (p Point) MarshalJSON() ([]byte, error) {
	return json.Marshal(pointJSON{
		Row: &p.Row, ConfigKey: p.Row.ConfigKey, Recipe: p.Recipe, Engine: p.Engine, CommandFile: p.CommandFile,
		Router: p.Router, Client: p.Client, Eval: p.Eval, Sidecars: p.Sidecars,
		MetricsURLs: p.MetricsURLs, RequiredMetricPrefix: p.RequiredMetricPrefix, GoldenAL: p.GoldenAL,
		HealthURL: p.HealthURL, RouterHealthURL: p.RouterHealthURL, Port: p.Port, EnginePort: p.EnginePort,
		ResultDir: p.ResultDir, ResultFilename: p.ResultFilename, Fast: p.Fast, ProbeDuration: p.ProbeDuration, Escapes: p.Escapes, Launch: p.Launch,
		ClientSetup: p.ClientSetup,
	})
}

// UnmarshalJSON reads a point as MarshalJSON writes it, so a point planned
// on one machine runs unchanged on another (sweep run --plan). Unknown
// keys are errors.
func (p *Point) UnmarshalJSON(data []byte) error {
	var pj pointJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pj); err != nil {
		return fmt.Errorf("planned point: %w", err)
	}
	if pj.Row == nil {
		return errors.New(`planned point: no "row"`)
	}
	if len(pj.Engine.Argv) == 0 {
		return errors.New(`planned point: "engine" has no argv`)
	}
	// Both name files in the point's result directory.
	if err := filename.Check("result_filename", pj.ResultFilename); err != nil {
		return fmt.Errorf("planned point: %w", err)
	}
	if pj.CommandFile != "" {
		if err := filename.Check("command_file", pj.CommandFile); err != nil {
			return fmt.Errorf("planned point: %w", err)
		}
	}
	*p = Point{
		Row: *pj.Row, Recipe: pj.Recipe, Engine: pj.Engine, CommandFile: pj.CommandFile,
		Router: pj.Router, Client: pj.Client, Eval: pj.Eval, Sidecars: pj.Sidecars,
		MetricsURLs: pj.MetricsURLs, RequiredMetricPrefix: pj.RequiredMetricPrefix, GoldenAL: pj.GoldenAL,
		HealthURL: pj.HealthURL, RouterHealthURL: pj.RouterHealthURL, Port: pj.Port, EnginePort: pj.EnginePort,
		ResultDir: pj.ResultDir, ResultFilename: pj.ResultFilename, Fast: pj.Fast, ProbeDuration: pj.ProbeDuration, Escapes: pj.Escapes, Launch: pj.Launch,
		ClientSetup: pj.ClientSetup,
	}
	p.Row.ConfigKey = pj.ConfigKey
	return nil
}

// Default plan settings (InferenceX's values).
const (
	DefaultPort          = 8888
	DefaultResultDir     = "/workspace/results"
	DefaultAiperfVersion = "0.12.0"
	// ForkAiperfVersion is the aiperf schema of the fork InferenceX pins
	// (SemiAnalysisAI/aiperf 754356e9); AiperfVersion "fork" selects it.
	ForkAiperfVersion = "sa-754356e9"
)

// PlanOptions tune Plan. Zero values take the defaults named on each field.
type PlanOptions struct {
	// Port is the point's public port (default 8888).
	Port int
	// ModelPath is what engines load (default: the row's model id).
	ModelPath string
	// ResultDir is the per-point result directory (default
	// /workspace/results).
	ResultDir string
	// AiperfVersion picks the aiperf schema: "0.12.0" (default, upstream)
	// or the InferenceX fork's version ForkAiperfVersion ("fork" for short).
	AiperfVersion string
	// Fast plans agentx-fast points: 1200 s and 1 warm-up request per lane.
	Fast bool
	// Duration, when > 0, replaces the row's duration in seconds (ignored
	// in Fast mode, as InferenceX does).
	Duration int
	// ProbeDuration, when > 0, plans every benchmark point as an adaptive
	// search's bracketing probe of this many seconds, in either mode (the
	// mode's warm-up stays; below 900 s aiperf gets --unsafe-override, as
	// InferenceX passes it).
	ProbeDuration int
	// Eval plans every row as an eval-only point (lm-eval instead of
	// aiperf); rows already marked eval-only are eval points regardless.
	Eval bool
	// RunnerName names the runner for RESULT_FILENAME and launcher routing
	// (default: the first runner of the row's label in Runners).
	RunnerName string
	// Catalog holds the recipes: models.Builtin() (sweep/recipes/models)
	// for the shipped ones. Required.
	Catalog *Catalog
	// Runners is runners.yaml (default: the embedded one).
	Runners *configs.Runners
	// Golden holds the golden AL curves (default: the embedded ones).
	Golden *configs.GoldenAL
}

// Problem is one reason a point cannot be planned.
type Problem struct {
	Index     int    // the row's position in the input
	ConfigKey string // "" when unknown
	Point     string // short description: tp/ep/dpa/conc
	Recipe    string // "" when no recipe was found
	Role      string // "recipe", "engine", "router", "client", "eval"
	Err       error  // a *schema.Error for schema problems
}

func (p *Problem) Error() string {
	var b strings.Builder
	if p.Recipe != "" {
		fmt.Fprintf(&b, "recipe %s: ", p.Recipe)
	}
	if p.ConfigKey != "" {
		b.WriteString(p.ConfigKey + " ")
	}
	fmt.Fprintf(&b, "%s: %s: %v", p.Point, p.Role, p.Err)
	return b.String()
}

func (p *Problem) Unwrap() error { return p.Err }

// PlanError lists every problem of a plan (every offending point; one
// problem for all rows of a key that are not supported yet). A single
// problem prints as one line.
type PlanError struct {
	Problems []*Problem
}

func (e *PlanError) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0].Error()
	}
	pts := map[int]bool{}
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		pts[p.Index] = true
		msgs[i] = "  " + p.Error()
	}
	return fmt.Sprintf("%d problem(s) in %d point(s):\n%s", len(e.Problems), len(pts), strings.Join(msgs, "\n"))
}

// Unwrap exposes each problem to errors.Is and errors.As.
func (e *PlanError) Unwrap() []error {
	out := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		out[i] = p
	}
	return out
}

// HFSnapshotPlaceholder stands for the revision of a model snapshot in the
// HF hub cache, which the H200 MiniMax-M3 recipe resolves at run time
// (refs/main of the cached model).
const HFSnapshotPlaceholder = "${HF_SNAPSHOT_REVISION}"

// ErrInvalidOptions wraps every PlanOptions problem (a bad port, duration
// or aiperf version), so callers can report it as a usage error.
var ErrInvalidOptions = errors.New("invalid plan options")

// ErrUnsupportedEngine is returned for a recipe engine this package has no
// shared behaviour for.
var ErrUnsupportedEngine = errors.New("unsupported engine")

func errUnsupportedEngine(r *Recipe) error {
	return fmt.Errorf("recipe %s: %w %q", r.Name, ErrUnsupportedEngine, r.Engine)
}

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

type planConfig struct {
	PlanOptions
	aiperf *schema.Schema
}

func (o PlanOptions) withDefaults() (*planConfig, error) {
	if o.Port == 0 {
		o.Port = DefaultPort
	}
	if o.Port < 1 || RouterMetricsPort(o.Port) > math.MaxUint16 {
		return nil, fmt.Errorf("%w: port %d: want 1..%d (the router's metrics use port+%d)", ErrInvalidOptions, o.Port, math.MaxUint16-routerMetricsOffset, routerMetricsOffset)
	}
	if o.ResultDir == "" {
		o.ResultDir = DefaultResultDir
	}
	switch o.AiperfVersion {
	case "":
		o.AiperfVersion = DefaultAiperfVersion
	case "fork":
		o.AiperfVersion = ForkAiperfVersion
	}
	if o.Duration < 0 {
		return nil, fmt.Errorf("%w: duration %d: want > 0 seconds", ErrInvalidOptions, o.Duration)
	}
	if o.ProbeDuration < 0 {
		return nil, fmt.Errorf("%w: probe duration %d: want > 0 seconds", ErrInvalidOptions, o.ProbeDuration)
	}
	var err error
	if o.Runners == nil {
		if o.Runners, err = configs.DefaultRunners(); err != nil {
			return nil, err
		}
	}
	if o.Golden == nil {
		if o.Golden, err = configs.DefaultGoldenAL(); err != nil {
			return nil, err
		}
	}
	a, err := schema.Load("aiperf", o.AiperfVersion)
	if err != nil {
		return nil, fmt.Errorf("%w: aiperf version: %w", ErrInvalidOptions, err)
	}
	return &planConfig{PlanOptions: o, aiperf: a}, nil
}

// describe is the short point description used in problems: the arm's
// label as knees and sweeps print it, then the concurrency ("tp8 ep8 dpa
// kv:dram c32").
func describe(r *matrix.Row) string {
	if r.Kind.MultiNode() {
		return fmt.Sprintf("%s (multi-node) conc%v", r.ExpName, r.Concs)
	}
	return result.RowIdentity(r).PointLabel(r.Conc)
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
			ArtifactDir: strings.TrimSuffix(o.ResultDir, "/") + "/aiperf_artifacts", ServerMetrics: serverMetrics,
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
			if err := set(b, a.Name, v); err != nil {
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

// set applies one flag with the setter that matches its schema type. An
// unknown flag still goes through a setter, which records the problem
// with the closest known spelling.
func set(b *schema.Builder, name string, v any) error {
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
