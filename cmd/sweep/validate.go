package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"sweep/configs"
	"sweep/internal/plural"
)

// validateOptions are the inputs of "sweep validate".
type validateOptions struct {
	IO            *IOStreams
	ConfigFiles   []string // empty: the embedded master configs
	RunnerConfig  string   // empty: the embedded runners.yaml
	Changelog     string   // empty: ./perf-changelog.yaml when it exists
	ChangelogBase string   // file holding the changelog before the change
	BaseRef       string   // git ref holding the changelog before the change
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
// and returns an error carrying the count when there is any.
func validateRun(ctx context.Context, o *validateOptions) error {
	in, note, err := configs.ValidateFiles{ConfigFiles: o.ConfigFiles, RunnerConfig: o.RunnerConfig, Changelog: o.Changelog,
		ChangelogBase: o.ChangelogBase, BaseRef: o.BaseRef}.Read(ctx)
	if errors.Is(err, configs.ErrNoChangelog) {
		return &FlagError{Err: err}
	}
	if err != nil {
		return err
	}
	rep := configs.Validate(in)
	for _, p := range rep.Problems {
		fmt.Fprintln(o.IO.Out, p)
	}
	if note != "" {
		fmt.Fprintln(o.IO.ErrOut, note)
	}
	if !rep.OK() {
		files := map[string]bool{}
		for _, p := range rep.Problems {
			files[p.File] = true
		}
		return fmt.Errorf("%s in %s", plural.Count(len(rep.Problems), "problem", "problems"), plural.Count(len(files), "file", "files"))
	}
	msg := fmt.Sprintf("ok: %d master configs in %s, %d runner labels", rep.MasterEntries,
		plural.Count(len(in.Masters), "file", "files"), rep.RunnerLabels)
	if in.Changelog != nil {
		msg += fmt.Sprintf(", %d changelog entries (%d new", rep.ChangelogEntries, rep.NewEntries)
		if rep.Corrections > 0 {
			msg += fmt.Sprintf(", %d pr-link corrections", rep.Corrections)
		}
		msg += ")"
	}
	fmt.Fprintln(o.IO.Out, msg)
	return nil
}
