package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"sweep/configs"
)

// validateOptions are the inputs of "sweep validate": the files to check
// (empty: the embedded configs, ./perf-changelog.yaml when it exists).
type validateOptions struct {
	IO *IOStreams
	configs.ValidateFiles
}

// newValidateCmd binds "sweep validate" flags to a validateOptions and runs
// runF with it (validateRun when runF is nil).
func newValidateCmd(ios *IOStreams, runF func(context.Context, *validateOptions) error) *Command {
	if runF == nil {
		runF = validateRun
	}
	return &Command{
		Name:  "validate",
		Batch: true,
		Short: "Check master configs, runners.yaml and perf-changelog.yaml; report every problem",
		Long:  helpText("validate"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &validateOptions{IO: ios}
			fs := pflag.NewFlagSet("validate", pflag.ContinueOnError)
			fs.StringSliceVar(&o.ConfigFiles, "config-files", nil, "master config files, in order (repeat, comma-separate or list after the flag; default: built-in amd and nvidia masters)")
			fs.StringVar(&o.RunnerConfig, "runner-config", "", "runners.yaml (default: built-in)")
			fs.StringVar(&o.Changelog, "changelog", "", "perf-changelog.yaml to check (default: ./"+configs.DefaultChangelog+" when present)")
			fs.StringVar(&o.ChangelogBase, "changelog-base", "", "the changelog before the change, as a file; enables the append-only rules")
			fs.StringVar(&o.BaseRef, "changelog-base-ref", "", "git ref holding the changelog before the change (the base branch); enables the append-only rules")
			return fs, func(ctx context.Context, args []string) error {
				// "--config-files a.yaml b.yaml" (InferenceX's argparse
				// style): words after the flag are more master files.
				if len(args) > 0 {
					if !fs.Changed("config-files") {
						return flagErrorf("validate takes no arguments, got %q (name master files with --config-files)", args)
					}
					o.ConfigFiles = append(o.ConfigFiles, args...)
				}
				if o.ChangelogBase != "" && o.BaseRef != "" {
					return flagErrorf("--changelog-base and --changelog-base-ref are mutually exclusive")
				}
				return runF(ctx, o)
			}
		},
	}
}

// validateRun loads the files named by o, prints every problem to o.IO.Out
// and returns an error carrying the count when there is any. A file that
// cannot be read or has a problem exits 2 (inputError), as the same file
// does from every command that reads it (matrix, plan, changelog).
func validateRun(ctx context.Context, o *validateOptions) error {
	in, note, err := o.Read(ctx)
	if errors.Is(err, configs.ErrNoChangelog) {
		return &FlagError{Err: err}
	}
	if err != nil {
		return inputError(err)
	}
	rep := configs.Validate(in)
	for _, p := range rep.Problems {
		fmt.Fprintln(o.IO.Out, p)
	}
	if note != "" {
		fmt.Fprintln(o.IO.ErrOut, note)
	}
	if err := rep.Err(); err != nil {
		return inputError(err)
	}
	fmt.Fprintln(o.IO.Out, rep.Summary(in))
	return nil
}
