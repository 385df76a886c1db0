package configs

import (
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"sweep/internal/inputfile"
)

// ABLeg is one accuracy A/B leg (configs/ab/<name>.yaml): two serving arms
// of one model that answer the same BFCL categories, and how to decide
// between them. The loader checks the file's shape and values; the arms'
// config keys and points, and the category names, are checked against the
// master configs and BFCL's categories by the leg runner (sweep/abgate/leg),
// which reports them at the positions kept here.
type ABLeg struct {
	// File is the file the leg was read from; Name is its stem.
	File, Name string
	// Model is the BFCL registry name of the model (e.g.
	// "MiniMaxAI/MiniMax-M3-MXFP8-FC"); BFCL maps result directories back
	// to it with "_" → "/", so it has no "_".
	Model    string
	ModelPos Pos
	// Runner is the runner label the leg's job runs on.
	Runner    string
	RunnerPos Pos
	// GPU is the accelerator of the runner (mi325x, mi355x, h100, b200,
	// ...) when its label does not start with it ("4-gpu-h100",
	// "blackwell"); "" derives it from the label. It picks the device
	// variable (HIP_VISIBLE_DEVICES on AMD Instinct) and the simulated GPU.
	GPU string
	// Categories are BFCL v4 category or collection names, as given.
	Categories    []string
	CategoriesPos []Pos
	Sampling      ABSampling
	// Replicates is the number of bfcl runs per arm (default 1).
	Replicates int
	// Tolerance is the tolerated drop of the weighted accuracy in points
	// (default 2).
	Tolerance float64
	// PartialEval passes --partial-eval to bfcl evaluate and accepts
	// partial categories in the comparison.
	PartialEval bool
	// Arms are arm A (the baseline) and arm B (the candidate).
	Arms [2]ABArm
	// Mode is how the arms run: ABSequential (one after the other on the
	// same GPUs and ports, the default) or ABConcurrent (both at once on
	// disjoint GPUs, as SMG's nightly runs its H100 and Blackwell legs).
	Mode ABMode
	// Timeouts bound the leg's stages; zero fields keep the runner's
	// defaults (sweep ab run --ready-timeout, --run-timeout).
	Timeouts ABTimeouts
	// HostLock, when set, is a file the leg holds an exclusive lock on
	// from before its servers start until they stop, so legs sharing a
	// host (ports, GPU memory) run one at a time (SMG's flock -w 9000 on
	// /tmp/bfcl-host.lock).
	HostLock string
	// Schedule is when the nightly workflow runs the leg: ABNightly (its
	// schedule, the default) or ABManual (workflow_dispatch only).
	Schedule string
	// Simulate is the seeded per-case model of the simulated bfcl stand-in
	// (sweep ab run --simulate); nil leaves the stand-in's defaults.
	Simulate *ABSimulate
}

// ABMode is how a leg's two arms run.
type ABMode string

// The arm modes.
const (
	ABSequential ABMode = "sequential"
	ABConcurrent ABMode = "concurrent"
)

// The schedules of a leg.
const (
	ABNightly = "nightly"
	ABManual  = "manual"
)

// ABTimeouts bound a leg's stages (0: the runner's default).
type ABTimeouts struct {
	// Startup bounds each server's wait for readiness (per process: SMG's
	// worker, then its gateway).
	Startup time.Duration
	// Run bounds each bfcl generate; a generate past it is stopped and
	// its replicate is incomplete.
	Run time.Duration
	// Lock bounds the wait for the host lock.
	Lock time.Duration
}

// ABSampling is what bfcl generate sends.
type ABSampling struct {
	// Temperature is the sampling temperature (default 0, greedy).
	Temperature    float64
	TemperaturePos Pos
	// NumThreads is bfcl's --num-threads (default 16), always passed.
	NumThreads int
}

// ABArm is one serving arm: a matrix point of a master config key (the
// recipe's engine command) or an engine declared directly (Engine: image,
// load path, TP, GPUs, the engine command built from its flag schema), the
// parsers its engine runs with, and optionally a router in front.
type ABArm struct {
	// Label is "a" or "b"; Name is the arm's display name ("vllm", "smg").
	Label, Name  string
	ConfigKey    string
	ConfigKeyPos Pos
	// Engine, when ConfigKey is empty, declares the arm directly: the
	// name of a ServeKind (engine.go): vllm (vllm serve), vllm-grpc
	// (vLLM's gRPC worker, python -m vllm.entrypoints.grpc_server, behind
	// Router: it gets no parser flags, the router owns the chat template
	// and parsing) or sglang (python3 -m sglang.launch_server).
	Engine string
	// Image is the container image the arm's engine runs in (recorded;
	// the launch path of the runner uses it).
	Image string
	// ModelPath is what the engine loads (a Hugging Face id or a local
	// path); ServedModel the name it serves (default ModelPath), which
	// bfcl's handler sends. ModelPathPos is where model-path is.
	ModelPath, ServedModel string
	ModelPathPos           Pos
	// GPUs are the device indices the arm's engine sees (default 0..TP-1,
	// or TP..2TP-1 for arm b of a concurrent leg).
	GPUs []int
	// MaxModelLen is the engine's context length: "auto" or a number
	// (default "auto": a fixed 32768 failed multi_turn_long_context).
	MaxModelLen string
	// GPUMemoryUtil is vLLM's --gpu-memory-utilization (SGLang's
	// --mem-fraction-static); 0 keeps the engine's default.
	GPUMemoryUtil float64
	// Args are extra engine flags, checked against the engine's schema
	// when the leg is planned (sweep/abgate/leg), which also refuses one
	// the arm's keys or the runner set (--port, --model-path, parsers,
	// ...) in any spelling the engine reads; ArgsPos is where each is.
	Args    []string
	ArgsPos []Pos
	// Env is extra environment of the engine (e.g.
	// SMG_VLLM_SERVICER_IMPL=rust).
	Env map[string]string
	// GPUsPos is where gpus is (the arm's mapping when it is absent).
	GPUsPos Pos
	// TP, EP, DPAttn and Conc pick the key's matrix row (EP defaults to 1);
	// KVOffloading (kv-offloading: one of KVOffloadModes, "" any) picks
	// between the key's rows there that differ in KV offloading (kv:none
	// and kv:dram at one concurrency), which the leg runner refuses to
	// choose between without it (matrix.Matrix.SelectPoint).
	TP, EP       int
	DPAttn       bool
	Conc         int
	KVOffloading string
	// Pos is where the arm's mapping starts.
	Pos Pos
	// Parsers override the recipe's engine parser flags.
	Parsers ABParsers
	// Router, when set, runs in front of the engine and bfcl talks to it.
	Router *ABRouter
}

// ABParsers are the tool-call and reasoning parsers of an engine or a
// router. nil keeps what the recipe has; ABParserNone removes the flag.
type ABParsers struct {
	ToolCall, Reasoning *string
	// ToolCallPos and ReasoningPos are where the values are.
	ToolCallPos, ReasoningPos Pos
}

// ABParserNone as a parser value removes the flag.
const ABParserNone = "none"

// ABRouter is a router in front of an arm's engine (e.g. SMG's
// launch_router). The runner appends --worker-urls, --host, --port and
// --prometheus-port to Argv, then the parser flags, then Args.
type ABRouter struct {
	// Argv is the launcher, e.g. [python3, -m, smg.launch_router];
	// ArgvPos is where it is.
	Argv    []string
	ArgvPos Pos
	// Args are the router's own flags, checked against its flag schema
	// when the leg is planned (sweep/abgate/leg), which also refuses one
	// the runner or Parsers set (--port, --tool-call-parser, ...) in any
	// spelling the router reads; ArgsPos is where each is.
	Args    []string
	ArgsPos []Pos
	Parsers ABParsers
	// Health is the router's readiness path (default /health; SMG's
	// /readiness waits for its workers' tokenizers too).
	Health string
	Pos    Pos
}

// ABSimulate is the per-arm case model of the simulated bfcl stand-in.
type ABSimulate struct {
	// Seed picks the cases' difficulty, shared by both arms.
	Seed uint64
	// Accuracy is the baseline share of cases the model answers (0-1).
	Accuracy float64
	// Flip is the per-run chance a case's verdict flips (0 = default).
	Flip float64
	// Offset is each arm's planted accuracy change in points (−4: four
	// points worse than the case model).
	Offset [2]float64
	// InfraErrors is each arm's share of "Error during inference" rows.
	InfraErrors [2]float64
	// CategoryOffset is each arm's planted accuracy change in points in
	// single categories (a regression of one category).
	CategoryOffset [2]map[string]float64
}

var (
	abLegKeys      = []string{"model", "runner", "gpu", "schedule", "categories", "sampling", "replicates", "tolerance", "partial-eval", "arm-mode", "timeouts", "host-lock", "arms", "simulate"}
	abTimeoutKeys  = []string{"startup", "run", "lock"}
	abSamplingKeys = []string{"temperature", "num-threads"}
	abArmsKeys     = []string{"a", "b"}
	abArmKeys      = []string{"name", "config-key", "engine", "image", "model-path", "served-model-name", "tp", "gpus", "max-model-len", "gpu-memory-utilization", "args", "env", "ep", "dp-attn", "conc", "kv-offloading", "parsers", "router"}
	abParserKeys   = []string{"tool-call", "reasoning"}
	abRouterKeys   = []string{"argv", "args", "parsers", "health"}
	abSimKeys      = []string{"seed", "accuracy", "flip", "a", "b"}
	abSimArmKeys   = []string{"offset", "infra-errors", "categories"}
)

// DefaultABLegDir is the directory of the shipped legs, also their path
// inside Embedded().
const DefaultABLegDir = "configs/ab"

// MaxABReplicates bounds a leg's replicates (and so its run roots): each
// is a full BFCL run of both arms, hours on a real server; legs use 1-10.
const MaxABReplicates = 100

// LoadABLeg reads and checks one leg file (a regular file within
// inputfile.ConfigYAML: a FIFO or a device is refused without blocking).
func LoadABLeg(file string) (*ABLeg, error) {
	data, err := inputfile.Read(file, inputfile.ConfigYAML)
	if err != nil {
		return nil, joinErrors([]*Error{{File: file, Line: 1, Col: 1, Msg: fmt.Sprintf("cannot read A/B leg: %v", err)}})
	}
	return ParseABLeg(Source{Name: file, Data: data})
}

// ABLegNames lists the legs shipped in configs/ab, sorted.
func ABLegNames() []string {
	entries, _ := fs.ReadDir(embedded, embeddedName(DefaultABLegDir))
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok && !e.IsDir() {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// DefaultABLeg loads the shipped leg called name (configs/ab/<name>.yaml).
func DefaultABLeg(name string) (*ABLeg, error) {
	file := path.Join(DefaultABLegDir, name+".yaml")
	data, err := fs.ReadFile(embedded, embeddedName(file))
	if err != nil {
		return nil, fmt.Errorf("A/B leg %q: not a shipped leg (shipped: %s); give a file path to use another", name, strings.Join(ABLegNames(), ", "))
	}
	return ParseABLeg(Source{Name: file, Data: data})
}

// ParseABLeg is LoadABLeg on an in-memory file. The leg's name is the
// file's stem.
func ParseABLeg(src Source) (*ABLeg, error) {
	d := &decoder{file: src.Name}
	l := d.abLeg(src.Data)
	if len(d.errs) > 0 {
		return nil, joinErrors(d.errs)
	}
	l.File = src.Name
	l.Name = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(src.Name), ".yaml"), ".yml")
	return l, nil
}

func (d *decoder) abLeg(data []byte) *ABLeg {
	l := &ABLeg{Replicates: 1, Tolerance: 2, Sampling: ABSampling{NumThreads: 16}, Mode: ABSequential, Schedule: ABNightly}
	root := d.parseDocument(data)
	if root == nil {
		if len(d.errs) == 0 {
			d.errAt(nil, "", "A/B leg is empty; it needs model, runner, categories and arms")
		}
		return l
	}
	f, ok := d.mapping(root, "", abLegKeys, nil)
	if !ok {
		return l
	}
	d.require(f, root, "", "model", "runner", "categories", "arms")
	if n := f.get("model"); n != nil {
		l.ModelPos = d.pos(n)
		if s, ok := d.str(n, "model"); ok {
			switch {
			case strings.Contains(s, "_"):
				d.errAt(n, "model", "%q contains \"_\": BFCL maps result directories back to registry names with \"_\" → \"/\", so evaluation would not find the model; register it under a name without \"_\"", s)
			case strings.ContainsAny(s, " \t"):
				d.errAt(n, "model", "%q contains white space; want the BFCL registry name, e.g. Org/Model-FC", s)
			default:
				l.Model = s
			}
		}
	}
	if n := f.get("runner"); n != nil {
		l.RunnerPos = d.pos(n)
		l.Runner, _ = d.str(n, "runner")
	}
	if s := d.strPtr(f, "gpu", ""); s != nil {
		l.GPU = *s
	}
	d.abLegRun(f, l)
	d.abLegScoring(f, l)
	if n := f.get("arms"); n != nil {
		if af, ok := d.mapping(n, "arms", abArmsKeys, nil); ok {
			d.require(af, resolve(n), "arms", "a", "b")
			for i, label := range abArmsKeys {
				if an := af.get(label); an != nil {
					l.Arms[i] = d.abArm(an, "arms."+label)
					l.Arms[i].Label = label
				}
			}
		}
	}
	if n := f.get("simulate"); n != nil {
		l.Simulate = d.abSimulate(n)
	}
	if n := f.get("arms"); n != nil {
		d.abArmGPUs(l, resolve(n))
	}
	return l
}

// abLegRun decodes how the leg runs: its schedule, arm mode, timeouts and
// host lock.
func (d *decoder) abLegRun(f fields, l *ABLeg) {
	if n := f.get("schedule"); n != nil {
		if v, ok := d.str(n, "schedule"); ok {
			if v != ABNightly && v != ABManual {
				d.errAt(n, "schedule", "%q: want %s (the nightly workflow's schedule) or %s (workflow_dispatch only)", v, ABNightly, ABManual)
			} else {
				l.Schedule = v
			}
		}
	}
	if n := f.get("arm-mode"); n != nil {
		if v, ok := d.str(n, "arm-mode"); ok {
			switch ABMode(v) {
			case ABSequential, ABConcurrent:
				l.Mode = ABMode(v)
			default:
				d.errAt(n, "arm-mode", "%q: want %s (one arm after the other on the same GPUs) or %s (both at once on disjoint GPUs)", v, ABSequential, ABConcurrent)
			}
		}
	}
	if n := f.get("timeouts"); n != nil {
		if tf, ok := d.mapping(n, "timeouts", abTimeoutKeys, nil); ok {
			for _, t := range []struct {
				key string
				dst *time.Duration
			}{{"startup", &l.Timeouts.Startup}, {"run", &l.Timeouts.Run}, {"lock", &l.Timeouts.Lock}} {
				if v := tf.get(t.key); v != nil {
					*t.dst, _ = d.duration(v, "timeouts."+t.key)
				}
			}
		}
	}
	if n := f.get("host-lock"); n != nil {
		if v, ok := d.str(n, "host-lock"); ok {
			if !filepath.IsAbs(v) {
				d.errAt(n, "host-lock", "%q: want an absolute path, e.g. /tmp/bfcl-host.lock", v)
			} else {
				l.HostLock = v
			}
		}
	}
}

// abLegScoring decodes what the leg scores and how: categories, sampling,
// replicates, tolerance and partial evaluation.
func (d *decoder) abLegScoring(f fields, l *ABLeg) {
	if n := f.get("categories"); n != nil {
		if items, ok := d.sequence(n, "categories"); ok {
			if len(items) == 0 {
				d.errAt(resolve(n), "categories", "must list at least one BFCL category or collection, e.g. [non_live, live, multi_turn]")
			}
			for i, it := range items {
				if s, ok := d.str(it, indexPath("categories", i)); ok {
					l.Categories = append(l.Categories, s)
					l.CategoriesPos = append(l.CategoriesPos, d.pos(resolve(it)))
				}
			}
		}
	}
	if n := f.get("sampling"); n != nil {
		if sf, ok := d.mapping(n, "sampling", abSamplingKeys, nil); ok {
			if t := sf.get("temperature"); t != nil {
				l.Sampling.TemperaturePos = d.pos(t)
				if v, ok := d.number(t, "sampling.temperature"); ok {
					if v < 0 || v > 2 {
						d.errAt(t, "sampling.temperature", "must be in [0, 2], got %g; 0 is greedy decoding (the default)", v)
					} else {
						l.Sampling.Temperature = v
					}
				}
			}
			if v := d.intPtr(sf, "num-threads", "sampling", 1); v != nil {
				l.Sampling.NumThreads = *v
			}
		}
	}
	if v := d.intPtr(f, "replicates", "", 1); v != nil {
		if *v > MaxABReplicates {
			d.errAt(f.get("replicates"), "replicates", "must be at most %d (each replicate is a full BFCL run of both arms), got %d", MaxABReplicates, *v)
		} else {
			l.Replicates = *v
		}
	}
	if n := f.get("tolerance"); n != nil {
		if v, ok := d.number(n, "tolerance"); ok {
			if !(v > 0 && v < 100) {
				d.errAt(n, "tolerance", "must be points in (0, 100), got %g; e.g. 2", v)
			} else {
				l.Tolerance = v
			}
		}
	}
	if b := d.boolPtr(f, "partial-eval", ""); b != nil {
		l.PartialEval = *b
	}
}

// abArmGPUs gives directly declared arms their default GPUs and checks
// that a concurrent leg's arms do not share one.
func (d *decoder) abArmGPUs(l *ABLeg, at *yaml.Node) {
	for i := range l.Arms {
		a := &l.Arms[i]
		if a.Engine == "" || a.TP == 0 || len(a.GPUs) > 0 {
			continue
		}
		first := 0
		if l.Mode == ABConcurrent && i == 1 {
			first = max(l.Arms[0].TP, len(l.Arms[0].GPUs))
		}
		for g := range a.TP {
			a.GPUs = append(a.GPUs, first+g)
		}
	}
	if l.Mode != ABConcurrent {
		return
	}
	for _, a := range l.Arms {
		if a.ConfigKey != "" {
			d.errAtPos(a.ConfigKeyPos, "arm-mode", "concurrent arms need their GPUs declared: arm %s names config-key %s, whose server takes every GPU of its point; declare the arm with engine, tp and gpus, or use arm-mode: sequential", a.Label, a.ConfigKey)
			return
		}
	}
	for _, g := range l.Arms[0].GPUs {
		if slices.Contains(l.Arms[1].GPUs, g) {
			d.errAtPos(l.Arms[1].GPUsPos, "arms.b.gpus", "GPU %d is arm a's too: concurrent arms run on disjoint GPUs (a: %v, b: %v)", g, l.Arms[0].GPUs, l.Arms[1].GPUs)
			return
		}
	}
}

// errAtPos is errAt at a recorded position.
func (d *decoder) errAtPos(p Pos, key, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Line: max(p.Line, 1), Col: max(p.Col, 1), Key: key, Msg: fmt.Sprintf(format, args...)})
}

// duration decodes a Go duration ("600s", "2h") or a number of seconds.
func (d *decoder) duration(n *yaml.Node, path string) (time.Duration, bool) {
	r := resolve(n)
	if r.Kind == yaml.ScalarNode && (r.ShortTag() == "!!int" || r.ShortTag() == "!!float") {
		v, ok := d.number(r, path)
		if ok && v <= 0 {
			d.errAt(r, path, "must be positive, got %g", v)
			return 0, false
		}
		return time.Duration(v * float64(time.Second)), ok
	}
	s, ok := d.str(r, path)
	if !ok {
		return 0, false
	}
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		d.errAt(r, path, "%q: want a positive duration such as 600s or 2h, or a number of seconds", s)
		return 0, false
	}
	return v, true
}

func (d *decoder) abArm(n *yaml.Node, p string) ABArm {
	a := ABArm{EP: 1, Pos: d.pos(resolve(n))}
	f, ok := d.mapping(n, p, abArmKeys, nil)
	if !ok {
		return a
	}
	direct := f.has("engine")
	switch {
	case direct && f.has("config-key"):
		d.errAt(f.keyNode("engine"), joinPath(p, "engine"), "an arm is either a point of a config key (config-key, tp, conc) or an engine declared directly (engine, model-path, tp); remove one of them")
	case direct:
		d.require(f, resolve(n), p, "model-path", "tp")
		for _, k := range []string{"ep", "dp-attn", "conc", "kv-offloading"} {
			if f.has(k) {
				d.errAt(f.keyNode(k), joinPath(p, k), "%s picks a config key's matrix point; a directly declared arm has none", k)
			}
		}
	default:
		d.require(f, resolve(n), p, "config-key", "tp", "conc")
		for _, k := range []string{"image", "model-path", "served-model-name", "gpus", "max-model-len", "gpu-memory-utilization", "args", "env"} {
			if f.has(k) {
				d.errAt(f.keyNode(k), joinPath(p, k), "%s declares an engine directly (with engine: vllm, vllm-grpc or sglang); a config-key arm takes the recipe's", k)
			}
		}
	}
	if s := d.strPtr(f, "name", p); s != nil {
		a.Name = *s
	}
	if s := d.strPtr(f, "config-key", p); s != nil {
		a.ConfigKey = *s
		a.ConfigKeyPos = d.pos(resolve(f.get("config-key")))
	}
	if v := d.intPtr(f, "tp", p, 1); v != nil {
		a.TP = *v
	}
	if v := d.intPtr(f, "ep", p, 1); v != nil {
		a.EP = *v
	}
	if b := d.boolPtr(f, "dp-attn", p); b != nil {
		a.DPAttn = *b
	}
	if v := d.intPtr(f, "conc", p, 1); v != nil {
		a.Conc = *v
	}
	if n := f.get("kv-offloading"); n != nil {
		if v, ok := d.str(n, joinPath(p, "kv-offloading")); ok {
			if !slices.Contains(KVOffloadModes(), v) {
				d.errAt(n, joinPath(p, "kv-offloading"), "%q: want one of %s (the kv-offloading of the key's search space whose point the arm serves)", v, strings.Join(KVOffloadModes(), ", "))
			} else {
				a.KVOffloading = v
			}
		}
	}
	if pn := f.get("parsers"); pn != nil {
		a.Parsers = d.abParsers(pn, joinPath(p, "parsers"))
	}
	if rn := f.get("router"); rn != nil {
		a.Router = d.abRouter(rn, joinPath(p, "router"))
	}
	d.abDirect(&a, f, p)
	return a
}

// abDirect reads the keys of a directly declared arm.
func (d *decoder) abDirect(a *ABArm, f fields, p string) {
	if s := d.strPtr(f, "engine", p); s != nil {
		if _, ok := ServeKindFor(*s); !ok {
			d.errAt(f.get("engine"), joinPath(p, "engine"), "%q: want one of %s", *s, strings.Join(ServeKindNames(), ", "))
		} else {
			a.Engine = *s
		}
	}
	if s := d.strPtr(f, "image", p); s != nil {
		a.Image = *s
	}
	if s := d.strPtr(f, "model-path", p); s != nil {
		a.ModelPath = *s
		a.ModelPathPos = d.pos(resolve(f.get("model-path")))
	}
	if s := d.strPtr(f, "served-model-name", p); s != nil {
		a.ServedModel = *s
	}
	if a.ServedModel == "" {
		a.ServedModel = a.ModelPath
	}
	a.GPUsPos = a.Pos
	if n := f.get("gpus"); n != nil {
		a.GPUsPos = d.pos(resolve(n))
		if items, ok := d.sequence(n, joinPath(p, "gpus")); ok {
			for i, it := range items {
				if g, ok := d.intMin(it, indexPath(joinPath(p, "gpus"), i), 0); ok {
					if slices.Contains(a.GPUs, g) {
						d.errAt(it, indexPath(joinPath(p, "gpus"), i), "GPU %d is listed twice", g)
						continue
					}
					a.GPUs = append(a.GPUs, g)
				}
			}
		}
	}
	if n := f.get("max-model-len"); n != nil {
		r := resolve(n)
		switch {
		case r.Kind == yaml.ScalarNode && r.ShortTag() == "!!int":
			if v, ok := d.intMin(r, joinPath(p, "max-model-len"), 1); ok {
				a.MaxModelLen = strconv.Itoa(v)
			}
		default:
			if v, ok := d.str(r, joinPath(p, "max-model-len")); ok {
				if v != "auto" {
					d.errAt(r, joinPath(p, "max-model-len"), "%q: want auto or a number of tokens", v)
				} else {
					a.MaxModelLen = v
				}
			}
		}
	}
	if a.Engine != "" && a.MaxModelLen == "" {
		a.MaxModelLen = "auto"
	}
	if n := f.get("gpu-memory-utilization"); n != nil {
		if v, ok := d.number(n, joinPath(p, "gpu-memory-utilization")); ok {
			if !(v > 0 && v <= 1) {
				d.errAt(n, joinPath(p, "gpu-memory-utilization"), "must be a fraction in (0, 1], got %g", v)
			} else {
				a.GPUMemoryUtil = v
			}
		}
	}
	if n := f.get("args"); n != nil {
		if args, ok := d.strList(n, joinPath(p, "args")); ok {
			a.Args, a.ArgsPos = args, d.itemPos(n)
		}
	}
	if n := f.get("env"); n != nil {
		if ef, ok := d.mapping(n, joinPath(p, "env"), nil, nil); ok {
			a.Env = map[string]string{}
			for _, k := range ef.order {
				if v, ok := d.str(ef.get(k), joinPath(joinPath(p, "env"), k)); ok {
					a.Env[k] = v
				}
			}
		}
	}
	if a.Engine != "" && len(a.GPUs) > 0 && a.TP > 0 && len(a.GPUs) != a.TP {
		d.errAt(f.get("gpus"), joinPath(p, "gpus"), "%d GPUs for tp %d: list exactly tp devices", len(a.GPUs), a.TP)
	}
}

func (d *decoder) abParsers(n *yaml.Node, p string) ABParsers {
	var ps ABParsers
	f, ok := d.mapping(n, p, abParserKeys, nil)
	if !ok {
		return ps
	}
	ps.ToolCall = d.strPtr(f, "tool-call", p)
	ps.Reasoning = d.strPtr(f, "reasoning", p)
	if n := f.get("tool-call"); n != nil {
		ps.ToolCallPos = d.pos(resolve(n))
	}
	if n := f.get("reasoning"); n != nil {
		ps.ReasoningPos = d.pos(resolve(n))
	}
	return ps
}

// itemPos is where each item of sequence n is.
func (d *decoder) itemPos(n *yaml.Node) []Pos {
	items := resolve(n).Content
	out := make([]Pos, len(items))
	for i, it := range items {
		out[i] = d.pos(it)
	}
	return out
}

func (d *decoder) abRouter(n *yaml.Node, p string) *ABRouter {
	r := &ABRouter{Health: "/health", Pos: d.pos(resolve(n))}
	f, ok := d.mapping(n, p, abRouterKeys, nil)
	if !ok {
		return r
	}
	d.require(f, resolve(n), p, "argv")
	if an := f.get("argv"); an != nil {
		r.ArgvPos = d.pos(resolve(an))
		if argv, ok := d.strList(an, joinPath(p, "argv")); ok {
			if len(argv) == 0 {
				d.errAt(resolve(an), joinPath(p, "argv"), "must name the router program, e.g. [python3, -m, smg.launch_router]")
			}
			for i, a := range argv {
				if strings.HasPrefix(a, "--") {
					d.errAt(resolve(an).Content[i], indexPath(joinPath(p, "argv"), i), "argv is the launcher only; put flags such as %q under args", a)
				}
			}
			r.Argv = argv
		}
	}
	if an := f.get("args"); an != nil {
		if args, ok := d.strList(an, joinPath(p, "args")); ok {
			r.Args, r.ArgsPos = args, d.itemPos(an)
		}
	}
	if pn := f.get("parsers"); pn != nil {
		r.Parsers = d.abParsers(pn, joinPath(p, "parsers"))
	}
	if hn := f.get("health"); hn != nil {
		if h, ok := d.str(hn, joinPath(p, "health")); ok {
			if !strings.HasPrefix(h, "/") {
				d.errAt(resolve(hn), joinPath(p, "health"), "%q: want a URL path such as /health or /readiness", h)
			} else {
				r.Health = h
			}
		}
	}
	return r
}

func (d *decoder) abSimulate(n *yaml.Node) *ABSimulate {
	s := &ABSimulate{Seed: 1, Accuracy: 0.85}
	f, ok := d.mapping(n, "simulate", abSimKeys, nil)
	if !ok {
		return s
	}
	if v := f.get("seed"); v != nil {
		if x, ok := d.intMin(v, "simulate.seed", 1); ok {
			s.Seed = uint64(x)
		}
	}
	frac := func(name string, lo, hi float64) (float64, bool) {
		v := f.get(name)
		if v == nil {
			return 0, false
		}
		x, ok := d.number(v, "simulate."+name)
		if ok && !(x > lo && x < hi) {
			d.errAt(v, "simulate."+name, "must be a share in (%g, %g), got %g", lo, hi, x)
			return 0, false
		}
		return x, ok
	}
	if x, ok := frac("accuracy", 0, 1); ok {
		s.Accuracy = x
	}
	if x, ok := frac("flip", 0, 0.5); ok {
		s.Flip = x
	}
	for i, label := range []string{"a", "b"} {
		an := f.get(label)
		if an == nil {
			continue
		}
		p := "simulate." + label
		af, ok := d.mapping(an, p, abSimArmKeys, nil)
		if !ok {
			continue
		}
		if v := af.get("offset"); v != nil {
			if x, ok := d.number(v, p+".offset"); ok {
				if lo, hi := -100*s.Accuracy, 100*(1-s.Accuracy); x < lo || x > hi {
					d.errAt(v, p+".offset", "%g points: with accuracy %g the offset must be in [%.4g, %.4g]", x, s.Accuracy, lo, hi)
				} else {
					s.Offset[i] = x
				}
			}
		}
		if cn := af.get("categories"); cn != nil {
			if cf, ok := d.mapping(cn, p+".categories", nil, nil); ok {
				s.CategoryOffset[i] = map[string]float64{}
				for _, k := range cf.order {
					if x, ok := d.number(cf.get(k), p+".categories."+k); ok {
						if lo, hi := -100*s.Accuracy, 100*(1-s.Accuracy); x < lo || x > hi {
							d.errAt(cf.get(k), p+".categories."+k, "%g points: with accuracy %g the offset must be in [%.4g, %.4g]", x, s.Accuracy, lo, hi)
							continue
						}
						s.CategoryOffset[i][k] = x
					}
				}
			}
		}
		if v := af.get("infra-errors"); v != nil {
			if x, ok := d.number(v, p+".infra-errors"); ok {
				if x < 0 || x >= 1 {
					d.errAt(v, p+".infra-errors", "must be a share in [0, 1), got %g", x)
				} else {
					s.InfraErrors[i] = x
				}
			}
		}
	}
	return s
}
