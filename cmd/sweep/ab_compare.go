package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"sweep/internal/cli"
	"sweep/sweep/abgate"
)

// abCompareOptions are the inputs of "sweep ab compare".
type abCompareOptions struct {
	IO     *IOStreams
	Format string // table or json
	abgate.Options
}

// newABCompareCmd binds "sweep ab compare" flags to an abCompareOptions and
// runs runF with it (abCompareRun when runF is nil).
func newABCompareCmd(ios *IOStreams, runF func(context.Context, *abCompareOptions) error) *Command {
	if runF == nil {
		runF = abCompareRun
	}
	return &Command{
		Name:  "compare",
		Short: "Decide PASS, REGRESSION, INCONCLUSIVE or INCOMPLETE from two arms' BFCL project roots",
		Long:  helpText("ab_compare"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &abCompareOptions{IO: ios}
			var since, cats string
			fs := pflag.NewFlagSet("ab compare", pflag.ContinueOnError)
			fs.StringSliceVar(&o.A, "a", nil, "arm A's BFCL project roots, comma separated (replicates)")
			fs.StringSliceVar(&o.B, "b", nil, "arm B's BFCL project roots, comma separated (replicates)")
			fs.StringVar(&o.Model, "model", "", "BFCL registry name of the model, e.g. Qwen/Qwen3.6-27B-FC")
			fs.StringVar(&cats, "categories", "", "comma list of BFCL v4 categories or collections, e.g. non_live,live,multi_turn")
			cli.FloatVar(fs, &o.Tolerance, "tolerance", abgate.DefaultTolerance, "tolerated drop of the weighted accuracy, in points, in (0, 100)", accuracyPoints)
			fs.StringVar(&since, "since", "", "RFC 3339 time: result and score files modified before it are stale")
			fs.BoolVar(&o.Read.AllowPartial, "allow-partial", false, "accept categories with fewer cases than BFCL's dataset")
			fs.StringVar(&o.Format, "format", "table", "output format: table (Markdown) or json")
			fs.Uint64Var(&o.Seed, "seed", abgate.DefaultSeed, "bootstrap seed (the same seed gives the same interval)")
			var calibration string
			fs.StringVar(&calibration, "calibration", "", "A/A calibration (calibration.json of sweep ab calibrate): an INCONCLUSIVE verdict's replicate advice uses its flip rates")
			return fs, func(ctx context.Context, args []string) error {
				if len(args) != 0 {
					return flagErrorf("ab compare takes no arguments, got %q", args)
				}
				for _, f := range []struct {
					name string
					set  bool
				}{{"--a", len(o.A) > 0}, {"--b", len(o.B) > 0}, {"--model", o.Model != ""}, {"--categories", cats != ""}} {
					if !f.set {
						return flagErrorf("%s is required", f.name)
					}
				}
				if err := abgate.CheckRoots(abgate.ArmRoots{Name: "--a", Roots: o.A}, abgate.ArmRoots{Name: "--b", Roots: o.B}); err != nil {
					return &FlagError{Err: err}
				}
				var err error
				if o.Categories, err = abgate.ExpandCategories(strings.Split(cats, ",")); err != nil {
					return flagErrorf("--categories: %v", err)
				}
				if since != "" {
					if o.Read.Since, err = time.Parse(time.RFC3339, since); err != nil {
						return flagErrorf("--since %q: want an RFC 3339 time such as 2026-08-22T07:17:00Z", since)
					}
				}
				if o.Format != "table" && o.Format != "json" {
					return flagErrorf("--format %q: want table or json", o.Format)
				}
				if o.Seed == 0 {
					return flagErrorf("--seed 0: want a positive seed")
				}
				if calibration != "" {
					if o.Calibration, err = abgate.ReadCalibration(calibration); err != nil {
						return flagErrorf("--calibration: %v", err)
					}
					if o.Calibration.Model != o.Model {
						return flagErrorf("--calibration %s is of model %q, not --model %q", calibration, o.Calibration.Model, o.Model)
					}
					if s := o.Calibration.Simulated; s != nil && *s {
						// The roots do not say whether they were simulated.
						fmt.Fprintf(ios.ErrOut, "warning: --calibration %s is a simulated A/A calibration (sweep ab calibrate --simulate): its flip rates are the simulated case model's; give it only with the roots of simulated runs\n", calibration)
					}
				}
				return runF(ctx, o)
			}
		},
	}
}

// abCompareRun compares, prints the report and maps the verdict to the
// exit code; a comparison that draws no verdict (a report that cannot be
// written) exits 2 (abNoVerdict).
func abCompareRun(ctx context.Context, o *abCompareOptions) (err error) {
	defer func() { err = abNoVerdict(err) }()
	rep, err := abgate.Compare(ctx, o.Options)
	if err != nil {
		return err
	}
	if o.Format == "json" {
		err = abgate.WriteJSON(o.IO.Out, rep)
	} else {
		err = abgate.WriteTable(o.IO.Out, rep)
	}
	if err != nil {
		return err
	}
	return abVerdictError(o.IO, "ab compare", o.Format, rep)
}
