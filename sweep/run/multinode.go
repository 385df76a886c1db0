package run

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"sweep/internal/proc"
	"sweep/internal/simproto"
	"sweep/metrics/aiperf"
	"sweep/metrics/power"
	"sweep/metrics/result"
	"sweep/recipes"
	"sweep/simengine"
)

// ErrVirtualMultiNode is returned for a disaggregated point asked to run
// on the virtual clock: the clock is kept by one engine, and a
// disaggregated point has a prefill and a decode engine at least.
var ErrVirtualMultiNode = errors.New("a disaggregated point runs on the compressed wall clock (--sim-clock wall): the virtual clock is kept by one engine, and this point has several")

// multiNodePower is a simulated disaggregated point's power lane: a
// simulated GPU tool per worker (its node), asking that worker's engine,
// on the wall clock; the nodes' energy is summed per role as InferenceX's
// multi-node power path sums it.
func multiNodePower(l *recipes.LocalMultiNode, f result.RunFacts, exe, gpu string, require bool) *PowerSpec {
	ps := &PowerSpec{Require: require}
	spec := Spec{LoadSpec: LoadSpec{Power: ps}}
	simulatedGPUs(&spec, exe, gpu, l.Workers[0].HealthURL, false)
	ps.Env = nil
	for _, w := range l.Workers {
		ps.Nodes = append(ps.Nodes, PowerNode{Name: w.Name, Env: map[string]string{simproto.EnvSMIURL: baseURL(w.HealthURL)}})
	}
	ps.ExpectedGPUs = f.NumGPUs()
	return ps
}

// FromLocalMultiNode turns a disaggregated point laid out on this host
// (recipes.PlanLocalMultiNode) into a runnable Spec: its first prefill
// worker is the Spec's Engine (log prefill0.log), the other workers are
// Workers, the PD router is the Router and the client drives the router.
// With Setup.OnHost each role runs at its node (recipes.PlanMultiNodeOnHosts)
// behind the launcher prefix OnHost gives, the workers at theirs, the
// router and the client at the router's.
// Only simulated runs are supported: the real workers need the nodes'
// RDMA devices. The result carries the point's prefill and decode
// layouts, as InferenceX's multi-node results do.
func FromLocalMultiNode(l *recipes.LocalMultiNode, s Setup) (Spec, error) {
	if !s.Simulate {
		return Spec{}, errors.New("a multi-node point runs on this host only simulated (--simulate); real ones run as a Slurm job on the nodes")
	}
	if s.Virtual() {
		return Spec{}, ErrVirtualMultiNode
	}
	if err := s.defaults(); err != nil {
		return Spec{}, err
	}
	if len(l.Workers) < 2 {
		return Spec{}, fmt.Errorf("%s: a disaggregated point needs a prefill and a decode worker, the plan has %d worker(s)", l.ResultFilename, len(l.Workers))
	}
	row := &l.Point.Row
	gpu := s.simGPU(row)
	var placeErr error
	place := func(ps *proc.Spec, host string) {
		if s.OnHost == nil || placeErr != nil {
			return
		}
		head, err := s.OnHost(host, ps.Name)
		if err != nil {
			placeErr = fmt.Errorf("%s: %w", ps.Name, err)
			return
		}
		ps.Argv = append(slices.Clone(head), ps.Argv...)
	}
	var calibration *result.SimCalibration
	var calErr error
	if s.SimCalibration != "" {
		calibration = &result.SimCalibration{File: s.SimCalibration}
	}
	worker := func(w recipes.LocalWorker) Worker {
		ps := s.proc(w.Name, w.Command)
		s.simulateEngine(&ps, uncheckedArgs(simengine.UncheckedSpecs(l.Escapes, w.Command.Argv)), gpu, row.Runner, false)
		if calibration != nil {
			e, err := calibratedEngine(ps, nil) // a worker has no sidecar
			calErr = cmp.Or(calErr, err)
			calibration.Engines = append(calibration.Engines, e)
		}
		place(&ps, w.Host)
		return Worker{Proc: ps, HealthURL: w.HealthURL, Log: w.Name + ".log", CommandFile: w.CommandFile()}
	}
	first := worker(l.Workers[0])
	spec := Spec{
		ServerSpec: ServerSpec{
			Engine: first.Proc, EngineCommandFile: first.CommandFile, EngineLog: first.Log, HealthURL: first.HealthURL,
			RouterHealthURL:      l.RouterHealthURL,
			MetricsURLs:          slices.Clone(l.MetricsURLs),
			RequiredMetricPrefix: l.RequiredMetricPrefix,
		},
		LoadSpec: LoadSpec{
			Name:        l.ResultFilename,
			ArtifactDir: aiperf.ArtifactDir(l.ResultDir),
			Facts:       result.FactsFromRow(row, l.ResultFilename, nil, s.ALTolerance),
			Simulation:  s.simulation(gpu, false),
		},
	}
	for _, w := range l.Workers[1:] {
		spec.Workers = append(spec.Workers, worker(w))
	}
	if calErr != nil {
		return Spec{}, calErr
	}
	maxLag, err := s.maxLag()
	if err != nil {
		return Spec{}, err
	}
	spec.MaxLag = maxLag
	spec.Simulation.Calibration = calibration
	if lane := power.LaneFromEnv(s.Environ, false); lane.Enabled {
		spec.Power = multiNodePower(l, spec.Facts, s.Executable, gpu, lane.Require)
	}
	r := s.proc("router", l.Router)
	r.Argv = append([]string{s.Executable, "sim-router", "--"}, l.Router.Argv...)
	r.Env[simproto.EnvTimeScale] = formatScale(s.TimeScale)
	place(&r, l.RouterHost)
	spec.Router = &r
	if err := s.setClient(&spec, l.Client, false); err != nil {
		return Spec{}, err
	}
	place(spec.Client, l.RouterHost)
	if placeErr != nil {
		return Spec{}, placeErr
	}
	if err := unresolved(spec); err != nil {
		return Spec{}, err
	}
	return spec, nil
}
