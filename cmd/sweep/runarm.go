package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/pflag"

	"sweep/sweep/campaign"
	"sweep/sweep/launch"
)

// runArmOptions are the inputs of "sweep run-arm".
type runArmOptions struct {
	IO     *IOStreams
	Job    string // the arm job file
	Events string // where the events go
}

func newRunArmCmd(ios *IOStreams) *Command {
	return &Command{
		Name:  "run-arm",
		Short: "Run one arm's planned points on this node (internal: a Slurm job of discover/official --executor slurm)",
		Long:  helpText("runarm"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &runArmOptions{IO: ios}
			fs := pflag.NewFlagSet("run-arm", pflag.ContinueOnError)
			fs.StringVar(&o.Job, "job", "", "the arm job file (required)")
			fs.StringVar(&o.Events, "events", "", "the events file to append to (required)")
			return fs, func(ctx context.Context, args []string) error {
				switch {
				case len(args) > 0:
					return flagErrorf("run-arm takes no arguments, got %q", args)
				case o.Job == "" || o.Events == "":
					return flagErrorf("run-arm needs --job and --events")
				}
				return runArm(ctx, o)
			}
		},
	}
}

func runArm(ctx context.Context, o *runArmOptions) error {
	aj, err := campaign.ReadArmJob(o.Job)
	if err != nil {
		return err
	}
	// The launcher's per-job variables reach the engine and the client
	// (they inherit this process's environment).
	env, err := aj.JobEnv(os.Getenv("SLURM_JOB_ID"))
	if err != nil {
		return err
	}
	client, err := aj.JobClient(os.Getenv("SLURM_JOB_ID"))
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if err := os.Setenv(k, env[k]); err != nil {
			return err
		}
		fmt.Fprintf(o.IO.ErrOut, "job env: %s=%s\n", k, env[k])
	}
	dir := filepath.Dir(filepath.Dir(o.Job)) // DIR/slurm/armNN-tK.json
	setup, po := aj.Settings.Runner()
	log, err := campaign.CreateEventLog(o.Events)
	if err != nil {
		return err
	}
	defer log.Close()
	job, armOpts := aj.Job()
	var logErr error
	obs := func(r campaign.Record) {
		fmt.Fprintf(o.IO.ErrOut, "%s %s %s %s\n", r.Event, r.Point, r.Status, r.Error)
		if err := log.Append(r); err != nil && logErr == nil {
			logErr = err
		}
	}
	var setupErr error
	if client != nil {
		// Once per job, before the engine starts: its aiperf measures
		// every point of the arm.
		setup.Aiperf, setupErr = launch.MakeClient(ctx, *client, launch.ExecSteps{Out: o.IO.ErrOut}, func(line string) { fmt.Fprintln(o.IO.ErrOut, line) })
	}
	if setupErr != nil {
		setupErr = fmt.Errorf("client environment: %w", setupErr)
		campaign.FailJob(job, obs, setupErr.Error())
	} else {
		backend := &campaign.RunBackend{Dir: dir, Setup: setup, Options: po}
		campaign.RunArm(ctx, job, nil, backend, obs, armOpts)
	}
	if logErr != nil {
		return fmt.Errorf("events %s: %w", o.Events, logErr)
	}
	if setupErr != nil {
		return &exitCodeError{Code: exitError, Err: setupErr}
	}
	return ctx.Err()
}
