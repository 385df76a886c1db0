package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"sweep/metrics"
	"sweep/metrics/aiperf"
	"sweep/metrics/power"
	"sweep/metrics/result"
)

// scrapeRun is sweep's own sampling of the engine's /metrics during the
// load, beside whatever the client exports.
type scrapeRun struct {
	scraper *metrics.Scraper
	done    chan struct{}
	res     *metrics.ScrapeResult
	err     error
}

// startScraper starts sampling MetricsURLs; its goroutine exits after
// finish (or when ctx is cancelled).
func (r *runner) startScraper(ctx context.Context) *scrapeRun {
	s := &scrapeRun{done: make(chan struct{})}
	if len(r.spec.MetricsURLs) == 0 {
		close(s.done)
		return s
	}
	sc, err := metrics.NewScraper(metrics.ScraperOptions{Endpoints: r.spec.MetricsURLs, Interval: r.o.ScrapeInterval})
	if err != nil {
		s.err = err
		close(s.done)
		return s
	}
	s.scraper = sc
	go func() {
		defer close(s.done)
		s.res, s.err = sc.Run(ctx)
	}()
	return s
}

// finish takes the final sample and returns what was scraped (nil when
// nothing was).
func (s *scrapeRun) finish() *metrics.ScrapeResult {
	if s.scraper != nil {
		s.scraper.Stop()
	}
	<-s.done
	return s.res
}

// finishResult checks acceptance length, aggregates the artifacts into the
// result JSON and validates them, each as its own stage. Aggregation runs
// even when the client failed, as InferenceX does, so partial artifacts
// still give a result; validation then says whether it counts.
func (r *runner) finishResult(scraped *metrics.ScrapeResult) {
	ctx := context.Background() // these stages only read local files
	// The artifacts are read once, by the first stage that needs them.
	inputs := sync.OnceValues(func() (*result.Inputs, error) {
		return result.LoadInputs(r.o.OutDir, r.spec.Facts.HFHubCache)
	})
	var al *metrics.ALCheck
	if r.spec.GoldenAL == nil && r.spec.Facts.SpecDecoding == "none" {
		r.skip(StageAcceptance, "no speculative decoding")
	} else {
		r.stage(ctx, StageAcceptance, nil, func() error {
			al = r.acceptance(scraped, inputs)
			r.mu.Lock()
			r.rec.Acceptance = al
			r.mu.Unlock()
			r.progress("acceptance length: " + al.String())
			switch {
			case al.Verdict == metrics.ALFail:
				return errors.New(al.Reason)
			case al.Verdict == metrics.ALNotMeasured && r.spec.GoldenAL != nil:
				return fmt.Errorf("acceptance length not measured (golden %.3f): %s", *r.spec.GoldenAL, al.Reason)
			}
			return nil
		})
	}
	var verdict *result.Verdict
	var verdictErr error
	var j judgement // the point's judgement, made by the aggregate stage
	var powerOut *power.Outcome
	r.stage(ctx, StageAggregate, nil, func() error {
		in, err := inputs()
		if err != nil {
			return err
		}
		res, err := result.Aggregate(in, r.spec.Facts)
		if err != nil {
			return err
		}
		res.AcceptanceLength = al
		if scraped != nil {
			res.ScrapeHealth = scraped.Health()
			r.mu.Lock()
			r.rec.ScrapeHealth = res.ScrapeHealth
			r.mu.Unlock()
		}
		// Validate before writing, so the result says whether it counts.
		v, err := result.Validate(r.spec.ArtifactDir, result.ValidateOptions{
			FailedRequestThreshold: r.o.FailedRequestThreshold,
			RequiredMetricPrefix:   r.spec.RequiredMetricPrefix,
		})
		if err != nil {
			verdictErr = err
		} else {
			verdict = &v
		}
		j = judgement{failedStages: r.failedStages(), al: al, verdict: verdict, verdictErr: verdictErr,
			artifacts: result.CheckArtifacts(in, askedOf(r.spec.Facts, r.clientArgv(), r.spec.ClientInfo)), official: r.spec.Official, submission: res.Submission}
		if r.spec.Power != nil {
			out, reason := r.adaptPower(res, in.Records)
			powerOut = &out
			j.power = reason
		}
		if sim := r.spec.Simulation; sim != nil {
			s := *sim
			s.ScheduleLag = r.lag
			res.Simulated, res.Simulation = true, &s
			r.mu.Lock()
			r.rec.Simulation = &s // with its lag, for sweep result aggregate to judge it again
			r.mu.Unlock()
			if w, invalid := lagVerdict(r.lag, s.TimeScale); w != "" {
				r.warn(w)
				j.lag = invalid
			}
		}
		res.SetValidity(j.reasons())
		res.Probe = r.spec.Probe
		res.Client = r.spec.ClientInfo.Stamped(in.Summary)
		path := result.Path(r.o.OutDir, r.spec.Name)
		if err := result.WriteResult(path, res); err != nil {
			return err
		}
		r.mu.Lock()
		r.rec.ResultFile = path
		r.mu.Unlock()
		return nil
	})
	r.stage(ctx, StageValidate, nil, func() error {
		if verdict == nil && verdictErr == nil {
			// Aggregation failed before validating: validate on its own.
			v, err := result.Validate(r.spec.ArtifactDir, result.ValidateOptions{
				FailedRequestThreshold: r.o.FailedRequestThreshold,
				RequiredMetricPrefix:   r.spec.RequiredMetricPrefix,
			})
			verdict, verdictErr = &v, err
		}
		if verdictErr != nil {
			return verdictErr
		}
		v := *verdict
		r.mu.Lock()
		r.rec.Validation = &v
		r.mu.Unlock()
		if !v.Valid {
			if p := r.spec.RequiredMetricPrefix; p != "" && !strings.Contains(v.Reason, p) && strings.Contains(v.Reason, "server metrics") {
				return fmt.Errorf("%s (the engine must export %q metrics)", v.Reason, p)
			}
			return errors.New(v.Reason)
		}
		if rs := j.validateReasons(); len(rs) > 0 {
			// InferenceX's validator reads only the summary's counts;
			// the result is invalid for these too, so the stage fails.
			return errors.New(strings.Join(rs, "; "))
		}
		return nil
	})
	r.powerStage(ctx, powerOut)
}

// powerStage records the power lane's verdict: failed when REQUIRE_POWER
// and the telemetry is invalid, skipped when the lane is off or the
// aggregation failed before it.
func (r *runner) powerStage(ctx context.Context, out *power.Outcome) {
	switch {
	case r.spec.Power == nil:
		return
	case out == nil:
		r.skip(StagePower, "no aggregate result to patch")
		return
	}
	r.stage(ctx, StagePower, nil, func() error {
		if out.Valid {
			m := out.Metrics
			r.progress(fmt.Sprintf("power: valid, %.1f W per GPU, %.4f J per output token", m.AvgPowerW, m.JoulesPerOutputToken))
			return nil
		}
		msg := "power telemetry invalid: " + strings.Join(out.Explained(), ", ")
		hint := allocatedHint(r.spec.Power, *out)
		if out.ExitCode != 0 {
			return errors.New(msg + " (REQUIRE_POWER)" + hint)
		}
		r.progress(msg + " (best effort; see " + power.ValidationFile + ")" + hint)
		return nil
	})
}

// allocatedHint is the fix sweep offers when a single-node point's
// telemetry is invalid as InferenceX's adapter judges it by default
// (power.Outcome): "; " and AllocatedFix's. It is "" for any other
// outcome, a point already integrating only its GPUs and a disaggregated
// point.
func allocatedHint(ps *PowerSpec, out power.Outcome) string {
	if ps == nil || ps.AllocatedGPUs || len(ps.Nodes) > 0 {
		return ""
	}
	if fix := AllocatedFix(out); fix != "" {
		return "; " + fix
	}
	return ""
}

// AllocatedFix is the fix for a measurement invalid only because its
// point shares its node (power.Outcome.SharesNode: a TP4 point on an
// 8-GPU node, expected_gpu_count_mismatch with GPUs the point does not
// use), which integrating only the point's GPUs (PowerGPUsAllocated)
// makes valid: "--power-gpus allocated (sweep run, discover, official)
// or SWEEP_POWER_GPUS=allocated integrates only the point's 4 GPUs"; ""
// for any other outcome.
func AllocatedFix(out power.Outcome) string {
	if !out.SharesNode() {
		return ""
	}
	return fmt.Sprintf("--power-gpus %s (sweep run, discover, official) or %s=%s integrates only the point's %d GPUs",
		PowerGPUsAllocated, EnvPowerGPUs, PowerGPUsAllocated, out.GPUs.Expected)
}

// clientArgv is the argv of the point's load client (nil for an eval).
func (r *runner) clientArgv() []string {
	if r.spec.Client == nil {
		return nil
	}
	return r.spec.Client.Argv
}

// failedStages are the point's stages that failed or were cancelled
// so far, each as a reason its result does not count.
func (r *runner) failedStages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return stageReasons(r.rec.Stages)
}

// acceptance measures AL from the counters the client exported over the
// profiling window; when that export is missing it falls back to sweep's
// own first and last scrape.
func (r *runner) acceptance(scraped *metrics.ScrapeResult, inputs func() (*result.Inputs, error)) *metrics.ALCheck {
	exportPath := filepath.Join(r.spec.ArtifactDir, aiperf.ServerMetricsFile)
	var exportErr error
	if _, err := os.Stat(exportPath); err == nil {
		var exp *aiperf.ServerMetricsExport
		if in, ierr := inputs(); ierr == nil && in.ServerMetrics != nil {
			exp = in.ServerMetrics // the aggregate stage reuses what was read here
		} else {
			exp, err = aiperf.ReadServerMetricsFile(exportPath)
		}
		if err == nil {
			if c := result.CheckALFromExport(exp, r.spec.GoldenAL, r.o.ALTolerance); c.Verdict != metrics.ALNotMeasured {
				return c
			} else {
				exportErr = errors.New(c.Reason)
			}
		} else {
			exportErr = err
		}
	} else {
		exportErr = err
	}
	var failed []string // the scraper's endpoints with fewer than two good scrapes
	if scraped != nil {
		health := scraped.Health()
		for i, ep := range scraped.Endpoints {
			counters, err := ep.ALCounters()
			if err != nil {
				if h := health.Endpoints[i]; h.Successes < 2 {
					failed = append(failed, h.String())
				}
				continue
			}
			return metrics.CheckAL("scrape:"+ep.URL, counters, r.spec.GoldenAL, r.o.ALTolerance)
		}
	}
	c := metrics.CheckAL(aiperf.ServerMetricsFile, metrics.ALCounters{}, r.spec.GoldenAL, r.o.ALTolerance)
	c.Reason = fmt.Sprintf("no counters: %v; and no two good scrapes of the engine", exportErr)
	if len(failed) > 0 {
		// The scraper's last error is often the cause of both (a /metrics
		// page that does not parse).
		c.Reason += ": " + strings.Join(failed, "; ")
	}
	return c
}
