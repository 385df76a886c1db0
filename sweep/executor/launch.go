package executor

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"sweep/recipes"
	"sweep/sweep/campaign"
	"sweep/sweep/executor/local"
	"sweep/sweep/launch"
)

// Launch says how an arm runs in its recipe's image through its runner's
// launch path: a Slurm runner's arm as a batch job (sweep/launch.InJob),
// a docker runner's in its launcher's container on this host
// (sweep/launch.InContainer).
type Launch struct {
	// Profile gives a runner's profile (with the site's changes).
	Profile func(runner string) (recipes.Profile, error)
	// Binary is the sweep mounted into the image (an absolute path).
	Binary string
	// Dir is the sweep directory.
	Dir string
	// Progress takes the image imports' output and progress lines.
	Progress io.Writer
}

// options are the launch options of an arm's container: the mounted
// sweep, which starts itself for its simulated processes.
func (l Launch) options(runner string) launch.Options {
	return launch.Options{RunnerName: runner, Mounts: []string{launch.SweepMount(l.Binary)}, Export: []string{launch.SweepExport(l.Binary)}}
}

// sweepInImage is the mounted sweep's path in the image.
func (l Launch) sweepInImage() string { return launch.SweepDir + "/" + filepath.Base(l.Binary) }

// step is the arm's image import and the job's container step running
// the mounted sweep.
func (l Launch) step(prof recipes.Profile, a *campaign.Arm) (*launch.JobStep, error) {
	return launch.InJob(prof, a.ServerRow, l.options(recipes.RunnerName(a.ServerRow, nil)), l.Dir)
}

// ArmProgram gives each arm's job the container step of its runner's
// launch around the mounted sweep (Options.ArmProgram), importing each
// image once (under the launcher's flock) before the first job that
// needs it.
func (l Launch) ArmProgram() func(context.Context, *campaign.Arm) (campaign.ArmCommand, error) {
	var mu sync.Mutex
	imported := map[string]error{}
	return func(ctx context.Context, a *campaign.Arm) (campaign.ArmCommand, error) {
		prof, err := l.Profile(a.Runner)
		if err != nil {
			return campaign.ArmCommand{}, fmt.Errorf("--launch: %w", err)
		}
		js, err := l.step(prof, a)
		if err != nil {
			return campaign.ArmCommand{}, err
		}
		imp := js.Import
		mu.Lock()
		defer mu.Unlock()
		ierr, done := imported[imp.SquashFile]
		if !done {
			if ierr = launch.Preflight(imp); ierr == nil {
				ex := launch.Exec{Stdout: l.Progress, Stderr: l.Progress, Progress: func(line string) { fmt.Fprintln(l.Progress, "  "+line) }}
				_, ierr = ex.Run(ctx, imp)
			}
			imported[imp.SquashFile] = ierr
		}
		if ierr != nil {
			return campaign.ArmCommand{}, fmt.Errorf("image %s: %w", imp.Image, ierr)
		}
		return campaign.ArmCommand{Argv: append(js.Argv, l.sweepInImage()), Env: js.Env}, nil
	}
}

// ContainerArms runs each arm of sched in its docker runner's container
// on this host (sweep/launch.InContainer around the mounted sweep's
// run-arm); stopWait bounds a container's stop. Every arm's launch is
// checked before anything starts.
func (l Launch) ContainerArms(sched *campaign.Schedule, stopWait time.Duration) (*local.ContainerArms, error) {
	plan := func(a *campaign.Arm, gpus []int, payload []string) (*launch.Plan, error) {
		prof, err := l.Profile(a.Runner)
		if err != nil {
			return nil, err
		}
		o := l.options(fmt.Sprintf("%s-arm%02d", prof.Name, a.Index+1))
		o.Payload = payload
		return launch.InContainer(prof, a.ServerRow, o, l.Dir, gpus)
	}
	for _, a := range sched.Arms {
		if _, err := plan(a, nil, []string{"true"}); err != nil {
			return nil, &ProfileError{Err: fmt.Errorf("--launch with --executor local: arm %d: %w", a.Index+1, err)}
		}
	}
	progress := func(line string) { fmt.Fprintln(l.Progress, "  "+line) }
	return &local.ContainerArms{Dir: l.Dir, Plan: plan, Sweep: l.sweepInImage(), Progress: progress,
		Exec: launch.Exec{Stdout: l.Progress, Stderr: l.Progress, Guard: []string{l.Binary, "launch-guard"}, Progress: progress, StopWait: stopWait}}, nil
}

// ProfileError is a runner without a usable profile (or a bad site
// change) found while printing the launch plan: the caller's usage error.
type ProfileError struct{ Err error }

func (e *ProfileError) Error() string { return e.Err.Error() }
func (e *ProfileError) Unwrap() error { return e.Err }

// WriteDryRun prints what --launch runs per arm: with slurmJobs, the image
// import on this host and the job's container step (run-arm follows it);
// else each arm's docker launch on this host.
func (l Launch) WriteDryRun(w io.Writer, sched *campaign.Schedule, slurmJobs bool) error {
	if !slurmJobs {
		cs, err := l.ContainerArms(sched, 0)
		if err != nil {
			return err
		}
		fmt.Fprintln(w, "\nlaunch (--launch): per arm, its runner's docker launch on this host (GPUs as the schedule places them)")
		for _, a := range sched.Arms {
			pl, err := cs.Plan(a, nil, []string{cs.Sweep, "run-arm", "--job", "...", "--events", "..."})
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "  arm %d (%s, %s):\n", a.Index+1, pl.Profile, pl.Launcher)
			for _, c := range pl.Commands {
				fmt.Fprintf(w, "    %-7s %s\n", c.Role+":", launch.Oneline(c.Argv))
			}
		}
		return nil
	}
	fmt.Fprintln(w, "\nlaunch (--launch): per arm, the image import on this host, then the sbatch job's step")
	for _, a := range sched.Arms {
		prof, err := l.Profile(a.Runner)
		if err != nil {
			return &ProfileError{Err: err}
		}
		js, err := l.step(prof, a)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  arm %d (%s, %s):\n    import: %s\n    step:   %s %s run-arm --job ... --events ...\n", a.Index+1, prof.Name, js.Import.Launcher,
			launch.Oneline(js.Import.Commands[0].Argv), strings.Join(js.Argv, " "), l.sweepInImage())
		for _, k := range slices.Sorted(maps.Keys(js.Env)) {
			fmt.Fprintf(w, "    env:    %s=%s (set on the node, %s its job id)\n", k, js.Env[k], campaign.SlurmJobID)
		}
	}
	return nil
}
