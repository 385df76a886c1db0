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
// launch path: a Slurm runner's arm as a batch job that imports its image
// where the launcher does (sweep/launch.InJob),
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
	// Client, when set, is the host's InferenceX checkout (and uv) each
	// arm's run-arm makes its client environment from, once per job
	// before the engine starts (launch.ClientSetup; its Aiperf is unused).
	Client *launch.ClientSetup
}

// NewLaunch is how each arm of the sweep in dir runs in its image: the
// runner profiles with the site changes (key=value; a bad one is a
// *ProfileError), the sweep binary (launch.SweepBinary of binary, looked
// for after the sites are checked) and, with an InferenceX checkout, each
// arm's client environment made from it.
func NewLaunch(dir string, sites []string, binary, inferencex string) (Launch, error) {
	for _, s := range sites {
		if err := (&recipes.Profile{}).ApplySite(s); err != nil {
			return Launch{}, &ProfileError{Err: err}
		}
	}
	bin, err := launch.SweepBinary(binary)
	if err != nil {
		return Launch{}, err
	}
	l := Launch{Profile: func(runner string) (recipes.Profile, error) { return recipes.SiteProfile(runner, sites) }, Binary: bin, Dir: dir}
	if inferencex != "" {
		l.Client = &launch.ClientSetup{Checkout: inferencex}
	}
	return l, nil
}

// options are the launch options of an arm's container: the mounted
// sweep, which starts itself for its simulated processes, and the client
// environment's mounts (the checkout, uv).
func (l Launch) options(runner string, clientMounts []string) launch.Options {
	return launch.Options{RunnerName: runner, Mounts: append([]string{launch.SweepMount(l.Binary)}, clientMounts...), Export: []string{launch.SweepExport(l.Binary)}}
}

// clientEnv is an arm's client environment in its container for the job
// key (nil without Client) and the mounts it needs. Every point of the
// arm must replay the same trace set.
func (l Launch) clientEnv(prof recipes.Profile, a *campaign.Arm, key string) (*recipes.ClientEnv, []string, error) {
	if l.Client == nil {
		return nil, nil, nil
	}
	var (
		ce     recipes.ClientEnv
		mounts []string
	)
	for i, p := range a.Points {
		pe, m, err := l.Client.Env(prof, a.ServerRow, p.Plan.Client, key)
		if err != nil {
			return nil, nil, fmt.Errorf("arm %d, point %s: %w", a.Index+1, p.ID, err)
		}
		if i > 0 && pe.Loader != ce.Loader {
			return nil, nil, fmt.Errorf("arm %d: its points replay two trace sets (%s, %s); one client environment serves one", a.Index+1, ce.Loader, pe.Loader)
		}
		ce, mounts = pe, m
	}
	if len(a.Points) == 0 {
		return nil, nil, fmt.Errorf("arm %d has no points", a.Index+1)
	}
	return &ce, mounts, nil
}

// Preflight checks on this host, once per runner and trace set and before
// any allocation or container starts, that every arm's client environment
// can be made (launch.ClientPreflight; net nil: no network check).
func (l Launch) Preflight(ctx context.Context, sched *campaign.Schedule, net launch.Network) error {
	if l.Client == nil {
		return nil
	}
	checked := map[string]bool{}
	for _, a := range sched.Arms {
		prof, err := l.Profile(a.Runner)
		if err != nil {
			return &ProfileError{Err: err}
		}
		ce, _, err := l.clientEnv(prof, a, "preflight")
		if err != nil {
			return err
		}
		_, hostHub := launch.HubCache(prof, a.ServerRow)
		k := hostHub + "\x00" + ce.Loader
		if checked[k] {
			continue
		}
		checked[k] = true
		if err := (launch.ClientPreflight{Setup: *l.Client, Env: *ce, HostHubCache: hostHub, Net: net}).Check(ctx); err != nil {
			return err
		}
	}
	return nil
}

// sweepInImage is the mounted sweep's path in the image.
func (l Launch) sweepInImage() string { return launch.SweepDir + "/" + filepath.Base(l.Binary) }

// step is the arm's image import and the job's container step running
// the mounted sweep.
// and the arm's client environment (its runtime directory per job id).
func (l Launch) step(prof recipes.Profile, a *campaign.Arm) (*launch.JobStep, *recipes.ClientEnv, error) {
	ce, mounts, err := l.clientEnv(prof, a, campaign.SlurmJobID)
	if err != nil {
		return nil, nil, err
	}
	js, err := launch.InJob(prof, a.ServerRow, l.options(recipes.RunnerName(a.ServerRow, nil), mounts), l.Dir)
	return js, ce, err
}

// checkJobs checks, before anything starts, that every arm of sched has
// its job's container step: a docker runner's arm runs on its node, not
// as a Slurm job. A failure is the caller's usage error (*ProfileError).
func (l Launch) checkJobs(sched *campaign.Schedule) error {
	for _, a := range sched.Arms {
		prof, err := l.Profile(a.Runner)
		if err == nil {
			_, _, err = l.step(prof, a)
		}
		if err != nil {
			return &ProfileError{Err: fmt.Errorf("--launch with --executor slurm: arm %d: %w", a.Index+1, err)}
		}
	}
	return nil
}

// ArmProgram gives each arm's job of sched the container step of its
// runner's launch around the mounted sweep (Options.ArmProgram), and its
// image import where the runner's launcher runs it (launch.JobStep): in
// the job on its node before the container step (ArmCommand.Import), or
// on this host, once per image (under the launcher's flock), before the
// first job that needs it. Every arm's step is checked first (checkJobs).
func (l Launch) ArmProgram(sched *campaign.Schedule) (func(context.Context, *campaign.Arm) (campaign.ArmCommand, error), error) {
	if err := l.checkJobs(sched); err != nil {
		return nil, err
	}
	var mu sync.Mutex
	imported := map[string]error{}
	return func(ctx context.Context, a *campaign.Arm) (campaign.ArmCommand, error) {
		prof, err := l.Profile(a.Runner)
		if err != nil {
			return campaign.ArmCommand{}, fmt.Errorf("--launch: %w", err)
		}
		js, ce, err := l.step(prof, a)
		if err != nil {
			return campaign.ArmCommand{}, err
		}
		cmd := campaign.ArmCommand{Argv: append(js.Argv, l.sweepInImage()), Env: js.Env, Client: ce}
		imp := js.Import
		if !js.ImportOnHost {
			cmd.Import = imp.Bind(launch.HostVars()).Commands[0].Argv
			return cmd, nil
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
			return campaign.ArmCommand{}, fmt.Errorf("image %s: %w", imp.Image, ierr)
		}
		return cmd, nil
	}, nil
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
		name := containerArmName(prof, a, l.Dir)
		_, mounts, err := l.clientEnv(prof, a, name)
		if err != nil {
			return nil, err
		}
		o := l.options(name, mounts)
		o.Payload = payload
		return launch.InContainer(prof, a.ServerRow, o, l.Dir, gpus)
	}
	for _, a := range sched.Arms {
		if _, err := plan(a, nil, []string{"true"}); err != nil {
			return nil, &ProfileError{Err: fmt.Errorf("--launch with --executor local: arm %d: %w", a.Index+1, err)}
		}
	}
	progress := func(line string) { fmt.Fprintln(l.Progress, "  "+line) }
	client := func(a *campaign.Arm) (*recipes.ClientEnv, error) {
		prof, err := l.Profile(a.Runner)
		if err != nil {
			return nil, err
		}
		ce, _, err := l.clientEnv(prof, a, containerArmName(prof, a, l.Dir))
		return ce, err
	}
	return &local.ContainerArms{Dir: l.Dir, Plan: plan, Client: client, Sweep: l.sweepInImage(), Progress: progress,
		Exec: launch.Exec{Guard: []string{l.Binary, "launch-guard"}, Progress: progress, StopWait: stopWait}}, nil
}

// containerArmName names an arm's docker container (arms run at once) and
// its client environment's job key: the runner, the arm and a tag of the
// sweep directory, so a second sweep on this host never removes (docker
// rm -f) the first one's containers.
func containerArmName(prof recipes.Profile, a *campaign.Arm, dir string) string {
	return fmt.Sprintf("%s-arm%02d-%s", prof.Name, a.Index+1, launch.DirTag(dir))
}

// ProfileError is a runner without a usable profile (or a bad site
// change) found while printing the launch plan: the caller's usage error.
type ProfileError struct{ Err error }

func (e *ProfileError) Error() string { return e.Err.Error() }
func (e *ProfileError) Unwrap() error { return e.Err }

// WriteDryRun prints what --launch runs per arm: with slurmJobs, the image
// import, where it runs (this host or the job's node), and the job's
// container step (run-arm follows it); else each arm's docker launch on
// this host.
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
			ce, err := cs.Client(a)
			if err != nil {
				return err
			}
			if err := writeClientSteps(w, ce); err != nil {
				return err
			}
		}
		return nil
	}
	if err := l.checkJobs(sched); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nlaunch (--launch): per arm, the image import where its launcher runs it (this host before sbatch, or the job's node), then the sbatch job's step")
	for _, a := range sched.Arms {
		prof, err := l.Profile(a.Runner)
		if err != nil {
			return &ProfileError{Err: err}
		}
		js, ce, err := l.step(prof, a)
		if err != nil {
			return err
		}
		where := "in the job on its node, before the step"
		if js.ImportOnHost {
			where = "on this host, once before the first job"
		}
		fmt.Fprintf(w, "  arm %d (%s, %s):\n    import: %s (%s)\n    step:   %s %s run-arm --job ... --events ...\n", a.Index+1, prof.Name, js.Import.Launcher,
			launch.Oneline(js.Import.Commands[0].Argv), where, strings.Join(js.Argv, " "), l.sweepInImage())
		for _, k := range slices.Sorted(maps.Keys(js.Env)) {
			note := "set on the node"
			if strings.Contains(js.Env[k], campaign.SlurmJobID) {
				note += ", " + campaign.SlurmJobID + " its job id"
			}
			fmt.Fprintf(w, "    env:    %s=%s (%s)\n", k, js.Env[k], note)
		}
		if err := writeClientSteps(w, ce); err != nil {
			return err
		}
	}
	return nil
}

// writeClientSteps prints the client environment's steps run-arm runs in
// the container before the arm's engine starts (none without one).
func writeClientSteps(w io.Writer, ce *recipes.ClientEnv) error {
	if ce == nil {
		return nil
	}
	steps, err := ce.Steps()
	if err != nil {
		return err
	}
	for _, s := range steps {
		skip := ""
		if len(s.Present) > 0 {
			skip = " (skipped when " + strings.Join(s.Present, " and ") + " exist)"
		}
		var env []string
		for _, k := range slices.Sorted(maps.Keys(s.Env)) {
			env = append(env, k+"="+s.Env[k])
		}
		fmt.Fprintf(w, "    setup:  %s: %s%s\n", s.Name, launch.Oneline(append(env, s.Argv...)), skip)
	}
	fmt.Fprintf(w, "    client: %s for every point of the arm\n", ce.AiperfProgram())
	return nil
}
