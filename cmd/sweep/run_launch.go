package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"sweep/configs/matrix"
	"sweep/internal/atomicfile"
	"sweep/recipes"
	"sweep/sweep/launch"
	"sweep/sweep/run"
)

// runLaunched is "sweep run --launch": the point runs through its
// runner's launch path (sweep/launch) with the engine and the client in
// the image, run there by the mounted sweep binary.
func runLaunched(ctx context.Context, o *runOptions, out string, started time.Time) error {
	g, err := o.Inputs.generator()
	if err != nil {
		return err
	}
	row, err := o.selectRow(g)
	if err != nil {
		return err
	}
	runner := o.Plan.RunnerName
	if runner == "" {
		runner = recipes.RunnerName(row, g.Runners)
	}
	prof, err := recipes.ProfileFor(runner)
	if err != nil {
		return &FlagError{Err: fmt.Errorf("--launch: %w", err)}
	}
	for _, s := range o.Site {
		if err := prof.ApplySite(s); err != nil {
			return &FlagError{Err: err}
		}
	}
	bin, err := sweepBinary(o.SweepBinary)
	if err != nil {
		return err
	}
	jobID := o.JobID
	if jobID == "" && prof.Launch.Docker == nil {
		jobID = os.Getenv("SLURM_JOB_ID")
	}
	ws := launch.ContainerWorkspace(prof, row)
	lo := launch.Options{RunnerName: runner, Workspace: out, JobID: jobID,
		Payload: launch.SweepPayload(bin, ws, o.innerRunArgs()...), Mounts: []string{launch.SweepMount(bin)}}
	if u, err := user.Current(); err == nil {
		lo.User = u.Username
	}
	pl, err := launch.Build(prof, row, lo)
	if err != nil {
		return &FlagError{Err: err}
	}
	if err := launch.Preflight(pl); err != nil {
		return err
	}
	// Plan now, so a point that cannot be planned fails before allocating,
	// and check the output directory as a plain run does.
	p, err := o.planLaunched(g, row, ws, recipes.DefaultPort)
	if err != nil {
		return err
	}
	release, _, err := run.ClaimOutDir(out, p.ResultFilename, o.Force)
	if errors.Is(err, run.ErrAlreadyDone) {
		fmt.Fprintf(o.IO.ErrOut, "point %s already completed in %s; nothing to do (use --force to run it again)\n", p.ResultFilename, out)
		return nil
	}
	if err != nil {
		return &FlagError{Err: err}
	}
	release()
	fmt.Fprintf(o.IO.ErrOut, "point %s tp%d ep%d dpa=%t conc%d on %s (%s), image %s\n  output: %s (mounted at %s)\n",
		row.ConfigKey, row.TP, row.EP, row.DPAttn, row.Conc, runner, pl.Launcher, row.Image, out, ws)
	ex := launch.Exec{
		Stdout: o.IO.Out, Stderr: o.IO.ErrOut, Guard: []string{bin, "launch-guard"},
		// The container's sweep stops its processes with --stop-grace.
		StopWait: max(o.Point.StopGrace, 0) + 20*time.Second,
		Progress: func(line string) {
			fmt.Fprintf(o.IO.ErrOut, "[%6s] %s\n", time.Since(started).Round(time.Second), line)
		},
		BeforeRun: func(bound *launch.Plan) error {
			port := recipes.DefaultPort
			if n, err := strconv.Atoi(bound.RunEnv("PORT")); err == nil {
				port = n
			}
			if o.Simulate {
				// A simulated engine shares the host's network: a free port.
				if port, err = freePortPair(); err != nil {
					return err
				}
			}
			p, err := o.planLaunched(g, row, ws, port)
			if err != nil {
				return err
			}
			p.Launch = bound.Commands
			if err := os.MkdirAll(filepath.Join(out, filepath.Dir(launch.PlanFile)), 0o755); err != nil {
				return err
			}
			return atomicfile.WriteJSON(filepath.Join(out, launch.PlanFile), p)
		},
	}
	res, runErr := ex.Run(ctx, pl)
	if res.Released {
		status := "released"
		if res.ReleaseErr != nil {
			status = "release FAILED: " + res.ReleaseErr.Error()
		}
		if pl.ContainerName != "" {
			fmt.Fprintf(o.IO.ErrOut, "container %s %s\n", pl.ContainerName, strings.Replace(status, "released", "removed", 1))
		} else {
			fmt.Fprintf(o.IO.ErrOut, "allocation %s %s\n", res.JobID, status)
		}
	}
	switch {
	case runErr != nil && ctx.Err() != nil:
		return fmt.Errorf("%v: %w", runErr, context.Canceled)
	case runErr != nil:
		return &exitCodeError{Code: exitError, Err: runErr}
	case res.ReleaseErr != nil:
		return &exitCodeError{Code: exitError, Err: res.ReleaseErr}
	}
	return nil
}

// planLaunched plans the point with its results in the container's
// workspace ws on the given port.
func (o *runOptions) planLaunched(g *matrix.Generator, row *matrix.Row, ws string, port int) (*recipes.Point, error) {
	po := o.Plan
	po.Port = port
	po.ResultDir = ws
	po.Eval = o.Eval
	po.Runners = g.Runners
	points, err := recipes.Plan(matrix.Matrix{row}, po)
	if err != nil {
		if errors.Is(err, recipes.ErrInvalidOptions) {
			return nil, &FlagError{Err: err}
		}
		return nil, fmt.Errorf("plan: %w", err)
	}
	return &points[0], nil
}

// innerRunArgs are the flags of the container's `sweep run --plan`: the
// simulation, the client and the point options.
func (o *runOptions) innerRunArgs() []string {
	var a []string
	if o.Simulate {
		a = append(a, "--simulate", "--sim-clock", o.SimClock, "--time-scale", strconv.FormatFloat(o.TimeScale, 'g', -1, 64))
		if o.SimFault != "" {
			a = append(a, "--sim-fault", o.SimFault)
		}
		if o.SimGPU != "" {
			a = append(a, "--sim-gpu", o.SimGPU)
		}
	}
	if o.Builtin {
		a = append(a, "--builtin-client")
	}
	if o.Aiperf != "" {
		a = append(a, "--aiperf", o.Aiperf)
	}
	a = append(a, "--ready-timeout", o.Point.ReadyTimeout.String(),
		"--failed-request-threshold", strconv.FormatFloat(o.Point.FailedRequestThreshold, 'g', -1, 64),
		"--al-tolerance", strconv.FormatFloat(o.Point.ALTolerance, 'g', -1, 64))
	if o.stopGraceSet {
		g := o.Point.StopGrace
		if g == run.NoGrace {
			g = 0
		}
		a = append(a, "--stop-grace", g.String())
	}
	return a
}
