package executor

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"sweep/recipes"
	"sweep/sweep/campaign"
	"sweep/sweep/launch"
)

// Launch says how a Slurm arm runs in its recipe's image through its
// runner's launch path (sweep/launch.InJob).
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

// step is the arm's image import and the job's container step running
// the mounted sweep.
func (l Launch) step(prof recipes.Profile, a *campaign.Arm) (*launch.Plan, []string, error) {
	return launch.InJob(prof, a.ServerRow, launch.Options{RunnerName: recipes.RunnerName(a.ServerRow, nil), Mounts: []string{launch.SweepMount(l.Binary)}}, l.Dir)
}

// ArmProgram gives each arm's job the container step of its runner's
// launch around the mounted sweep (Options.ArmProgram), importing each
// image once (under the launcher's flock) before the first job that
// needs it.
func (l Launch) ArmProgram() func(context.Context, *campaign.Arm) ([]string, error) {
	var mu sync.Mutex
	imported := map[string]error{}
	return func(ctx context.Context, a *campaign.Arm) ([]string, error) {
		prof, err := l.Profile(a.Runner)
		if err != nil {
			return nil, fmt.Errorf("--launch: %w", err)
		}
		imp, step, err := l.step(prof, a)
		if err != nil {
			return nil, err
		}
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
			return nil, fmt.Errorf("image %s: %w", imp.Image, ierr)
		}
		return append(step, launch.SweepDir+"/"+filepath.Base(l.Binary)), nil
	}
}

// ProfileError is a runner without a usable profile (or a bad site
// change) found while printing the launch plan: the caller's usage error.
type ProfileError struct{ Err error }

func (e *ProfileError) Error() string { return e.Err.Error() }
func (e *ProfileError) Unwrap() error { return e.Err }

// WriteDryRun prints what ArmProgram runs per arm: the image import on
// this host and the job's container step (run-arm follows it).
func (l Launch) WriteDryRun(w io.Writer, sched *campaign.Schedule) error {
	fmt.Fprintln(w, "\nlaunch (--launch): per arm, the image import on this host, then the sbatch job's step")
	for _, a := range sched.Arms {
		prof, err := l.Profile(a.Runner)
		if err != nil {
			return &ProfileError{Err: err}
		}
		imp, step, err := l.step(prof, a)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  arm %d (%s, %s):\n    import: %s\n    step:   %s %s run-arm --job ... --events ...\n", a.Index+1, prof.Name, imp.Launcher,
			launch.Oneline(imp.Commands[0].Argv), strings.Join(step, " "), launch.SweepDir+"/"+filepath.Base(l.Binary))
	}
	return nil
}
