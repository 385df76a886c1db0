package simfit

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"sweep/configs"
	"sweep/metrics/aiperf"
	"sweep/recipes/schema"
	"sweep/simengine"
	"sweep/sweep/knee"
	"sweep/sweep/run"
)

// The worker roles of a disaggregated arm, in the order they are fitted.
var roles = []string{simengine.DisaggPrefill, simengine.DisaggDecode}

// worker is one disaggregated worker of a point: its role, its command
// (as recorded beside the result: ROLE<N>_command.txt) and the /metrics
// endpoint that command listens at (host "" when it listens on every
// address).
type worker struct {
	name, role string
	cmd        run.RecordedCommand
	host, port string
}

// pointWorkers reads the worker commands beside a disaggregated point's
// result (prefill0_command.txt, decode0_command.txt, ...), by role.
func pointWorkers(resultFile string) (map[string][]worker, error) {
	out := map[string][]worker{}
	for _, role := range roles {
		files, _ := filepath.Glob(filepath.Join(filepath.Dir(resultFile), role+"*_command.txt"))
		for _, f := range files {
			cmd, err := run.ReadCommandFile(f)
			if err != nil {
				return nil, err
			}
			w := worker{name: strings.TrimSuffix(filepath.Base(f), "_command.txt"), role: role, cmd: cmd}
			given := schema.ReadArgv(cmd.Argv, schema.ArgvOptions{Schema: schema.OfProgram(cmd.Argv)})
			port, _ := given.Find("--port")
			host, _ := given.Find("--host")
			w.port, w.host = port.Value(), host.Value()
			if w.host == "0.0.0.0" || w.host == "::" {
				w.host = ""
			}
			out[role] = append(out[role], w)
		}
	}
	return out, nil
}

// serves reports whether the /metrics endpoint of an aiperf export
// (http://HOST:PORT/metrics) is the worker's.
func (w *worker) serves(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil || w.port == "" {
		return false
	}
	host, port, err := net.SplitHostPort(u.Host)
	return err == nil && port == w.port && (w.host == "" || host == w.host)
}

// roleMetrics is what a point's server metrics export says of the
// workers of one role, summed over them: the counters over the profiling
// window (0 when the export has none) and the pool each reports.
type roleMetrics struct {
	// found: the export has series of these workers' endpoints.
	found bool
	// prefillSeconds is sglang:forward_execution_seconds_total of
	// category prefill; hasForward says whether the export has it.
	prefillSeconds float64
	hasForward     bool
	// decodeSeconds is sglang:forward_execution_seconds_total of category
	// decode, decodePasses sglang:cuda_graph_passes_total of the decode
	// modes (decode_cuda_graph, decode_none) and decodeTokens
	// sglang:realtime_tokens_total of mode decode: the decode steps as
	// the workers timed and counted them.
	decodeSeconds, decodePasses, decodeTokens float64
	// computed and cached are sglang:realtime_tokens_total's
	// prefill_compute and prefill_cache; requests sglang:num_requests_total.
	computed, cached, requests float64
	// pool is sglang:max_total_num_tokens (a worker's, per rank: the
	// largest of the role's), usage the largest mean sglang:token_usage.
	pool, usage float64
}

// readRoleMetrics reads the server metrics export beside a result
// (aiperf's server_metrics_export.json) for the workers of each role.
func readRoleMetrics(resultFile string, workers map[string][]worker) (map[string]roleMetrics, error) {
	path := filepath.Join(aiperf.ResolveArtifactDir(filepath.Dir(resultFile)), "server_metrics_export.json")
	exp, err := aiperf.ReadServerMetricsFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]roleMetrics{}
	for role, ws := range workers {
		var m roleMetrics
		mine := func(s *aiperf.ExportedSeries) bool {
			return slices.ContainsFunc(ws, func(w worker) bool { return w.serves(s.EndpointURL) })
		}
		each := func(family string, fn func(s *aiperf.ExportedSeries)) {
			for _, name := range []string{family, family + "_total"} {
				if f, ok := exp.Metrics[name]; ok {
					for i := range f.Series {
						if s := &f.Series[i]; mine(s) {
							m.found = true
							fn(s)
						}
					}
				}
			}
		}
		total := func(s *aiperf.ExportedSeries) float64 { v, _ := s.Stat("total"); return v }
		each("sglang:forward_execution_seconds", func(s *aiperf.ExportedSeries) {
			switch s.Labels["category"] {
			case "prefill":
				m.hasForward = true
				m.prefillSeconds += total(s)
			case "decode":
				m.decodeSeconds += total(s)
			}
		})
		each("sglang:cuda_graph_passes", func(s *aiperf.ExportedSeries) {
			if strings.HasPrefix(s.Labels["mode"], "decode") {
				m.decodePasses += total(s)
			}
		})
		each("sglang:realtime_tokens", func(s *aiperf.ExportedSeries) {
			switch s.Labels["mode"] {
			case "prefill_compute":
				m.computed += total(s)
			case "prefill_cache":
				m.cached += total(s)
			case "decode":
				m.decodeTokens += total(s)
			}
		})
		each("sglang:num_requests", func(s *aiperf.ExportedSeries) { m.requests += total(s) })
		each("sglang:max_total_num_tokens", func(s *aiperf.ExportedSeries) {
			if v, ok := s.Stat("avg"); ok {
				m.pool = max(m.pool, v)
			}
		})
		each("sglang:token_usage", func(s *aiperf.ExportedSeries) {
			if v, ok := s.Stat("avg"); ok {
				m.usage = max(m.usage, v)
			}
		})
		out[role] = m
	}
	return out, nil
}

// roleFit gathers one worker role's fit over an arm's points.
type roleFit struct {
	arm       simengine.ArmCalibration
	cfg       simengine.Config // the first point's worker configuration
	label     string           // engineLabel of it
	points    []simengine.FitPoint
	unfitted  string // why the role cannot be fitted at all ("" when it can)
	hasConfig bool
}

// fitDisaggArm fits a disaggregated arm's workers, one calibration arm
// per role: the prefill workers' prefill cost (FitPrefillScale on their
// forward time per request) and pool, the decode workers' step cost
// (FitStepScale on their own decode steps' time and batch, else the
// client's gap between tokens; a decode worker computes no prompt) and
// pool. Both read each point's worker commands
// and its server metrics export, per worker endpoint: the result's own
// server metrics and pool sum the workers'. A role that cannot be fitted
// is in skipped with why.
func fitDisaggArm(a *knee.Arm) (arms []simengine.ArmCalibration, skipped []string, err error) {
	label := a.Identity.Label()
	fits := map[string]*roleFit{}
	for _, role := range roles {
		fits[role] = &roleFit{}
	}
	calibration := mostCommon(a.Samples)
	anyWorkers := false
	for _, s := range a.Samples {
		facts, err := readResultFacts(s.File)
		if err != nil {
			return nil, nil, err
		}
		workers, err := pointWorkers(s.File)
		if err != nil {
			return nil, nil, err
		}
		if len(workers[simengine.DisaggPrefill]) == 0 || len(workers[simengine.DisaggDecode]) == 0 {
			for _, f := range fits {
				f.arm.LeftOut = append(f.arm.LeftOut, pointName(s)+": no prefill and decode worker commands beside its result (prefill0_command.txt, decode0_command.txt, as sweep writes them)")
			}
			continue
		}
		anyWorkers = true
		if s.SimCalibration != calibration {
			for _, f := range fits {
				f.arm.LeftOut = append(f.arm.LeftOut, fmt.Sprintf("%s: run under another calibration (%s) than most of the arm's points (%s)", pointName(s), orNone(s.SimCalibration), orNone(calibration)))
			}
			continue
		}
		gpu := simengine.GPUFromRunner(facts.r.HW)
		metrics, merr := readRoleMetrics(s.File, workers)
		for _, role := range roles {
			f := fits[role]
			cmd := workers[role][0].cmd
			l, err := engineLabel(cmd, gpu)
			if err != nil {
				f.arm.LeftOut = append(f.arm.LeftOut, fmt.Sprintf("%s: its %s command is not one the simulator reads: %v", pointName(s), workers[role][0].name, err))
				continue
			}
			if !f.hasConfig {
				f.cfg, err = commandConfig(cmd, gpu)
				if err != nil {
					return nil, nil, err // engineLabel read it
				}
				f.label, f.hasConfig = l, true
			} else if l != f.label {
				f.arm.LeftOut = append(f.arm.LeftOut, fmt.Sprintf("%s: its %s command sets %s, not the arm's first point's %s", pointName(s), workers[role][0].name, l, f.label))
				continue
			}
			if merr != nil {
				f.arm.LeftOut = append(f.arm.LeftOut, fmt.Sprintf("%s: its server metrics export does not read: %v", pointName(s), merr))
				continue
			}
			m := metrics[role]
			if !m.found {
				f.arm.LeftOut = append(f.arm.LeftOut, fmt.Sprintf("%s: its server metrics export has no series of the %s workers' endpoints", pointName(s), role))
				continue
			}
			if m.pool > 0 {
				f.arm.PoolTokens = int(m.pool)
			}
			if why := unusable(s); why != "" {
				f.arm.LeftOut = append(f.arm.LeftOut, pointName(s)+": "+why)
				continue
			}
			var p simengine.FitPoint
			var why string
			if role == simengine.DisaggPrefill {
				p, why = prefillPoint(s, m)
			} else {
				p, why = decodePoint(s, facts, m, len(workers[role]))
			}
			if why != "" {
				f.arm.LeftOut = append(f.arm.LeftOut, pointName(s)+": "+why)
				continue
			}
			f.points = append(f.points, p)
		}
	}
	if !anyWorkers {
		return nil, []string{fmt.Sprintf("%s: disaggregated, without the prefill and decode workers' commands beside its results (prefill0_command.txt, decode0_command.txt, which sweep writes; InferenceX's own results have none): the workers' layouts and their endpoints' metrics are not known, so neither role is fitted", label)}, nil
	}
	for _, role := range roles {
		f := fits[role]
		if !f.hasConfig {
			skipped = append(skipped, fmt.Sprintf("%s: the %s workers: no point with a command the simulator reads (%s)", label, role, strings.Join(f.arm.LeftOut, "; ")))
			continue
		}
		cfg := f.cfg
		if f.arm.PoolTokens > 0 {
			cfg.MaxTotalTokens = f.arm.PoolTokens
		}
		arm := cfg.CalibrationArm()
		arm.EP = max(arm.EP, 1)
		arm.Basis = simengine.BasisWorkerCommand
		arm.PoolTokens, arm.LeftOut = f.arm.PoolTokens, f.arm.LeftOut
		if arm.Engine != configs.SGLang {
			skipped = append(skipped, fmt.Sprintf("%s: the %s workers run %s: the fit reads SGLang's worker metrics only", label, role, arm.Engine))
			continue
		}
		if role == simengine.DisaggPrefill {
			arm.StepScale, arm.RMSErrorPct, err = simengine.FitPrefillScale(cfg, f.points)
		} else {
			arm.StepScale, arm.RMSErrorPct, err = simengine.FitStepScale(cfg, f.points)
		}
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: the %s workers: %v (%s)", label, role, err, strings.Join(arm.LeftOut, "; ")))
			continue
		}
		arm.Points = f.points
		arms = append(arms, arm)
	}
	return arms, skipped, nil
}

// prefillPoint is a prefill worker's fit point: its forward time, the
// prompt tokens it computed and the cached ones they followed, per
// request it served; or why there is none.
func prefillPoint(s knee.Sample, m roleMetrics) (simengine.FitPoint, string) {
	switch {
	case !m.hasForward:
		return simengine.FitPoint{}, "the prefill workers' server metrics have no sglang:forward_execution_seconds_total{category=\"prefill\"}: their prefill time is not measured"
	case m.requests <= 0 || m.computed <= 0 || m.prefillSeconds <= 0:
		return simengine.FitPoint{}, fmt.Sprintf("the prefill workers served %.0f requests computing %.0f prompt tokens in %.3g s (sglang:num_requests_total, sglang:realtime_tokens_total{mode=\"prefill_compute\"}): nothing to fit", m.requests, m.computed, m.prefillSeconds)
	}
	p := simengine.FitPoint{Conc: s.Conc, PrefillTokens: m.computed / m.requests, PrefillContext: m.cached / m.requests, PrefillSeconds: m.prefillSeconds / m.requests}
	if s.Probe {
		p.ProbeSeconds = s.Seconds
	}
	return p, ""
}

// decodePoint is a decode worker's fit point: the client's gap between
// a request's tokens, the requests decoding, in flight and their
// context, shared over the decode workers; no prefill (a decode worker
// receives a prompt's KV and computes none of it). The decode worker's
// first step yields the first token and the drafts it accepted, so a
// request's steps after it are (output tokens - AL) / AL: the gap is
// (mean latency - mean TTFT) / (mean output tokens - AL), whose × AL is
// the step (over output tokens - 1 it read the step 0.4 % short at 430
// output tokens and AL 2.6). Or why there is none: the decode pool
// pinned, no acceptance length of a speculative arm, no means.
//
// Where the export has the decode workers' forward time, passes and
// tokens of the decode steps, the point carries the step as they timed it
// (forward time over passes) and its batch (tokens over passes and AL),
// which the fit reads before the client's gap: a simulated disaggregated
// point runs on the wall clock, where the gap also holds how far the
// engines fell behind their schedule on a loaded host, and the engines'
// own step times do not.
func decodePoint(s knee.Sample, facts resultFacts, m roleMetrics, workers int) (simengine.FitPoint, string) {
	if m.usage >= pinnedUsage {
		return simengine.FitPoint{}, fmt.Sprintf("the decode workers' KV usage %.1f %%, at or past %g %%: the pool is pinned and steps recompute evicted prefixes, which the step model does not describe", 100*m.usage, 100*pinnedUsage)
	}
	if s.ITL.P50 == nil {
		return simengine.FitPoint{}, "no median inter-token latency"
	}
	p := simengine.FitPoint{Conc: s.Conc, ITL: float64(*s.ITL.P50), AL: 1}
	if s.Probe {
		p.ProbeSeconds = s.Seconds
	}
	switch {
	case s.AL != nil && s.AL.Measured != nil:
		p.AL = float64(*s.AL.Measured)
	case facts.r.SpecDecoding != "" && facts.r.SpecDecoding != "none":
		return p, noALReason
	}
	l, t := facts.r.RequestMetrics.Latency, facts.r.RequestMetrics.Tokens
	e2el, okL := num(l.E2EL.Mean)
	ttft, okT := num(l.TTFT.Mean)
	out, okO := num(t.OutputActual.Mean)
	q, okQ := num(facts.r.RequestMetrics.QPS.Mean)
	if !okL || !okT || !okO || !okQ || out <= p.AL || e2el <= ttft {
		return p, "no mean latency, TTFT, output length and request rate (the gap between tokens and the requests decoding)"
	}
	n := float64(max(workers, 1))
	span := e2el - ttft
	p.Gap = span / (out - p.AL)
	p.Decoding = q * span / n
	p.Running = q * e2el / n
	p.CtxTokens = facts.decodeContext(q*e2el) / n
	if p.CtxTokens <= 0 {
		return p, "no mean prompt length (the context the requests decode over)"
	}
	if m.decodeSeconds > 0 && m.decodePasses > 0 && m.decodeTokens > 0 {
		p.EngineStep = m.decodeSeconds / m.decodePasses
		p.EngineBatch = m.decodeTokens / m.decodePasses / p.AL
	}
	return p, ""
}
