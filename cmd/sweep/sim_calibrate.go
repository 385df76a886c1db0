package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/pflag"

	"sweep/internal/atomicfile"
	"sweep/internal/cli"
	"sweep/internal/plural"
	"sweep/sweep/simfit"
)

// simCalibrateOptions are the inputs of "sweep sim calibrate".
type simCalibrateOptions struct {
	IO     *IOStreams
	Inputs matrixInputs // the configs whose recipes plan an arm's engine command and golden AL
	Dir    string       // results to fit
	Out    string       // the calibration file
}

func newSimCalibrateCmd(ios *IOStreams, runF func(context.Context, *simCalibrateOptions) error) *Command {
	if runF == nil {
		runF = simCalibrateRun
	}
	return &Command{
		Name:  "calibrate",
		Args:  "RESULTS_DIR",
		Short: "Fit the simulated engine's step costs and KV pool per arm to measured results",
		Long:  helpText("sim_calibrate"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &simCalibrateOptions{IO: ios}
			fs := pflag.NewFlagSet("calibrate", pflag.ContinueOnError)
			fs.StringVar(&o.Out, "out", "", "calibration file to write (default RESULTS_DIR/sim-calibration.json)")
			o.Inputs.bind(fs, cli.NewLists())
			return fs, func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return flagErrorf("sim calibrate takes one results directory, got %d arguments", len(args))
				}
				o.Dir = args[0]
				if o.Out == "" {
					o.Out = filepath.Join(o.Dir, "sim-calibration.json")
				}
				return runF(ctx, o)
			}
		},
	}
}

func simCalibrateRun(ctx context.Context, o *simCalibrateOptions) error {
	g, err := o.Inputs.generator()
	if err != nil {
		return err
	}
	planned, err := simfit.PlanArms(g)
	if err != nil {
		fmt.Fprintf(o.IO.ErrOut, "sim calibrate: warning: the configs' arms could not be planned, so results without an engine command or acceptance length beside them are fitted without the recipe's: %v\n", err)
	}
	cal, skipped, err := simfit.FitResults(ctx, o.Dir, simfit.Options{Planned: planned})
	if err != nil {
		return inputError(err) // a results directory that cannot be read: exit 2, as sweep report's
	}
	for _, s := range skipped {
		fmt.Fprintf(o.IO.ErrOut, "sim calibrate: skipped %s\n", s)
	}
	if len(cal.Arms) == 0 {
		return inputError(fmt.Errorf("sim calibrate: no arm under %s could be fitted", o.Dir))
	}
	if err := simfit.CheckOut(o.Out); err != nil {
		return flagErrorf("sim calibrate: %v", err)
	}
	if err := cal.WriteFits(o.IO.Out); err != nil {
		return err
	}
	if err := atomicfile.WriteJSON(o.Out, cal); err != nil {
		return err
	}
	fmt.Fprintf(o.IO.Out, "calibration: %s (%s)\n", o.Out, plural.Count(len(cal.Arms), "arm", "arms"))
	if cal.Simulated {
		fmt.Fprintf(o.IO.ErrOut, "sim calibrate: warning: fitted on simulated results (%s): the calibration reproduces the simulator, not a measured engine; it says \"simulated\": true\n", o.Dir)
	}
	return nil
}
