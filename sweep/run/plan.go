package run

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"sweep/internal/inputfile"
	"sweep/internal/simproto"
	"sweep/internal/usage"
	"sweep/metrics/aiperf"
	"sweep/metrics/power"
	"sweep/metrics/result"
	"sweep/recipes"
	"sweep/recipes/schema"
	"sweep/simengine"
)

// The power lane's GPU choices (Setup.PowerGPUs, --power-gpus).
const (
	PowerGPUsAll       = "all"
	PowerGPUsAllocated = "allocated"
)

// EnvPowerGPUs is the power lane's GPU choice when --power-gpus is not
// given (Setup.PowerGPUs "").
const EnvPowerGPUs = "SWEEP_POWER_GPUS"

// powerGPUs is the power lane's GPU choice: given (--power-gpus), else
// EnvPowerGPUs of environ, else PowerGPUsAll; a value other than those
// two as it was given.
func powerGPUs(given string, environ func(string) (string, bool)) string {
	if given == "" {
		given, _ = environ(EnvPowerGPUs)
	}
	if given == "" {
		return PowerGPUsAll
	}
	return given
}

// ErrNotSimulated is returned for parts of a point the simulation cannot
// stand in for.
var ErrNotSimulated = errors.New("not available in simulation")

// servedModelsToCheck are the names the engine's /v1/models must list
// once ready; none for an engine whose readiness is a TCP connect (vLLM's
// gRPC worker behind a router answers no HTTP: the router's readiness
// covers it).
func servedModelsToCheck(p *recipes.Point) []string {
	if strings.HasPrefix(p.HealthURL, "tcp://") {
		return nil
	}
	return ServedModels(p.Engine.Argv)
}

// FromPlan turns a planned point into a runnable Spec (a disaggregated
// multi-node one, Point.MultiNode, through FromLocalMultiNode).
func FromPlan(p *recipes.Point, s Setup) (Spec, error) { return fromPlan(p, s, true) }

// ServerFromPlan is FromPlan for a point that only serves, with no load or
// eval command (an accuracy A/B arm declared by its engine: bfcl is the
// client); its Spec's ServerSpec is what StartServer takes.
func ServerFromPlan(p *recipes.Point, s Setup) (Spec, error) { return fromPlan(p, s, false) }

func fromPlan(p *recipes.Point, s Setup, needLoad bool) (Spec, error) {
	if p.MultiNode != nil {
		return FromLocalMultiNode(p.MultiNode, s)
	}
	if err := s.defaults(); err != nil {
		return Spec{}, err
	}
	if len(p.Engine.Argv) == 0 {
		return Spec{}, errors.New("plan has no engine command")
	}
	if s.Aiperf != "" && p.Client != nil && !honestClock(s.Simulate, s.WallClock, s.TimeScale) {
		return Spec{}, fmt.Errorf("aiperf %s on %s: %w", s.Aiperf, clockName(s.WallClock, s.TimeScale), ErrDishonestClock)
	}
	spec := Spec{
		ServerSpec: ServerSpec{
			EngineCommandFile:    p.CommandFile,
			HealthURL:            p.HealthURL,
			ServedModels:         servedModelsToCheck(p),
			RouterHealthURL:      p.RouterHealthURL,
			MetricsURLs:          slices.Clone(p.MetricsURLs),
			RequiredMetricPrefix: p.RequiredMetricPrefix,
			FlushURLs:            flushURLs(p),
		},
		LoadSpec: LoadSpec{
			Name:     p.ResultFilename,
			GoldenAL: p.GoldenAL,
			Facts:    result.FactsFromRow(&p.Row, p.ResultFilename, p.GoldenAL, s.ALTolerance),
		},
	}
	if p.Client != nil {
		dir, err := clientArtifactDir(p, s.AiperfSchema)
		if err != nil {
			return Spec{}, err
		}
		spec.ArtifactDir = dir
	}
	spec.Engine = s.proc("engine", p.Engine)
	if lane := power.LaneFromEnv(s.Environ, spec.Facts.Multinode); lane.Enabled && p.Client != nil {
		f := spec.Facts
		spec.Power = &PowerSpec{ExpectedGPUs: power.ExpectedGPUs(f.TP, f.PP, f.PCP), Require: lane.Require}
		switch mode := powerGPUs(s.PowerGPUs, s.Environ); mode {
		case PowerGPUsAll:
		case PowerGPUsAllocated:
			spec.Power.AllocatedGPUs = true
		default:
			return Spec{}, fmt.Errorf("power GPUs %q (--power-gpus or %s): want %s or %s", mode, EnvPowerGPUs, PowerGPUsAll, PowerGPUsAllocated)
		}
	}
	virtual := s.Virtual() && p.Client != nil
	var sim simengine.CommandLine
	if s.Simulate {
		// The engine as simengine.PlannedCommandLine plans it for a
		// simulated run, with the plan's Unset and EnvFrom as above.
		var err error
		sim, err = simengine.PlannedCommandLine(p)
		if err != nil {
			return Spec{}, err
		}
		spec.Engine = s.proc("engine", recipes.Command{Argv: sim.Argv, Env: sim.Env, Unset: p.Engine.Unset, EnvFrom: p.Engine.EnvFrom})
		gpu := s.simGPU(&p.Row)
		s.simulateEngine(&spec.Engine, uncheckedArgs(sim.Unchecked), gpu, p.Row.Runner, virtual)
		spec.Simulation = s.simulation(gpu, virtual)
		maxLag, err := s.maxLag()
		if err != nil {
			return Spec{}, err
		}
		spec.MaxLag = maxLag
		if spec.Power != nil {
			simulatedGPUs(&spec, s.Executable, gpu, p.HealthURL, virtual)
		}
	}
	if !s.Simulate && slices.Contains(p.Engine.Placeholders, recipes.HFSnapshotPlaceholder) {
		if err := resolveSnapshot(spec.Engine.Argv); err != nil {
			return Spec{}, err
		}
	}
	if s.Simulate && s.SimCalibration != "" {
		e, err := calibratedEngine(spec.Engine, sim.Files)
		if err != nil {
			return Spec{}, err
		}
		spec.Simulation.Calibration = &result.SimCalibration{File: s.SimCalibration, Engines: []result.CalibratedEngine{e}}
	}
	for _, sc := range p.Sidecars {
		for _, f := range sc.Files {
			if root := cmp.Or(s.Dir, p.ResultDir); !inside(root, f.Path) {
				return Spec{}, fmt.Errorf("sidecar %s writes %s, outside the run's directory %s", sc.Name, f.Path, root)
			}
			spec.Files = append(spec.Files, f)
		}
		if s.Simulate {
			// No sidecar process: the simulated engine reads its files and
			// its command (simengine.SidecarsEnv) and keeps the KV in
			// simulated memory.
			continue
		}
		if sc.HealthURL == "" {
			return Spec{}, fmt.Errorf("sidecar %s has no readiness endpoint: real runs of this offload backend are not supported yet (run it with --simulate)", sc.Name)
		}
		ps := s.proc(sc.Name, sc.Command)
		spec.Sidecars = append(spec.Sidecars, Sidecar{Proc: ps, HealthURL: sc.HealthURL})
	}
	if p.Router != nil {
		r := s.proc("router", *p.Router)
		if s.Simulate {
			r.Argv = append([]string{s.Executable, "sim-router", "--"}, p.Router.Argv...)
			r.Env[simproto.EnvTimeScale] = formatScale(s.TimeScale)
		}
		spec.Router = &r
	}
	switch {
	case p.Client != nil && needLoad: // a server alone runs no client: its trace set is not needed
		if err := s.setClient(&spec, *p.Client, virtual); err != nil {
			return Spec{}, err
		}
	case p.Eval != nil:
		if s.Simulate {
			return Spec{}, fmt.Errorf("eval point: lm-eval scores synthetic text as 0: %w", ErrNotSimulated)
		}
		e := s.proc("eval", *p.Eval)
		spec.Eval = &e
	case needLoad:
		return Spec{}, errors.New("plan has neither a client nor an eval command")
	}
	if err := unresolved(spec); err != nil {
		return Spec{}, err
	}
	return spec, nil
}

// PlannedEngineCommand is the engine command of a planned point as a
// simulated engine gets it (FromPlan with Simulate): the argv,
// --unchecked specs and planned environment of
// simengine.PlannedCommandLine (without what EnvFrom would take from this
// machine), with the point's sidecar files, not written, in Files (a
// Mooncake point's store config is read from there, not from where the
// plan puts it).
func PlannedEngineCommand(p *recipes.Point) (RecordedCommand, error) {
	sim, err := simengine.PlannedCommandLine(p)
	if err != nil {
		return RecordedCommand{}, err
	}
	return RecordedCommand{Argv: sim.Argv, Unchecked: sim.Unchecked, Env: sim.Env, Files: sim.Files}, nil
}

// resolveSnapshot replaces recipes.HFSnapshotPlaceholder in argv with the
// revision the HF hub cache holds for the model (refs/main beside the
// snapshots directory), as InferenceX's recipe resolves it. A simulated
// engine gets simengine.SimulatedSnapshot instead
// (simengine.PlannedCommandLine).
func resolveSnapshot(argv []string) error {
	for i, a := range argv {
		dir, _, ok := strings.Cut(a, "/snapshots/"+recipes.HFSnapshotPlaceholder)
		if !ok {
			continue
		}
		data, err := inputfile.Read(filepath.Join(dir, "refs", "main"), inputfile.Text)
		if err != nil {
			return fmt.Errorf("engine model %s: no cached snapshot (%w); download it first (hf download)", dir, err)
		}
		rev := strings.TrimSpace(string(data))
		if rev == "" || strings.ContainsRune(rev, '/') {
			return fmt.Errorf("engine model %s: refs/main holds %q, not a revision", dir, rev)
		}
		argv[i] = strings.ReplaceAll(a, recipes.HFSnapshotPlaceholder, rev)
	}
	return nil
}

// flushURLs are the engine's cache resets (the engine table's CacheFlush:
// SGLang's /flush_cache, vLLM's /reset_prefix_cache), on the engine itself
// (behind any router).
func flushURLs(p *recipes.Point) []string {
	base, ok := strings.CutSuffix(p.HealthURL, "/health")
	flush := p.Row.Framework.Facts().CacheFlush
	if !ok || base == "" || flush == "" {
		return nil
	}
	return []string{base + flush}
}

// inside reports whether path lies in dir (dir itself excluded).
func inside(dir, path string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(path))
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && filepath.IsAbs(path) == filepath.IsAbs(dir)
}

// clientArtifactDir is where the point's client writes its artifacts,
// read from its argv with the aiperf schema it was planned for (ref
// "aiperf@VERSION"; "" or no version: the default): its
// --output-artifact-dir, which must be the point's result directory's
// aiperf_artifacts/ (aiperf.ArtifactDir), where the run and every later
// reader of the point read them, and every other path it writes must lie
// in the result directory. Anything else is a usage error naming the
// flag, the path and the fix: a plan file edited, or planned for another
// directory, would write into another point's directory.
func clientArtifactDir(p *recipes.Point, ref string) (string, error) {
	_, version, _ := strings.Cut(ref, "@")
	sch, err := schema.Load("aiperf", version)
	if err != nil {
		return "", fmt.Errorf("client command: %w", err)
	}
	// Only the paths are read here: any other problem of the argv is the
	// client's to report, as it is for a point planned here.
	parsed, _ := sch.Parse(sch.TrimProgram(p.Client.Argv))
	want := aiperf.ArtifactDir(p.ResultDir)
	fix := fmt.Sprintf("plan the point again for its directory (sweep plan --format json --result-dir %s) or edit the path", p.ResultDir)
	const flag = "--output-artifact-dir"
	v, ok := parsed.Get(flag)
	if !ok || len(v.Strs) == 0 {
		return "", usage.Refusef("client command has no %s: the client would write its artifacts into its working directory, not %s; %s", flag, want, fix)
	}
	got := v.Strs[len(v.Strs)-1]
	if filepath.Clean(got) != filepath.Clean(want) {
		return "", usage.Refusef("client command: %s %s: the point's artifacts are read from %s (its result directory's %s/); %s", v.Spelling, got, want, aiperf.ArtifactDirName, fix)
	}
	if out := parsed.WritesOutside(p.ResultDir); len(out) > 0 {
		return "", usage.Refusef("client command: %s %s writes outside the point's result directory %s; %s", out[0].Flag, out[0].Path, p.ResultDir, fix)
	}
	return got, nil
}
