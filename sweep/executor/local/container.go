package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"sweep/internal/plural"
	"sweep/recipes"
	"sweep/sweep/campaign"
	"sweep/sweep/launch"
)

// ContainerArms runs each arm on this host in its runner's container, as
// a docker launcher (launch_mi325x-tw.sh) runs its recipe: the arm's job
// file goes to Dir/docker/, the launch (docker rm -f, docker run, docker
// rm -f) runs the mounted sweep's `run-arm` in the image with the arm's
// GPUs, and the arm's events are followed into the sweep's journal, as a
// Slurm arm's are; the container's own output (run-arm's raw event lines,
// the engine's) goes to Dir/docker/<arm job>.log, named on the progress
// line that starts it, as a Slurm job's goes to its log. Set it as an
// Executor's RunArm.
type ContainerArms struct {
	// Dir is the sweep directory, mounted at its own path in the container.
	Dir string
	// Plan builds the arm's launch with payload as the container's command
	// and the GPU ids' variables exported (launch.Build of the arm's
	// runner profile).
	Plan func(arm *campaign.Arm, gpus []int, payload []string) (*launch.Plan, error)
	// Sweep is the sweep binary's path in the container.
	Sweep string
	// Client, when set, gives an arm's client environment for its job file
	// (ArmJob.Client: run-arm makes it in the container).
	Client func(arm *campaign.Arm) (*recipes.ClientEnv, error)
	// Settings and PointTimeout go into the arm job file.
	Settings     campaign.ArmSettings
	PointTimeout func(*campaign.Point) time.Duration
	// Exec runs the launch (its Guard removes the container if this
	// process is killed); the output of the launch's commands (docker rm,
	// the container's docker run) goes to the arm's log, not to its Stdout
	// and Stderr.
	Exec launch.Exec
	// Poll is how often the events are read (default 1 s).
	Poll     time.Duration
	Progress func(string)
}

// Run runs one arm's job in a container and returns when the container
// has ended and been removed. Points the container started and did not
// finish fail with how it ended; if it could not run at all, every point
// it never started fails with the reason.
func (c *ContainerArms) Run(ctx context.Context, job campaign.Job, gpus []int, obs campaign.Observer) {
	arm := job.Arm
	progress := func(line string) {
		if c.Progress != nil {
			c.Progress(fmt.Sprintf("arm %d: %s", arm.Index+1, line))
		}
	}
	dir := filepath.Join(c.Dir, "docker")
	stem, err := "", os.MkdirAll(dir, 0o755)
	if err == nil {
		stem, err = campaign.NextArmJobStem(dir, arm.Index+1)
	}
	if err != nil {
		campaign.FailJob(job, obs, err.Error())
		return
	}
	jobFile, events, logFile := stem+".json", stem+".events.jsonl", stem+".log"
	aj := campaign.NewArmJob(job, c.PointTimeout, c.Settings)
	if c.Client != nil {
		aj.Client, err = c.Client(arm)
	}
	if err == nil {
		err = aj.Write(jobFile)
	}
	if err != nil {
		campaign.FailJob(job, obs, err.Error())
		return
	}
	pl, err := c.Plan(arm, gpus, []string{c.Sweep, "run-arm", "--job", jobFile, "--events", events})
	if err != nil {
		campaign.FailJob(job, obs, err.Error())
		return
	}
	logf, err := os.Create(logFile)
	if err != nil {
		campaign.FailJob(job, obs, err.Error())
		return
	}
	defer logf.Close()
	ex := c.Exec
	ex.Stdout, ex.Stderr = logf, logf
	progress(fmt.Sprintf("container %s on GPUs %v (%s; %s; log %s)", pl.ContainerName, gpus, pl.Launcher, plural.Count(len(job.Points), "point", "points"), logFile))
	remote := campaign.NewRemoteArm(events)
	forward := func() {
		if err := remote.Forward(ctx, obs); err != nil {
			progress(err.Error())
		}
	}
	done := make(chan error, 1)
	go func() {
		res, err := ex.Run(ctx, pl)
		done <- errors.Join(err, res.ReleaseErr)
	}()
	poll := c.Poll
	if poll <= 0 {
		poll = time.Second
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			forward()
		case runErr := <-done:
			forward()
			switch {
			case ctx.Err() != nil:
				remote.CloseOpen(job, obs, campaign.StatusInterrupted, "interrupted; container "+pl.ContainerName+" stopped")
			case runErr != nil:
				why := fmt.Sprintf("container %s: %v", pl.ContainerName, runErr)
				remote.CloseOpen(job, obs, campaign.StatusFailed, why)
				campaign.FailJob(remote.NotStarted(job), obs, why)
				progress(why)
			default:
				remote.CloseOpen(job, obs, campaign.StatusFailed, "container "+pl.ContainerName+" ended before the point did")
			}
			return
		}
	}
}
