package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"sweep/internal/plural"
	"sweep/sweep/abgate"
	"sweep/sweep/abgate/leg"
)

// newABRunCmd binds "sweep ab run" flags to an abRunOptions and runs runF
// with it (abRunRun when runF is nil).
func newABRunCmd(ios *IOStreams, runF func(context.Context, *abRunOptions) error) *Command {
	if runF == nil {
		runF = abRunRun
	}
	return &Command{
		Name:  "run",
		Short: "Run an A/B leg: both arms' servers, bfcl per replicate in fresh roots, then compare",
		Long: `Run one accuracy A/B leg declared in configs/ab/<LEG>.yaml (a shipped leg by
name, or any leg file by path): for each arm (both at once on their own GPUs
when the leg's arm-mode is concurrent, else arm a, then arm b), start the
arm's server (the recipe point of its config key, or its declared engine,
with its parsers, and the router in front if it declares one), run "bfcl
generate" and "bfcl evaluate" once per replicate in a fresh
BFCL_PROJECT_ROOT against the server, stop the server; then
compare the roots as "sweep ab compare" does and print the report.

bfcl runs with the leg's temperature (0 by default: vLLM clamps positive
temperatures below 0.01 up to 0.01, which is warned about) and always with
--num-threads. The registry entry is written, then verified: per replicate, a
static sitecustomize.py goes into <arm>/bfcl-r<k>-python/, first on the
PYTHONPATH of the bfcl processes, and adds the leg's model (read from
SWEEP_BFCL_REGISTRY_NAME, never written into code) to bfcl_eval's
MODEL_CONFIG_MAPPING with OpenAICompletionsHandler and underscore_to_dot=True;
then "bfcl models" must list it. Nothing is edited in the installed bfcl-eval.
A server that does not start, an entry not written or not listed, bfcl
exiting non-zero or running past --run-timeout is a run-failed problem: the
leg is INCOMPLETE.

--simulate runs the recipes' own commands against sweep's simulated engine
and router, and "sweep sim-bfcl" in place of bfcl: it asks each arm's server
one request per category and writes BFCL's real files from the seeded
per-case model of the leg's simulate section (a per-arm accuracy offset
plants a regression).

Everything lands in --out (default ./ab-runs/<LEG>-<UTC time>; it must not
exist or be empty): <arm>/server/ (logs, server.json), <arm>/bfcl-r<k>/ (the
roots), <arm>/bfcl-r<k>-python/ (the registration), <arm>/bfcl-r<k>-
{models,generate,evaluate}.log, report.md and report.json.

--calibration FILE takes the leg's A/A calibration (the calibration.json of
"sweep ab calibrate LEG"): when the verdict is INCONCLUSIVE, the replicates
it advises come from the flip rates measured between identical runs of arm
A rather than from the differences between the arms, and the note says so.

Exit codes: 0 PASS, 1 REGRESSION, 3 INCONCLUSIVE, 4 INCOMPLETE, 2 usage
(a leg file error names file:line:col and the key), 130 interrupted.

Examples:
  sweep ab run minimaxm3-mi325x-smg --simulate
  sweep ab run minimaxm3-mi325x-smg --simulate --calibration ab-runs/aa/calibration.json
  sweep ab run configs/ab/minimaxm3-mi325x-smg.yaml --out /tmp/ab --run-timeout 5h`,
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &abRunOptions{IO: ios}
			fs := pflag.NewFlagSet("ab run", pflag.ContinueOnError)
			o.bindLegFlags(fs)
			fs.StringVar(&o.Calibration, "calibration", "", "A/A calibration of the leg (calibration.json of sweep ab calibrate): an INCONCLUSIVE verdict's replicate advice uses its flip rates")
			return fs, func(ctx context.Context, args []string) error {
				if err := o.checkLegFlags(fs, "ab run", args); err != nil {
					return err
				}
				return runF(ctx, o)
			}
		},
	}
}

// abRunRun runs the leg, prints the report and maps the verdict to the
// exit code.
func abRunRun(ctx context.Context, o *abRunOptions) error {
	var cal *abgate.Calibration
	if o.Calibration != "" {
		var err error
		if cal, err = abgate.ReadCalibration(o.Calibration); err != nil {
			return &FlagError{Err: fmt.Errorf("--calibration: %w", err)}
		}
	}
	r, err := prepareABLeg(o, "")
	if err != nil {
		return err
	}
	l, p := r.leg, r.plan
	if cal != nil && cal.Model != l.Model {
		return &FlagError{Err: fmt.Errorf("--calibration %s is of model %q, the leg's is %q: calibrate this leg with sweep ab calibrate %s", o.Calibration, cal.Model, l.Model, o.Leg)}
	}
	r.opts.Calibration = cal
	fmt.Fprintf(o.IO.ErrOut, "leg %s (%s): %s, %s per arm, tolerance %.2f points; %s\n  A %s: %s\n  B %s: %s\n  output: %s\n",
		l.Name, l.Model, plural.Count(len(p.Categories), "category", "categories"), plural.Count(l.Replicates, "replicate", "replicates"), l.Tolerance, r.mode,
		p.Arms[0].Name, p.Arms[0].Point.Recipe, p.Arms[1].Name, armDesc(p.Arms[1]), r.out)
	if cal != nil {
		fmt.Fprintf(o.IO.ErrOut, "  A/A calibration: %s\n", cal.Source())
	}
	res, err := leg.Run(ctx, p, r.opts)
	if err != nil {
		return r.legError(ctx, "ab run", err)
	}
	if err := printLegOutput(o.IO, o.Format, "report", res.Table, res.JSON); err != nil {
		return err
	}
	return abVerdictError(o.IO, "ab run "+l.Name, o.Format, res.Report)
}

func armDesc(a leg.Arm) string {
	if a.Point.Router != nil {
		return a.Point.Recipe + " behind " + a.Point.Router.Argv[0] + " " + strings.Join(a.Point.Router.Argv[1:min(3, len(a.Point.Router.Argv))], " ")
	}
	return a.Point.Recipe
}
