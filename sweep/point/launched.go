package point

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
	"sweep/internal/usage"
	"sweep/metrics/result"
	"sweep/recipes"
	"sweep/recipes/models"
	"sweep/sweep/executor/slurm"
	"sweep/sweep/launch"
	"sweep/sweep/run"
)

// runLaunched is Request.Launch: the point runs through its runner's
// launch path (sweep/launch) with the engine and the client in the image,
// run there by the mounted sweep binary.
func (r *Request) runLaunched(ctx context.Context, out string, started time.Time) error {
	g, err := r.Generator()
	if err != nil {
		return err
	}
	if multi, err := r.MultiNodeRows(g); err != nil {
		return err
	} else if len(multi) > 0 {
		return r.runMultiNodeLaunched(ctx, out, started, multi)
	}
	row, err := r.SelectRow(g)
	if err != nil {
		return err
	}
	runner := r.Plan.RunnerName
	if runner == "" {
		runner = recipes.RunnerName(row, g.Runners)
	}
	prof, err := recipes.SiteProfile(runner, r.Site)
	if errors.Is(err, recipes.ErrNoProfile) {
		return usage.Errorf("--launch: %w", err)
	}
	if err != nil {
		return &usage.Error{Err: err}
	}
	bin, err := launch.SweepBinary(r.SweepBinary)
	if err != nil {
		return err
	}
	jobID := r.JobID
	if jobID == "" && prof.Launch.Docker == nil {
		jobID = os.Getenv("SLURM_JOB_ID")
	}
	ws := launch.ContainerWorkspace(prof, row)
	// Plan now, so a point that cannot be planned fails before allocating,
	// and check the output directory as a plain run does.
	p, err := r.planLaunched(g, row, ws, recipes.DefaultPort)
	if err != nil {
		return err
	}
	var mounts []string
	inner := r.innerRunArgs()
	var client *launch.ClientSetup
	if !r.Builtin && (r.Inferencex != "" || r.Aiperf != "") {
		client = &launch.ClientSetup{Checkout: r.Inferencex, Aiperf: r.Aiperf}
		ce, m, err := client.Prepare(ctx, prof, row, p.Client, launch.JobKey(prof, jobID, runner), launch.Dialer{})
		if err != nil {
			return err
		}
		mounts = append(mounts, m...)
		if r.Inferencex != "" {
			inner = append(inner, "--aiperf", ce.AiperfProgram())
		}
	}
	lo := launch.PointOptions(prof, row, runner, out, bin, inner...)
	lo.JobID, lo.Mounts = jobID, append(lo.Mounts, mounts...)
	if u, err := user.Current(); err == nil {
		lo.User = u.Username
	}
	pl, err := launch.Build(prof, row, lo)
	if err != nil {
		return &usage.Error{Err: err}
	}
	if err := launch.Preflight(pl); err != nil {
		return err
	}
	release, err := r.claim(run.PointClaim{Dir: out, Name: p.ResultFilename, Made: r.launchedMade(row, p), LaunchPlan: launch.PlanFile})
	if release == nil {
		return err
	}
	release()
	fmt.Fprintf(r.Stderr, "point %s tp%d ep%d dpa=%t conc%d on %s (%s), image %s\n  output: %s (mounted at %s)\n",
		row.ConfigKey, row.TP, row.EP, row.DPAttn, row.Conc, runner, pl.Launcher, row.Image, out, ws)
	for _, n := range pl.Notes {
		fmt.Fprintf(r.Stderr, "  note: %s\n", n)
	}
	ex := launch.Exec{
		Stdout: r.Stdout, Stderr: r.Stderr, Guard: []string{bin, "launch-guard"},
		// The container's sweep stops its processes with --stop-grace.
		StopWait: max(r.Point.StopGrace, 0) + 20*time.Second,
		Progress: r.progress(started),
		JobEnded: jobEnded,
		BeforeRun: func(bound *launch.Plan) error {
			port := recipes.DefaultPort
			if n, err := strconv.Atoi(bound.RunEnv("PORT")); err == nil {
				port = n
			}
			if r.Simulate {
				// A simulated engine shares the host's network: a free port.
				if port, err = r.FreePort(); err != nil {
					return err
				}
			}
			p, err := r.planLaunched(g, row, ws, port)
			if err != nil {
				return err
			}
			p.Launch = bound.Commands
			p.LaunchNotes = bound.Notes
			if client != nil {
				ce, _, err := client.Env(prof, row, p.Client, launch.JobKey(prof, bound.JobID, runner))
				if err != nil {
					return err
				}
				if p.ClientSetup, err = ce.Steps(); err != nil {
					return err
				}
			}
			if err := os.MkdirAll(filepath.Join(out, filepath.Dir(launch.PlanFile)), 0o755); err != nil {
				return err
			}
			return atomicfile.WriteJSON(filepath.Join(out, launch.PlanFile), p)
		},
	}
	res, runErr := ex.Run(ctx, pl)
	if res.Released {
		fmt.Fprintln(r.Stderr, released(pl, res, runErr))
	}
	switch {
	case runErr != nil && ctx.Err() != nil:
		return fmt.Errorf("%v: %w", runErr, context.Canceled)
	case runErr != nil:
		return runErr
	}
	if err := checkLaunchedOutput(out, p); err != nil {
		return errors.Join(err, res.ReleaseErr)
	}
	return res.ReleaseErr
}

// released says how a launch's release ended: the container removed (or
// none left: docker run may have failed before it made one), the
// allocation released, or not.
func released(pl *launch.Plan, res launch.Result, runErr error) string {
	switch {
	case pl.ContainerName != "" && res.ReleaseErr != nil:
		return fmt.Sprintf("container %s could NOT be removed (remove it with docker rm -f %s once docker answers): %v", pl.ContainerName, pl.ContainerName, res.ReleaseErr)
	case pl.ContainerName != "" && res.NoContainer && runErr != nil:
		return fmt.Sprintf("no container %s left to remove", pl.ContainerName)
	case pl.ContainerName != "":
		return fmt.Sprintf("container %s removed", pl.ContainerName)
	case res.ReleaseErr != nil:
		return fmt.Sprintf("allocation %s release FAILED: %v", res.JobID, res.ReleaseErr)
	}
	return fmt.Sprintf("allocation %s released", res.JobID)
}

// jobEnded is launch.Exec's JobEnded: the job's state as Slurm reports it
// (squeue, else sacct), and whether it has ended; a state Slurm does not
// give is not taken for an end. A job still COMPLETING (its steps being
// torn down after scancel) is asked again for up to 30 s for its final
// state (CANCELLED, TIMEOUT, ...): the launch's own allocation never
// completes by itself, so COMPLETING is an end too.
func jobEnded(ctx context.Context, id string) (string, bool) {
	c := slurm.NewClient(slurm.Exec{})
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := c.Status(ctx, slurm.JobID(id))
		switch {
		case err != nil:
			return "", false
		case st.State != "COMPLETING":
			return string(st.State), st.State.Done()
		case time.Now().After(deadline):
			return string(st.State), true
		}
		select {
		case <-ctx.Done():
			return "", false
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// checkLaunchedOutput is what a launched point must leave in out once its
// container step ended with exit 0: the container's run record, and the
// result unless the point is eval-only (its record holds the scores). An
// exit 0 without them (a payload that never ran sweep, a collect that
// brought nothing back) is a failure, not a success without a result.
func checkLaunchedOutput(out string, p *recipes.Point) error {
	want := []string{run.RecordFile}
	if p.Eval == nil {
		want = append(want, result.FileName(p.ResultFilename))
	}
	var missing []string
	for _, f := range want {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the container step ended with exit 0 but %s holds no %s: the point has no result (the container's output above says what ran)",
			out, strings.Join(missing, " and no "))
	}
	return nil
}

// launchedMade is how the launched point p of row is made, as far as
// the host knows it: the container's engine command (its snapshot
// resolved, its port bound) is known only there, and the container's
// own claim compares it; the client's flags are planned here as there
// (its URL, the one that differs, is not compared), so a point completed
// at another length or warm-up is not taken for p.
func (r *Request) launchedMade(row *matrix.Row, p *recipes.Point) *run.Made {
	made := &run.Made{Simulated: r.Simulate, Image: row.Image}
	if p.Client != nil {
		made.ClientName, made.ClientArgv = run.ClientProcess, p.Client.Argv
	}
	return made
}

// planLaunched plans the point with its results in the container's
// workspace ws on the given port.
func (r *Request) planLaunched(g *matrix.Generator, row *matrix.Row, ws string, port int) (*recipes.Point, error) {
	po := r.Plan
	po.Port = port
	po.ResultDir = ws
	po.Eval = r.Eval
	po.Runners = g.Runners
	return planOne(row, po)
}

// innerRunArgs are the flags of the container's `sweep run --plan`: the
// simulation, the client and the point options.
func (r *Request) innerRunArgs() []string {
	var a []string
	if r.Simulate {
		a = append(a, "--simulate", "--sim-clock", r.SimClock, "--time-scale", strconv.FormatFloat(r.TimeScale, 'g', -1, 64))
		if r.SimFault != "" {
			a = append(a, "--sim-fault", r.SimFault)
		}
		if r.SimGPU != "" {
			a = append(a, "--sim-gpu", r.SimGPU)
		}
	}
	if r.Builtin {
		a = append(a, "--builtin-client")
	}
	if r.Aiperf != "" {
		a = append(a, "--aiperf", r.Aiperf)
	}
	a = append(a, "--ready-timeout", r.Point.ReadyTimeout.String(),
		"--failed-request-threshold", strconv.FormatFloat(r.Point.FailedRequestThreshold, 'g', -1, 64),
		"--al-tolerance", strconv.FormatFloat(r.Point.ALTolerance, 'g', -1, 64))
	if r.StopGraceSet {
		g := r.Point.StopGrace
		if g == run.NoGrace {
			g = 0
		}
		a = append(a, "--stop-grace", g.String())
	}
	return a
}

// runMultiNodeLaunched is Request.Launch on a multi-node key: the row
// holding the concurrency is submitted as its launcher submits it (sbatch
// of job.slurm, or srtctl apply), from SubmitDir, and waited for; the job
// runs every concurrency of the row and writes InferenceX's
// <RESULT_FILENAME>_conc<N>.json where its launcher puts them. Cancelling
// ctx cancels the job.
func (r *Request) runMultiNodeLaunched(ctx context.Context, out string, started time.Time, rows matrix.Matrix) error {
	if r.Simulate {
		return usage.Errorf("--launch --simulate on a multi-node key: a simulated multi-node point runs on this host (drop --launch)")
	}
	row, err := r.SelectMultiNodeRow(rows)
	if err != nil {
		return err
	}
	po := r.Plan
	po.Runners = nil
	planned, err := recipes.PlanMultiNode(matrix.Matrix{row}, models.WithBuiltin(po))
	if err != nil {
		return recipes.Failure(err)
	}
	dir := r.SubmitDir
	if dir == "" {
		dir = "."
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	logs := filepath.Join(out, "logs")
	j := launch.MultiNodeJob{Point: &planned[0], Dir: dir, LogsDir: logs, Exec: launch.Exec{Stdout: r.Stdout, Stderr: r.Stderr, Progress: r.progress(started)}}
	if u, err := user.Current(); err == nil {
		j.User = u.Username
	}
	submit, err := j.Submit()
	if err != nil {
		return &usage.Error{Err: err}
	}
	// Only once the submission is checked: a refusal writes nothing.
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	p := &planned[0]
	fmt.Fprintf(r.Stderr, "point %s %s conc %v: launch_%s.sh submits with %s from %s (%d node(s), %d worker GPU(s))\n  %s\n  results: %s_conc<N>.json\n",
		row.ConfigKey, row.ExpName, row.Concs, p.Launcher, p.Submitter, dir, p.Nodes, p.GPUs, launch.Oneline(submit.Argv), p.ResultFilename)
	id, err := j.Run(ctx)
	switch {
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("job %s cancelled: %v: %w", id, err, context.Canceled)
	case err != nil:
		return err
	}
	fmt.Fprintf(r.Stdout, "job %s finished; its logs are in %s\n", id, logs)
	if p.Submitter != "sbatch" {
		return nil
	}
	// job.slurm writes the results into the checkout (the container's
	// workspace), where InferenceX's workflow looks for them.
	found, _ := filepath.Glob(filepath.Join(dir, p.ResultFilename+"_conc*.json"))
	if len(found) == 0 {
		return fmt.Errorf("job %s wrote no %s_conc*.json in %s (see %s)", id, p.ResultFilename, dir, logs)
	}
	for _, f := range found {
		fmt.Fprintf(r.Stdout, "  result: %s\n", f)
	}
	return nil
}
