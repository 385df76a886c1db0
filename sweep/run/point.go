// Package run runs benchmark points: GPU idle check, engine (and router)
// start and readiness, the load client with a health watchdog and metric
// scraping beside it, aggregation of aiperf artifacts into InferenceX's
// result JSON, validation, and the stop of every process.
//
// One point, its own server:
//
//	spec, err := run.FromPlan(&point, run.Setup{Simulate: true})
//	rec, err := run.Run(ctx, spec, run.Options{OutDir: dir})
//	// rec.Stages says what each stage did; err != nil when any stage failed.
//
// Several points against one server (a sweep's arm), caches flushed
// between loads and counters taken per load:
//
//	srv, err := run.StartServer(ctx, spec.ServerSpec, run.Options{OutDir: serverDir})
//	rec1, err := srv.RunLoad(ctx, spec1.LoadSpec, dir1)
//	rec2, err := srv.RunLoad(ctx, spec2.LoadSpec, dir2)
//	err = srv.Stop()
//
// Every stage's outcome is recorded in run.json (server.json for a
// server), rewritten atomically after each stage, so a killed run still
// leaves a record of what finished. Which of the client, the engine and
// the workers exited first, which words a load's failure and whom it
// blames, is read from the time each was seen to exit, however late the
// runner looks. Exit codes of every process are kept; nothing that ran
// is left running when Run or Stop returns (engine, router and client
// are stopped as process trees, also when ctx is cancelled).
package run

import (
	"slices"
	"time"

	"sweep/internal/proc"
	"sweep/metrics"
	"sweep/metrics/result"
	"sweep/recipes"
)

// Spec is everything Run needs to know about one point: the server it
// runs against and the load it puts on it. Programs are final: the caller
// has already swapped in the simulated engine or the built-in load
// generator where wanted.
type Spec struct {
	ServerSpec
	LoadSpec
}

// ServerSpec is the server side of a point: everything StartServer
// starts and what a load may rely on. Points whose ServerSpecs are equal
// (recipes.ServerKey) can run one after another against one Server.
type ServerSpec struct {
	// Engine is the inference server; EngineCommandFile is the file its
	// command is recorded in (e.g. "sglang_command.txt").
	Engine            proc.Spec
	EngineCommandFile string
	HealthURL         string
	// ServedModels are the model names the engine serves (ServedModels of
	// its argv); once HealthURL answers, its /v1/models must list one of
	// them, so a foreign server on the port is never measured. Empty skips
	// the check.
	ServedModels []string
	// Sidecars start, in order, before the engine and must answer their
	// health URL (e.g. LMCache servers).
	Sidecars []Sidecar
	// Files are the sidecars' config files, written before the sidecars
	// start (a Mooncake store's segment size), each inside the run's
	// directory (Setup.Dir). A simulated run writes them too: it starts no
	// sidecar, but the engine reads them as the real one would.
	Files []recipes.File
	// EngineLog is the engine's log in OutDir (default "server.log").
	EngineLog string
	// Workers are the further engines of a disaggregated point (Engine is
	// its first prefill worker): started after Engine, each waited for on
	// its HealthURL, watched like the engine during the load.
	Workers []Worker
	// Router, when not nil, runs in front of the engine (DP attention) or
	// of the workers (disaggregated).
	Router          *proc.Spec
	RouterHealthURL string
	// MetricsURLs are the engine's Prometheus endpoints, scraped beside
	// each load; RequiredMetricPrefix ("sglang:" or "vllm:") must appear
	// in the exported server metrics for a point to be valid.
	MetricsURLs          []string
	RequiredMetricPrefix string
	// FlushURLs are POSTed before every load but the first on a server, so
	// each point starts with empty prefix and KV caches as on a fresh
	// server (SGLang /flush_cache, vLLM /reset_prefix_cache).
	FlushURLs []string
}

// LoadSpec is one point's load against a server.
type LoadSpec struct {
	// Name identifies the point (InferenceX's RESULT_FILENAME); the
	// aggregate result is written to OutDir/Name.json.
	Name string
	// Client is the load generator (aiperf or the built-in one); Eval is the
	// accuracy client for eval-only points. Exactly one is set.
	Client *proc.Spec
	Eval   *proc.Spec
	// ClientInfo is what the result records about Client.
	ClientInfo *result.Client
	// ArtifactDir is where the client writes aiperf artifacts.
	ArtifactDir string
	// GoldenAL is the recipe's golden acceptance length; nil when the point
	// has no speculative decoding or runs real acceptance (eval).
	GoldenAL *float64
	// Facts are the run's identity and topology for the aggregate JSON.
	Facts result.RunFacts
	// Simulation is set when the engine is sweep's simulated one; the
	// result says so.
	Simulation *result.Simulation
	// MaxLag is the schedule lag (result.ScheduleLag.Share) past which a
	// simulated point on the wall clock is invalid: LagInvalidShare, or
	// SWEEP_SIM_MAX_LAG (Setup.maxLag).
	MaxLag float64
	// Probe marks the point an adaptive search's short bracketing probe;
	// the result says so.
	Probe bool
	// Official marks a point of an official sweep: its result is valid
	// only when the client stamped it a valid submission for its scenario.
	Official bool
	// Power, when set, runs InferenceX's power lane: the GPU monitor
	// around the client and power_adapter on the result.
	Power *PowerSpec
}

// PowerSpec is a load's power lane.
type PowerSpec struct {
	// ExpectedGPUs is what the telemetry must hold: TP*PP*PCP.
	ExpectedGPUs int
	// Require makes invalid telemetry fail the point (REQUIRE_POWER).
	Require bool
	// Vendor is the monitor's vendor ("" detects it, as the recipe does).
	Vendor string
	// Env is added to the monitor commands' environment.
	Env map[string]string
	// AllocatedGPUs integrates only the point's GPUs (its engine's
	// CUDA/HIP/ROCR_VISIBLE_DEVICES, else 0..ExpectedGPUs-1) instead of
	// every GPU the monitor recorded, as InferenceX does.
	AllocatedGPUs bool
	// SimulatedTool, when set, is the sweep executable that plays the
	// vendor's SMI tool (simengine.SMI): the runner links it under the
	// tool's name in OutDir/sim-gpus, first on the monitor's PATH.
	SimulatedTool string
	// WallClock runs the simulated tool on the compressed wall clock: the
	// runner picks a clock origin when the monitors start and gives it to
	// the tool and the load generator, so samples and artifacts share
	// one clock.
	WallClock bool
	// Nodes, when set, are a disaggregated point's nodes: one monitor
	// each (its worker's GPUs), summed as InferenceX's multi-node power
	// path sums them (power.AdaptMultiNode).
	Nodes []PowerNode
}

// PowerNode is one node of a disaggregated point's power lane.
type PowerNode struct {
	// Name is the node's worker ("prefill0", "decode1": its role and
	// index); its telemetry goes into NodePowerDir(Name). The worker's
	// GPUs (ids 0..N-1 of the node's telemetry) come from the point's
	// facts.
	Name string
	// Env is added to the node monitor's environment (the simulated
	// tool's engine URL).
	Env map[string]string
}

// engineHealthURLs are the health URLs of the point's engines: Engine's
// (a disaggregated point's first prefill worker) and every other
// worker's, in start order; those not given are left out.
func (s *ServerSpec) engineHealthURLs() []string {
	urls := []string{s.HealthURL}
	for _, w := range s.Workers {
		urls = append(urls, w.HealthURL)
	}
	return slices.DeleteFunc(urls, func(u string) bool { return u == "" })
}

// Worker is one more engine of a disaggregated point: its process (whose
// Name is its role and index, "decode0"), readiness endpoint, log and
// command file in OutDir.
type Worker struct {
	Proc        proc.Spec
	HealthURL   string
	Log         string
	CommandFile string
}

// Sidecar is a helper server the engine needs before it starts.
type Sidecar struct {
	Proc      proc.Spec
	HealthURL string
}

// NoGrace as Options.StopGrace sends SIGKILL right after SIGTERM.
const NoGrace time.Duration = -1

// DefaultReadyTimeout is how long a point waits for its engine's /health
// unless told otherwise: engines load hundreds of GB of weights.
const DefaultReadyTimeout = 30 * time.Minute

// Options tune Run. Zero values get the defaults named on each field.
type Options struct {
	// OutDir receives server.log, the command files, aiperf_artifacts/,
	// the aggregate result and run.json. It is created if missing.
	OutDir string
	// ReadyTimeout bounds the wait for /health (default
	// DefaultReadyTimeout).
	ReadyTimeout time.Duration
	// ReadyInterval is the health poll interval (default 5 s, as InferenceX).
	ReadyInterval time.Duration
	// HangTimeout fails the point when the engine's health endpoint stops
	// answering for this long during the load (default 10 min).
	HangTimeout time.Duration
	// StopGrace is the wait between SIGTERM and SIGKILL: zero means the
	// default, 60 s; NoGrace (negative) kills at once.
	StopGrace time.Duration
	// ScrapeInterval is the metric sampling interval (default 10 s).
	ScrapeInterval time.Duration
	// FailedRequestThreshold is the largest accepted failed-request ratio
	// (default result.DefaultFailedRequestThreshold, as InferenceX).
	FailedRequestThreshold float64
	// ALTolerance is the accepted |measured − golden| AL (default 0.05).
	ALTolerance float64
	// SkipGPUCheck skips the GPU idle wait (simulated engines use no GPU).
	SkipGPUCheck bool
	// GPUProbe reads GPU memory use; nil means SystemGPUProbe.
	GPUProbe GPUProbe
	// GPUIdle tunes the idle wait.
	GPUIdle GPUIdleOptions
	// Progress, when set, is called with one line per stage change, and
	// with the client's latest output line at most every ClientEcho. Calls
	// never overlap, but may come from different goroutines.
	Progress func(line string)
	// ClientEcho is the interval between echoed client lines (default
	// 30 s); the client's full output is in benchmark.log.
	ClientEcho time.Duration
	// MonitorExec is the hook that makes the GPU monitor's commands run
	// where the engine runs (e.g. inside its container); nil runs them
	// here.
	MonitorExec func(argv []string) []string
}

func (o Options) withDefaults() Options {
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = DefaultReadyTimeout
	}
	if o.ReadyInterval <= 0 {
		o.ReadyInterval = 5 * time.Second
	}
	if o.HangTimeout <= 0 {
		o.HangTimeout = 10 * time.Minute
	}
	if o.StopGrace == 0 {
		o.StopGrace = 60 * time.Second
	}
	if o.ScrapeInterval <= 0 {
		o.ScrapeInterval = 10 * time.Second
	}
	if o.FailedRequestThreshold == 0 {
		o.FailedRequestThreshold = result.DefaultFailedRequestThreshold
	}
	if o.ALTolerance <= 0 {
		o.ALTolerance = metrics.DefaultALTolerance
	}
	if o.GPUProbe == nil {
		o.GPUProbe = SystemGPUProbe
	}
	if o.ClientEcho <= 0 {
		o.ClientEcho = 30 * time.Second
	}
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	return o
}

// Stage names, in the order Run goes through them.
const (
	StageGPUIdle    = "gpu-idle"
	StageSidecars   = "sidecars-ready"
	StageEngine     = "engine-ready"
	StageRouter     = "router-ready"
	StageServer     = "server"
	StageFlush      = "flush-cache"
	StageBaseline   = "metrics-baseline"
	StageClient     = "client"
	StageEval       = "eval"
	StageAcceptance = "acceptance-length"
	StageAggregate  = "aggregate"
	StageValidate   = "validate"
	StagePower      = "power"
	StageStop       = "stop"
	// StageInternal is a panic inside the runner (a bug in sweep): it is
	// recorded as a failed stage after every process was stopped, with the
	// stack in PanicFile.
	StageInternal    = "internal-error"
	outcomeOK        = "ok"
	outcomeFailed    = "failed"
	outcomeSkipped   = "skipped"
	outcomeCancelled = "cancelled"
)

// Stage is the outcome of one step. Outcome is "ok", "failed", "skipped"
// or "cancelled"; Error says why when not ok; LogTail holds the last lines
// of the process that failed, if any.
type Stage struct {
	Name     string    `json:"name"`
	Outcome  string    `json:"outcome"`
	Error    string    `json:"error,omitempty"`
	LogTail  []string  `json:"log_tail,omitempty"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Seconds  float64   `json:"seconds"`
}

// ProcessOutcome records how a process ended. Exit is -1 when it was
// killed by a signal (named in Signal) or never ended on its own.
type ProcessOutcome struct {
	Argv []string `json:"argv"`
	// GoRun says that Argv[0] "sweep" stands for the temporary `go run`
	// build of sweep that ran the process (deleted when it exited).
	GoRun   bool    `json:"go_run,omitempty"`
	PID     int     `json:"pid"`
	Exit    int     `json:"exit"`
	Signal  string  `json:"signal,omitempty"`
	Stopped bool    `json:"stopped_by_sweep"`
	Seconds float64 `json:"seconds"`
	Log     string  `json:"log,omitempty"`
}

// Record is what run.json holds: the stages in order, each process's
// outcome, the acceptance-length check, and where the result is.
type Record struct {
	Name      string                     `json:"name"`
	OK        bool                       `json:"ok"`
	Started   time.Time                  `json:"started"`
	Finished  time.Time                  `json:"finished"`
	Stages    []Stage                    `json:"stages"`
	Processes map[string]*ProcessOutcome `json:"processes"`
	// Acceptance is the measured-vs-golden AL check (nil when not computed).
	Acceptance *metrics.ALCheck `json:"acceptance_length,omitempty"`
	// Validation is InferenceX's validator verdict (nil when not reached).
	Validation *result.Verdict `json:"validation,omitempty"`
	// ResultFile is the aggregate JSON, empty when none was written.
	ResultFile string `json:"result_file,omitempty"`
	// ArtifactDir holds the client's aiperf artifacts.
	ArtifactDir string `json:"artifact_dir,omitempty"`
	// Warnings are what the run warned of on its progress lines
	// ("warning: ..."), each once, in the order raised: problems that
	// leave the point as its stages say (an ok point stays ok and its
	// result valid), such as sweep's own scraping of the engine's
	// /metrics mostly failing (metrics.ScrapeHealth.Warning). Empty when
	// there were none. A sweep's summary lists them with the point.
	Warnings []string `json:"warnings,omitempty"`
	// Server is set when the load ran against a Server started on its own
	// (a sweep's server for several points); nil when Run started it.
	Server *ServerRef `json:"server,omitempty"`
	// Facts, Simulation, Client and ValidateOptions are what the point's result
	// was aggregated and validated with (nil in a server's own record;
	// Simulation holds the schedule lag once the result is judged):
	// sweep result aggregate on this directory takes them from here
	// instead of InferenceX's environment variables.
	Facts           *result.RunFacts        `json:"facts,omitempty"`
	Simulation      *result.Simulation      `json:"simulation,omitempty"`
	Client          *result.Client          `json:"client,omitempty"`
	ValidateOptions *result.ValidateOptions `json:"validate_options,omitempty"`
	// Official and Probe are the point's (Spec.Official, Spec.Probe):
	// sweep result aggregate judges and marks the result as sweep run
	// did.
	Official bool `json:"official,omitempty"`
	Probe    bool `json:"probe,omitempty"`
	// ScrapeHealth is the health of sweep's own scraping of the engine's
	// /metrics during the load, as the result states it (nil when it did
	// not scrape); sweep result aggregate states it again from here.
	ScrapeHealth *metrics.ScrapeHealth `json:"scrape_health,omitempty"`
}

// ServerRef is the server a load ran against.
type ServerRef struct {
	// Dir holds the server's logs, command files and server.json.
	Dir string `json:"dir"`
	// Load is the load's 1-based position on the server; Reused is Load > 1.
	Load   int  `json:"load"`
	Reused bool `json:"reused"`
	// PIDs are the server's processes.
	PIDs []int `json:"pids"`
}

// Failed returns the first failed or cancelled stage, or nil.
func (r *Record) Failed() *Stage {
	for i := range r.Stages {
		if o := r.Stages[i].Outcome; o == outcomeFailed || o == outcomeCancelled {
			return &r.Stages[i]
		}
	}
	return nil
}

func (r *Record) clone() *Record {
	c := *r
	c.Stages = append([]Stage(nil), r.Stages...)
	c.Warnings = slices.Clone(r.Warnings)
	if r.Server != nil {
		srv := *r.Server
		c.Server = &srv
	}
	c.Processes = make(map[string]*ProcessOutcome, len(r.Processes))
	for name, po := range r.Processes {
		cp := *po
		c.Processes[name] = &cp
	}
	return &c
}

// Simulated returns o tuned for a simulated engine whose clock runs
// timeScale times faster than the wall clock: health polled every 100 ms,
// metrics sampled every 10 simulated seconds (at least every 200 ms of
// wall time), the client echoed every 2 s, no GPU check, and a hang
// declared after 10 simulated minutes but never in less than 5 s of wall
// time (a loaded laptop can stall a health answer for a moment). A
// StopGrace left at zero becomes 10 s.
func (o Options) Simulated(timeScale float64) Options {
	if !(timeScale > 0) {
		timeScale = 1
	}
	o.SkipGPUCheck = true
	o.ReadyInterval = 100 * time.Millisecond
	o.HangTimeout = max(time.Duration(float64(10*time.Minute)/timeScale), 5*time.Second)
	o.ScrapeInterval = max(time.Duration(float64(10*time.Second)/timeScale), 200*time.Millisecond)
	o.ClientEcho = 2 * time.Second
	if o.StopGrace == 0 {
		o.StopGrace = 10 * time.Second
	}
	return o
}
