package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"sweep/configs"
	"sweep/internal/cli"
	"sweep/recipes"
	"sweep/sweep/agreement"
	"sweep/sweep/run"
)

// simAgreementOptions are the inputs of "sweep sim agreement".
type simAgreementOptions struct {
	IO     *IOStreams
	Inputs matrixInputs
	agreement.Options
}

func newSimAgreementCmd(ios *IOStreams, runF func(context.Context, *simAgreementOptions) error) *Command {
	if runF == nil {
		runF = simAgreementRun
	}
	return &Command{
		Name:  "agreement",
		Args:  "OUT_DIR KEY...",
		Short: "Judge simulated discoveries of config keys against their official windows (by knee, peak and frontier)",
		Long:  helpText("sim_agreement"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &simAgreementOptions{IO: ios}
			fs := pflag.NewFlagSet("agreement", pflag.ContinueOnError)
			fs.BoolVar(&o.RunFrontier, "frontier", false, "run (simulated) the point at its frontier step of each arm that disagrees strictly, into OUT_DIR/KEY.frontier/ (a result there is reused)")
			fs.StringVar(&o.Point.SimCalib, "sim-calibration", "", "with --frontier: the simulated engine's step costs and KV pool per arm from FILE, as the discoveries ran (sweep sim calibrate)")
			// The keys are positional: --config-files takes its files
			// comma-separated or repeated, not as a list of words.
			o.Inputs.bind(fs, cli.NewLists())
			return fs, func(ctx context.Context, args []string) error {
				if len(args) < 2 {
					return flagErrorf("sim agreement takes OUT_DIR and at least one KEY, got %d arguments", len(args))
				}
				o.Dir, o.Keys = args[0], args[1:]
				if err := checkSimCalibration(true, &o.Point.SimCalib, o.IO.ErrOut); err != nil {
					return err
				}
				return runF(ctx, o)
			}
		},
	}
}

// simAgreementRun judges each key's discovery and prints its line (after
// its window provenance, configs.DefaultWindowProvenance), then the
// counts. A frontier point runs as sweep discover --simulate
// --builtin-client runs its points (agentx-fast, virtual clock) with
// sweep run's defaults.
func simAgreementRun(ctx context.Context, o *simAgreementOptions) error {
	g, err := o.Inputs.generator()
	if err != nil {
		return err
	}
	o.Generator = g
	p := &o.Point
	p.Simulate, p.Builtin, p.SimClock, p.TimeScale = true, true, run.ClockVirtual, run.DefaultTimeScale
	p.Plan.Fast, p.Plan.AiperfVersion = true, recipes.DefaultAiperfVersion
	p.Generator, p.FreePort, p.FreePorts = o.Inputs.generator, recipes.FreeRouterPort, recipes.FreePorts
	p.Stdout, p.Stderr = o.IO.ErrOut, o.IO.ErrOut
	if o.Windows, err = configs.DefaultWindowProvenance(); err != nil {
		return err
	}
	tally, err := agreement.Judge(ctx, o.Options, func(k agreement.Key) { fmt.Fprintln(o.IO.Out, k.Line()) })
	if err != nil {
		return err
	}
	for _, l := range tally.Lines() {
		fmt.Fprintln(o.IO.Out, l)
	}
	return nil
}
