package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"sweep/internal/usage"
	"sweep/sweep/gha"
	"sweep/sweep/run"
)

// ciRunJobOptions are the inputs of "sweep ci run-job".
type ciRunJobOptions struct {
	IO *IOStreams
	// Job is a file holding one job of "sweep ci matrix".
	Job string
	// GitHubOutput is $GITHUB_OUTPUT: the job's result-filename is
	// appended to it ("" : not written).
	GitHubOutput string
	// RunJob says how this runner runs the job's points.
	gha.RunJob
	// Run is "sweep run": tests replace it.
	Run func(ctx context.Context, args []string) error
}

func newCIRunJobCmd(ios *IOStreams, runF func(context.Context, *ciRunJobOptions) error) *Command {
	if runF == nil {
		runF = ciRunJobRun
	}
	return &Command{
		Name:  "run-job",
		Short: "Run one job of the PR-label sweep on this runner",
		Long:  helpText("ci_runjob"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &ciRunJobOptions{IO: ios}
			fs := pflag.NewFlagSet("ci run-job", pflag.ContinueOnError)
			fs.StringVar(&o.Job, "job", "", "`FILE` holding one job of \"sweep ci matrix\"")
			fs.StringVar(&o.RunnerName, "runner-name", "", "this runner's name (runner.name), for RESULT_FILENAME")
			fs.StringVar(&o.Out, "out", "", "output directory")
			fs.StringVar(&o.GitHubOutput, "github-output", "", "append result-filename=... to this file ($GITHUB_OUTPUT)")
			fs.BoolVar(&o.Force, "force", false, "replace what a point's output directory holds: another point's files, or this point made otherwise (sweep run --force)")
			fs.BoolVar(&o.Simulate, "simulate", false, "run against sweep's simulated engine")
			fs.StringSliceVar(&o.ConfigFiles, "config-files", nil, "master config files, comma separated (default: the built-in ones)")
			fs.StringVar(&o.RunnerConfig, "runner-config", "", "runners.yaml (default: the built-in one)")
			fs.BoolVar(&o.OnHost, "on-host", false, "start a real engine on this host instead of through the runner's launcher (sweep run --launch)")
			fs.StringArrayVar(&o.Site, "site", nil, "change a site fact of the runner profile, key=value (sweep run --site); repeatable")
			fs.StringVar(&o.Inferencex, "inferencex", "", "an InferenceX checkout whose aiperf the agentic points install and run in the image as their load client (sweep run --inferencex; eval-only points run lm-eval)")
			return fs, func(ctx context.Context, args []string) error {
				if len(args) > 0 {
					return flagErrorf("unexpected arguments %q", args)
				}
				if o.Job == "" || o.Out == "" || o.RunnerName == "" {
					return flagErrorf("--job, --runner-name and --out are required")
				}
				return runF(ctx, o)
			}
		},
	}
}

// ciRunJobRun runs the job's points with "sweep run".
func ciRunJobRun(ctx context.Context, o *ciRunJobOptions) error {
	job, row, err := gha.ReadJob(o.Job)
	if _, ok := errors.AsType[*gha.JobError](err); ok {
		return err
	}
	if err != nil {
		return inputError(err)
	}
	if o.GitHubOutput != "" {
		if err := gha.CheckOutput(o.GitHubOutput); err != nil {
			return flagErrorf("--github-output %s: %v", o.GitHubOutput, err)
		}
	}
	runFn := o.Run
	if runFn == nil {
		runFn = func(ctx context.Context, args []string) error {
			return dispatch(ctx, o.IO, newRunCmd(o.IO, nil), []string{"sweep", "run"}, args)
		}
	}
	runs, err := o.Runs(job, row)
	if err != nil {
		return fmt.Errorf("--job %s: %w", o.Job, err)
	}
	var errs []error
	for i, p := range runs {
		fmt.Fprintf(o.IO.ErrOut, "job point %d/%d: %s conc %d -> %s\n", i+1, len(runs), job.ConfigKey, p.Conc, p.Name)
		err := runFn(ctx, p.Args)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			errs = append(errs, fmt.Errorf("point conc %d: %w", p.Conc, err))
		}
		// A point refused before it ran (its --out holding something
		// else) wrote no result: none is named for the upload.
		if _, refused := errors.AsType[*usage.Error](err); o.GitHubOutput != "" && i == 0 && !refused {
			// The name the run actually wrote, when it got that far.
			rf := p.Name
			if name := run.ResultName(p.Out); name != "" {
				rf = name
			}
			if err := gha.AppendOutput(o.GitHubOutput, "result-filename", rf); err != nil {
				return fmt.Errorf("--github-output: %w", err)
			}
		}
	}
	return errors.Join(errs...)
}
