package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"sweep/internal/atomicfile"
	"sweep/internal/pyjson"
	"sweep/metrics"
	"sweep/metrics/aiperf"
	"sweep/metrics/power"
	"sweep/metrics/result"
	"sweep/sweep/run"
)

type resultAggregateOptions struct {
	IO        *IOStreams
	ResultDir string
	EnvFile   string  // JSON object of InferenceX variables; "" = process environment
	Out       string  // file to write; "" = stdout (unless OutDir)
	OutDir    string  // write OutDir/$RESULT_FILENAME.json
	GoldenAL  float64 // 0 = none
	ALTol     float64
	HasGolden bool
	HasALTol  bool // --al-tolerance given (else run.json's, else the default)
}

func newResultAggregateCmd(ios *IOStreams, runF func(context.Context, *resultAggregateOptions) error) *Command {
	if runF == nil {
		runF = resultAggregateRun
	}
	return &Command{
		Name:  "aggregate",
		Args:  "RESULT_DIR",
		Short: "Write the aggregate result JSON of RESULT_DIR (InferenceX's schema and maths)",
		Long:  helpText("result_aggregate"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &resultAggregateOptions{IO: ios}
			fs := pflag.NewFlagSet("aggregate", pflag.ContinueOnError)
			fs.StringVar(&o.EnvFile, "env-file", "", "JSON object of InferenceX variables (default: the process environment)")
			fs.StringVar(&o.Out, "out", "", "write the JSON to this file (atomically) instead of stdout")
			fs.StringVar(&o.OutDir, "out-dir", "", "write the JSON to DIR/$RESULT_FILENAME.json, where InferenceX puts it")
			fs.Float64Var(&o.GoldenAL, "golden-al", 0, "the recipe's golden acceptance length; adds the AL verdict")
			fs.Float64Var(&o.ALTol, "al-tolerance", metrics.DefaultALTolerance, "absolute tolerance of the AL check")
			return fs, func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return flagErrorf("result aggregate: want exactly one RESULT_DIR, got %d arguments", len(args))
				}
				if o.Out != "" && o.OutDir != "" {
					return flagErrorf("result aggregate: --out and --out-dir are exclusive")
				}
				o.HasGolden = fs.Changed("golden-al")
				o.HasALTol = fs.Changed("al-tolerance")
				if o.HasGolden && o.GoldenAL <= 0 {
					return flagErrorf("result aggregate: --golden-al %g: want a positive number", o.GoldenAL)
				}
				if o.ALTol <= 0 {
					return flagErrorf("result aggregate: --al-tolerance %g: want a positive number", o.ALTol)
				}
				o.ResultDir = args[0]
				return runF(ctx, o)
			}
		},
	}
}

func resultAggregateRun(_ context.Context, o *resultAggregateOptions) error {
	abs, err := filepath.Abs(o.ResultDir)
	if err != nil {
		return err
	}
	facts, sim, vopts, err := aggregateFacts(o, abs)
	if err != nil {
		return err
	}
	if o.HasGolden {
		facts.GoldenAL = &o.GoldenAL
	}
	if o.HasALTol || facts.ALTolerance == 0 {
		facts.ALTolerance = o.ALTol
	}
	in, err := result.LoadInputs(o.ResultDir, facts.HFHubCache)
	if err != nil {
		return fmt.Errorf("aggregate %s: %w", o.ResultDir, err)
	}
	res, err := result.Aggregate(in, facts)
	if err != nil {
		return fmt.Errorf("aggregate %s: %w", o.ResultDir, err)
	}
	if facts.GoldenAL != nil || (facts.SpecDecoding != "" && facts.SpecDecoding != "none") {
		res.AcceptanceLength = result.CheckALFromExport(in.ServerMetrics, facts.GoldenAL, facts.ALTolerance)
	}
	// The result says whether it counts, as sweep run's results do.
	var reasons []string
	if al := res.AcceptanceLength; al != nil && al.Verdict == metrics.ALFail {
		reasons = append(reasons, "acceptance length: "+al.Reason)
	}
	v, verr := result.Validate(aiperf.ResolveArtifactDir(abs), vopts)
	switch {
	case verr != nil:
		reasons = append(reasons, "validation: "+verr.Error())
	case !v.Valid:
		reasons = append(reasons, "validation: "+v.Reason)
	}
	powerErr := aggregatePower(o, abs, facts, res, &reasons)
	res.SetValidity(reasons)
	if sim != nil {
		res.Simulated, res.Simulation = true, sim
	}
	if rec, ok := run.ReadRecordFile(abs); ok && o.EnvFile == "" && rec.Facts != nil {
		res.Client = rec.Client.Stamped(in.Summary) // the client run.json recorded
	}
	data, err := result.MarshalResult(res)
	if err != nil {
		return err
	}
	out := o.Out
	if o.OutDir != "" {
		if err := result.CheckResultFilename(facts.ResultFilename); err != nil {
			return fmt.Errorf("--out-dir: %w", err)
		}
		out = result.Path(o.OutDir, facts.ResultFilename)
	}
	if out == "" {
		_, err = o.IO.Out.Write(data)
		printAggregateSummary(o.IO, res)
		return errors.Join(err, powerErr)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	if err := atomicfile.Write(out, data, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(o.IO.ErrOut, "Saved aggregated agentic result to %s\n", out)
	printAggregateSummary(o.IO, res)
	return powerErr
}

// aggregatePower runs InferenceX's power lane on the result when the run
// had it (ENABLE_AGENTX_POWER on, single node, the offset file the recipe
// writes with the monitor present): the power keys go into res, the
// sidecars into resultDir. Under REQUIRE_POWER invalid telemetry adds a
// reason and makes the command exit 1 once the result is written.
func aggregatePower(o *resultAggregateOptions, resultDir string, facts result.RunFacts, res *result.Result, reasons *[]string) error {
	lane := power.LaneFromEnv(os.LookupEnv, facts.Multinode)
	if !lane.Enabled || !power.LaneRan(resultDir) {
		return nil
	}
	expected := power.ExpectedGPUs(facts.TP, facts.PP, facts.PCP)
	fields, out := power.AdaptResult(power.Options{
		ResultDir: resultDir, AggregateName: facts.ResultFilename + ".json", ExpectedGPUs: &expected,
		RequirePower: lane.Require, Stdout: o.IO.ErrOut, Stderr: o.IO.ErrOut,
	})
	res.Fields = fields
	if out.ExitCode == 0 {
		return nil
	}
	msg := "power: " + strings.Join(out.Reasons, ", ") + " (REQUIRE_POWER)"
	*reasons = append(*reasons, msg)
	return &exitCodeError{Code: out.ExitCode, Err: errors.New(msg)}
}

// aggregateFacts picks the run facts of resultDir (absolute): --env-file,
// else the run.json sweep run wrote there (its facts, simulation and
// validation settings), else the process environment.
func aggregateFacts(o *resultAggregateOptions, resultDir string) (result.RunFacts, *result.Simulation, result.ValidateOptions, error) {
	vopts := result.ValidateOptions{FailedRequestThreshold: result.DefaultFailedRequestThreshold}
	var env map[string]string
	switch rec, ok := run.ReadRecordFile(resultDir); {
	case o.EnvFile != "":
		outDir := o.OutDir
		if outDir == "" && o.Out != "" {
			outDir = filepath.Dir(o.Out)
		}
		var err error
		if env, err = result.EnvFromFile(o.EnvFile, map[string]string{"RESULT_DIR": resultDir, "AGENTIC_OUTPUT_DIR": outDir}); err != nil {
			return result.RunFacts{}, nil, vopts, err
		}
	case ok && rec.Facts != nil:
		facts := *rec.Facts
		if err := facts.Check(); err != nil {
			return facts, nil, vopts, fmt.Errorf("run facts in %s: %w", filepath.Join(resultDir, run.RecordFile), err)
		}
		if rec.ValidateOptions != nil {
			vopts = *rec.ValidateOptions
		}
		fmt.Fprintf(o.IO.ErrOut, "run facts: from %s (--env-file overrides)\n", filepath.Join(resultDir, run.RecordFile))
		return facts, rec.Simulation, vopts, nil
	default:
		env = result.ProcessEnv()
	}
	facts, err := result.FromEnv(env)
	if err != nil {
		return facts, nil, vopts, fmt.Errorf("run facts: %w", err)
	}
	return facts, nil, vopts, nil
}

// printAggregateSummary prints InferenceX's summary lines to stderr (from
// the rounded values, as InferenceX prints them), then our own.
func printAggregateSummary(ios *IOStreams, r *result.Result) {
	w := ios.ErrOut
	a := r.RequestAccounting
	fmt.Fprintf(w, "  Requests: %d successful / %d total (%d warmup, %d error dropped)\n",
		r.NumRequestsSuccessful, a.RecordsTotal, a.RecordsWarmupDropped, a.RecordsErrorDropped)
	if q := r.RequestMetrics.QPS; q.Mean != nil {
		fmt.Fprintf(w, "  QPS: mean=%.2f p75=%.2f p95=%.2f\n", rounded(q.Mean), rounded(q.P75), rounded(q.P95))
	}
	pct := func(label string, v *pyjson.Rounded) {
		if v != nil {
			fmt.Fprintf(w, "  %s%.1f%%\n", label, rounded(v)*100)
		}
	}
	c, kv := r.ServerMetrics.Cache, r.ServerMetrics.KVCache
	pct("GPU cache hit rate: ", c.GPUCacheHitRate)
	pct("CPU/offload cache hit rate: ", c.CPUCacheHitRate)
	pct("External cache hit rate: ", c.ExternalCacheHitRate)
	pct("GPU KV cache usage:  ", kv.GPUUsagePct)
	if kv.GPUTotalTokens != nil {
		fmt.Fprintf(w, "  GPU KV cache capacity: %.0f tokens\n", rounded(kv.GPUTotalTokens))
	}
	pct("Theoretical cache hit rate: ", r.RequestMetrics.Cache.TheoreticalCacheHitRate)
	if pg := r.RequestMetrics.Throughput.PerGPU; pg != nil && pg.TotalTputTPS != nil {
		fmt.Fprintf(w, "  Throughput per GPU: %.0f tok/s\n", rounded(pg.TotalTputTPS))
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warn)
	}
	if al := r.AcceptanceLength; al != nil {
		switch {
		case al.Measured == nil:
			fmt.Fprintf(w, "  Acceptance length: not measured (%s)\n", al.Reason)
		case al.Golden == nil:
			fmt.Fprintf(w, "  Acceptance length: %.3f (no golden AL given)\n", float64(*al.Measured))
		default:
			fmt.Fprintf(w, "  Acceptance length: %.3f vs golden %.2f ± %.2f: %s\n",
				float64(*al.Measured), float64(*al.Golden), float64(al.Tolerance), al.Verdict)
		}
	}
}

// rounded is the value as the result JSON holds it.
func rounded(v *pyjson.Rounded) float64 {
	if v == nil {
		return 0
	}
	var f float64
	b, err := v.MarshalJSON()
	if err == nil {
		f, err = strconv.ParseFloat(string(b), 64)
	}
	if err != nil {
		return float64(*v)
	}
	return f
}
