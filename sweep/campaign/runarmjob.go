package campaign

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"sweep/sweep/launch"
)

// RunArmJob runs the arm job in jobFile on this node (`sweep run-arm`,
// the process of a Slurm job or a runner's container): the launcher's
// per-job variables (for Slurm job jobID) are set in this process's
// environment, which the engine and the client inherit; the arm's client
// environment is made once, before the engine starts; every record is
// appended to eventsFile and printed on progress. A point that fails is
// in the events, not an error; the error is a job that could not run, or
// events that could not be written.
func RunArmJob(ctx context.Context, jobFile, eventsFile, jobID string, progress io.Writer) error {
	aj, err := ReadArmJob(jobFile)
	if err != nil {
		return err
	}
	env, err := aj.JobEnv(jobID)
	if err != nil {
		return err
	}
	client, err := aj.JobClient(jobID)
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if err := os.Setenv(k, env[k]); err != nil {
			return err
		}
		fmt.Fprintf(progress, "job env: %s=%s\n", k, env[k])
	}
	dir := filepath.Dir(filepath.Dir(jobFile)) // DIR/slurm/armNN-tK.json
	setup, po := aj.Settings.Runner()
	log, err := CreateEventLog(eventsFile)
	if err != nil {
		return err
	}
	defer log.Close()
	job, armOpts := aj.Job()
	var logErr error
	obs := func(r Record) {
		fmt.Fprintf(progress, "%s %s %s %s\n", r.Event, r.Point, r.Status, r.Error)
		if err := log.Append(r); err != nil && logErr == nil {
			logErr = err
		}
	}
	var setupErr error
	if client != nil {
		// Once per job, before the engine starts: its aiperf measures
		// every point of the arm.
		setup.Aiperf, setupErr = launch.MakeClient(ctx, *client, launch.ExecSteps{Out: progress}, func(line string) { fmt.Fprintln(progress, line) })
	}
	if setupErr != nil {
		setupErr = fmt.Errorf("client environment: %w", setupErr)
		FailJob(job, obs, setupErr.Error())
	} else {
		backend := &RunBackend{Dir: dir, Setup: setup, Options: po}
		RunArm(ctx, job, nil, backend, obs, armOpts)
	}
	if logErr != nil {
		return fmt.Errorf("events %s: %w", eventsFile, logErr)
	}
	if setupErr != nil {
		return setupErr
	}
	return ctx.Err()
}
