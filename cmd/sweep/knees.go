package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"sweep/internal/cli"
	"sweep/sweep/campaign"
	"sweep/sweep/knee"
)

// kneesOptions are the inputs of "sweep knees".
type kneesOptions struct {
	IO     *IOStreams
	Dir    string
	Format string // table or json
	knee.Options
}

// newKneesCmd binds "sweep knees" flags to a kneesOptions and runs runF
// with it (kneesRun when runF is nil).
func newKneesCmd(ios *IOStreams, runF func(context.Context, *kneesOptions) error) *Command {
	if runF == nil {
		runF = kneesRun
	}
	return &Command{
		Name:  "knees",
		Args:  "RESULTS_DIR",
		Short: "Find the throughput knee of every arm in a directory of sweep results",
		Long:  helpText("knees"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &kneesOptions{IO: ios, Options: knee.Options{Metric: knee.MetricTotal}}
			fs := pflag.NewFlagSet("knees", pflag.ContinueOnError)
			fs.StringVar(&o.Format, "format", "table", "output format: table or json")
			cli.FloatVar(fs, &o.Threshold, "threshold", 0.9, "the knee reaches this fraction of the arm's peak throughput, in (0, 1)", kneeThreshold)
			fs.Var(&o.Metric, "metric", "throughput per GPU to use: total (input+output tokens) or output")
			return fs, func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return flagErrorf("knees takes one directory, got %d arguments", len(args))
				}
				o.Dir = args[0]
				if o.Format != "table" && o.Format != "json" {
					return flagErrorf("--format %q: want table or json", o.Format)
				}
				return runF(ctx, o)
			}
		},
	}
}

// kneesRun reads o.Dir and prints one verdict per arm, the points they
// leave out (its sweep's failed points with no result among them), and
// the points its sweep has not finished when its journal says it has
// not (campaign.ReadKnees). A directory with nothing to show (campaign.
// Knees.Empty) exits 2, as sweep report's does.
func kneesRun(ctx context.Context, o *kneesOptions) error {
	k, err := campaign.ReadKnees(ctx, o.Dir, o.Options)
	if err != nil {
		return inputError(err) // exit 2, as sweep report's
	}
	if k.Empty() {
		if s := k.Incomplete(); s != "" {
			fmt.Fprintf(o.IO.ErrOut, "incomplete: %s\n", s)
		}
		return inputError(errNoResults(o.Dir)) // exit 2, as sweep report's
	}
	if o.Format == "json" {
		return knee.WriteJSON(o.IO.Out, k.Results)
	}
	if len(k.Results) == 0 {
		// Only failed points: listed, as sweep report lists them.
		fmt.Fprintln(o.IO.ErrOut, errNoResults(o.Dir))
		if err := k.WriteLeftOut(o.IO.ErrOut); err != nil {
			return err
		}
		if s := k.Incomplete(); s != "" {
			fmt.Fprintf(o.IO.ErrOut, "incomplete: %s\n", s)
		}
		return nil
	}
	return k.WriteTable(o.IO.Out)
}
