package main

import (
	"context"
	"sweep/internal/cli"

	"github.com/spf13/pflag"
)

func newChangelogCmd(ios *IOStreams, runF func(context.Context, *changelogOptions) error) *Command {
	if runF == nil {
		runF = changelogRun
	}
	return &Command{
		Name:  "changelog",
		Batch: true,
		Short: "Turn new perf-changelog.yaml entries into the sweep they ask for, as InferenceX's CI does",
		Long:  helpText("changelog"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &changelogOptions{IO: ios}
			fs := pflag.NewFlagSet("changelog", pflag.ContinueOnError)
			lists := cli.NewLists()
			o.bindSides(fs)
			o.Inputs.bind(fs, lists)
			lists.Strings(fs, &o.BaseConfigFiles, "base-config-files", "the base revision's master configs, for append-only entries (default with --base-ref: read from git)")
			fs.StringVar(&o.BaseRunnerConfig, "base-runner-config", "", "the base revision's runners.yaml, for append-only entries (default with --base-ref: read from git)")
			fs.BoolVar(&o.TrimConc, "trim-conc", false, "keep only the lowest concurrency of each configuration")
			fs.BoolVar(&o.AllEvals, "all-evals", false, "widen every entry's eval selection to all eligible points")
			fs.BoolVar(&o.EvalsOnly, "evals-only", false, "suppress throughput rows of every entry")
			lists.Finish(fs)
			return fs, func(ctx context.Context, args []string) error {
				if err := lists.ParseRest(fs, args); err != nil {
					return err
				}
				if err := o.checkSides(); err != nil {
					return err
				}
				return runF(ctx, o)
			}
		},
	}
}

// changelogRun prints the changelog's sweep to o.IO.Out.
func changelogRun(ctx context.Context, o *changelogOptions) error {
	res, _, err := o.process(ctx)
	if err != nil {
		return err
	}
	b := res.AppendJSON(nil)
	_, err = o.IO.Out.Write(append(b, '\n'))
	return err
}
