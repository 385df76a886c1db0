package simfit

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"sweep/configs"
	"sweep/metrics/result"
	"sweep/simengine"
	"sweep/sweep/knee"
	"sweep/sweep/run"
)

// FitResults fits every arm of the results under dir (a discovery, an
// official run, real or simulated) and returns the calibration. An arm
// keeps the KV pool its results report (kv_cache_pool_tokens, from the
// engine's log, summed over its ranks: a rank's share, the division
// named; where it differs by point, its largest concurrency's, the
// spread named: armPool) and gets the step scale simengine.FitStepScale finds on its points
// below a pinned pool (KV usage under 95 %; for an arm with a host KV
// tier, whose device pool sits full by design, the engine retracting no
// request there, as the server metrics export beside it records, else,
// where it records none, its requests in flight's context under 95 % of a
// rank's device pool: pinned). Arms of engines the
// simulator does not serve, or without a point to fit, are skipped with
// a reason in skipped.
//
// The step scale is fitted against the engine's own configuration where
// the results have its command beside them (armConfig), so a fit of a
// simulated discovery finds the scale it ran with; where they have none,
// against the command the shipped recipe plans for the arm (o.Planned).
// A speculative arm's point without a measured acceptance length takes
// the arm's golden one from o.Planned, else is left out.
func FitResults(ctx context.Context, dir string, o Options) (cal *simengine.Calibration, skipped []string, err error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, nil, fmt.Errorf("results directory: %w", err)
	}
	arms, err := knee.Read(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	if len(arms) == 0 {
		return nil, nil, fmt.Errorf("%s holds no result to fit (no aggregate result JSON under it): give the --out directory of a discovery or an official run", dir)
	}
	cal = &simengine.Calibration{Version: simengine.CalibrationVersion, Source: dir}
	for _, a := range arms {
		label := a.Identity.Label()
		engine := configs.Engine(a.Identity.Get("framework"))
		if a.Identity.Get("disagg") == "true" {
			arms, why, err := fitDisaggArm(a)
			if err != nil {
				return nil, nil, err
			}
			skipped = append(skipped, why...)
			for _, arm := range arms {
				if i := slices.IndexFunc(cal.Arms, func(b simengine.ArmCalibration) bool { return b.Label() == arm.Label() }); i >= 0 {
					skipped = append(skipped, fmt.Sprintf("%s: its %s: fitted already on another arm's points (step scale %.3f there, %.3f here); fit the discoveries apart to compare them", label, arm.Label(), cal.Arms[i].StepScale, arm.StepScale))
					continue
				}
				cal.Arms = append(cal.Arms, arm)
				cal.Simulated = cal.Simulated || a.Simulated
			}
			continue
		}
		if engine != configs.SGLang && engine != configs.VLLM {
			skipped = append(skipped, fmt.Sprintf("%s: engine %q is not simulated", label, engine))
			continue
		}
		tp, _ := strconv.Atoi(a.Identity.Get("tp"))
		ep, _ := strconv.Atoi(a.Identity.Get("ep"))
		kv := a.Identity.Get("kv_offloading")
		arm := simengine.ArmCalibration{Engine: engine, TP: tp, EP: max(ep, 1), DPAttention: a.Identity.Get("dp_attention") == "true", HostKV: kv != "" && kv != "none"}
		var points []simengine.FitPoint
		var judge []deviceJudged                  // points of a host-tier arm pastDevicePool judges
		pools, pool := map[int]int{}, 0           // the pools the points report (over every rank), by concurrency; the last read
		var recorded, unread *run.RecordedCommand // the first command read, and the first that did not
		planned, hasPlanned := o.Planned[plannedKey(a.Identity)]
		var commands []basedCommand // the engine commands to read, in order
		spec, al := "", 0.0
		noAL := 0         // points of a speculative arm without a measured acceptance length
		firstEngine := "" // the engine configuration of the first point with a command read
		calibration := mostCommon(a.Samples)
		for _, s := range a.Samples {
			facts, err := readResultFacts(s.File)
			if err != nil {
				return nil, nil, err
			}
			if arm.Model == "" {
				arm.Model, arm.GPU, spec = facts.r.Model, simengine.GPUFromRunner(facts.r.HW), facts.r.SpecDecoding
			}
			if c, ok := run.EngineCommand(s.File); ok {
				// One arm's points ran one engine configuration: a point
				// run on another (--sim-gpu, other flags under the same
				// runner label) would fit another engine's steps. A
				// command the simulator does not read says nothing of it.
				l, err := engineLabel(c, arm.GPU)
				switch {
				case err != nil:
					if unread == nil {
						unread = &c
					}
				case recorded == nil:
					recorded, firstEngine = &c, l
				case l != firstEngine:
					arm.LeftOut = append(arm.LeftOut, fmt.Sprintf("%s: its engine command sets %s, not the arm's first point's %s", pointName(s), l, firstEngine))
					continue
				}
			}
			// Nor are points a simulated engine ran under another
			// calibration than most of the arm's (it scaled their steps
			// otherwise) the arm's.
			if s.SimCalibration != calibration {
				arm.LeftOut = append(arm.LeftOut, fmt.Sprintf("%s: run under another calibration (%s) than most of the arm's points (%s)", pointName(s), orNone(s.SimCalibration), orNone(calibration)))
				continue
			}
			if v, ok := num(facts.r.KVCachePoolTokens); ok {
				pool = int(v)
				pools[s.Conc] = pool
			}
			tierPool := facts.hostTierPool(arm.HostKV)
			if why := unfit(s, tierPool > 0); why != "" {
				arm.LeftOut = append(arm.LeftOut, pointName(s)+": "+why)
				continue
			}
			p, alFrom, why := fitPoint(s, facts, pool, planned)
			if why != "" {
				if why == noALReason {
					noAL++
				}
				arm.LeftOut = append(arm.LeftOut, pointName(s)+": "+why)
				continue
			}
			if alFrom != "" {
				arm.ALFrom = alFrom
			}
			if result.Speculative(facts.r.SpecDecoding) {
				al = p.AL
			}
			if tierPool > 0 {
				j, why := judged(s, len(points), tierPool)
				if why != "" {
					arm.LeftOut = append(arm.LeftOut, pointName(s)+": "+why)
					continue
				}
				judge = append(judge, j)
			}
			points = append(points, p)
		}
		if arm.GPU == "" {
			skipped = append(skipped, fmt.Sprintf("%s: runner %q names no GPU the simulator knows", label, a.Identity.Get("hw")))
			continue
		}
		if len(points) == 0 && noAL > 0 {
			skipped = append(skipped, fmt.Sprintf("%s: speculative decoding (%s) without a measured acceptance length at any point, nor a golden one planned for the arm: a decode step is ITL × AL (results sweep writes carry it under acceptance_length; InferenceX's own do not)", label, spec))
			continue
		}
		if recorded == nil {
			recorded = unread
		}
		if recorded != nil {
			commands = append(commands, basedCommand{*recorded, simengine.BasisCommand})
		}
		if hasPlanned {
			commands = append(commands, basedCommand{planned.Command, simengine.BasisPlanned})
		}
		cfg, err := armConfig(&arm, commands, spec, al)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", label, err))
			continue
		}
		if arm.PoolTokens, arm.PoolFrom = armPool(pools, cfg); arm.PoolTokens > 0 {
			cfg.MaxTotalTokens = arm.PoolTokens
		}
		points = leaveOutPastDevicePool(&arm, cfg.Ranks(), points, judge)
		arm.StepScale, arm.RMSErrorPct, err = simengine.FitStepScale(cfg, points)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v (%s)", label, err, strings.Join(arm.LeftOut, "; ")))
			continue
		}
		arm.Points = points
		cal.Arms = append(cal.Arms, arm)
		cal.Simulated = cal.Simulated || a.Simulated
	}
	return cal, skipped, nil
}
