// Package executor picks the executor of a sweep's arms by its name: local
// (sweep/executor/local: this node's GPUs) or slurm
// (sweep/executor/slurm: one batch job per arm), each built with the
// sweep's watchdog.
//
//	var name executor.Name // bound to --executor
//	ex, err := executor.New(executor.Options{Name: name, Dir: dir, Schedule: sched, Cost: cost, ...})
//	sum, err := campaign.Run(ctx, campaign.Options{Executor: ex, ...})
package executor

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"sweep/recipes"
	"sweep/sweep/campaign"
	"sweep/sweep/executor/local"
	"sweep/sweep/executor/slurm"
	"sweep/sweep/launch"
	"sweep/sweep/run"
)

// Name names an executor; the zero value is Local.
type Name string

// The executors.
const (
	Local Name = "local"
	Slurm Name = "slurm"
)

// Set parses a name as --executor takes it.
func (n *Name) Set(s string) error {
	switch Name(s) {
	case Local, Slurm:
		*n = Name(s)
		return nil
	}
	return fmt.Errorf("want local or slurm (GitHub Actions fans points out with `sweep ci matrix`)")
}

func (n Name) String() string {
	if n == "" {
		return string(Local)
	}
	return string(n)
}

// Type is the flag's value type in help.
func (n *Name) Type() string { return "string" }

// Options are the inputs of New.
type Options struct {
	Name Name
	// Nodes, with the local executor, places each disaggregated multi-node
	// deployment on nodes it allocates (campaign.RunBackend.Nodes; nil:
	// on this host's loopback).
	Nodes campaign.NodeAllocator
	// Dir is the sweep directory.
	Dir      string
	Schedule *campaign.Schedule
	// Setup and Point say how each point runs (Point already adjusted for
	// a simulation, run.Options.Simulated).
	Setup run.Setup
	Point run.Options
	// Cost gives each point's watchdog (Cost.Watchdog).
	Cost *campaign.Cost
	// Adaptive runs only the points the knee search asks for
	// (campaign.AdaptiveFor); local only.
	Adaptive bool
	// Official runs official points (campaign.RunBackend.Official).
	Official bool

	// Local: the node's GPU ids and the most arms at once (0: as many as
	// fit).
	GPUs        []int
	MaxParallel int

	// Slurm: Program runs sweep on a node (its absolute path); ArmProgram,
	// when set, gives an arm's program instead (a launched arm's container
	// step, whose runner profile applies even when simulated); Profile
	// gives the runner profiles (nil: recipes.ProfileFor); Partition
	// overrides the profiles'; Poll and StartTimeout as slurm.Executor has
	// them; Progress takes the job-state lines.
	Program    []string
	ArmProgram func(context.Context, *campaign.Arm) (campaign.ArmCommand, error)
	// Local: Containers, when set, runs each arm in its runner's docker
	// container (its Settings and PointTimeout are filled in here).
	Containers   *local.ContainerArms
	Profile      func(runner string) (recipes.Profile, error)
	Partition    string
	Poll         time.Duration
	StartTimeout time.Duration
	Progress     func(string)
}

// New returns the executor o.Name names.
func New(o Options) (campaign.Executor, error) {
	watchdog := o.Cost.Watchdog(o.Setup.Simulate, o.Setup.TimeScale)
	switch o.Name {
	case Slurm:
		var onPort func(*campaign.Arm, []*campaign.Point, int) ([]*campaign.Point, error)
		if o.Schedule != nil {
			onPort = o.Schedule.OnPort
		}
		if o.Adaptive {
			return nil, fmt.Errorf("adaptive discovery runs with the local executor only (the Slurm job runs a fixed list of points)")
		}
		return &slurm.Executor{
			Client: slurm.NewClient(slurm.Exec{Timeout: time.Minute}), Dir: o.Dir, Program: o.Program, ArmProgram: o.ArmProgram,
			Settings: campaign.NewArmSettings(o.Setup, o.Point),
			Poll:     o.Poll, StartTimeout: o.StartTimeout, PointTimeout: watchdog, Progress: o.Progress,
			// --time: the arm's planned time on its node, twice over.
			TimeLimit: slurm.WatchdogTimeLimit(watchdog),
			Spec:      slurm.ProfileSpec(o.Profile, !o.Setup.Simulate || o.ArmProgram != nil, o.Partition),
			JobPort:   jobPort(o.Profile, !o.Setup.Simulate), OnPort: onPort,
		}, nil
	case Local, "":
		backend := &campaign.RunBackend{Dir: o.Dir, Setup: o.Setup, Options: o.Point, Official: o.Official, Nodes: o.Nodes}
		armOpts := campaign.ArmOptions{PointTimeout: watchdog, Choose: o.Choose(), Ended: o.Ended()}
		ex := &local.Executor{GPUs: o.GPUs, MaxParallel: o.MaxParallel, Backend: backend, Arm: armOpts}
		if o.Containers != nil {
			if o.Adaptive {
				return nil, fmt.Errorf("adaptive discovery runs arms in this process: not with arms in containers (--launch)")
			}
			c := *o.Containers
			c.Settings, c.PointTimeout = campaign.NewArmSettings(o.Setup, o.Point), watchdog
			ex.RunArm = c.Run
		}
		return ex, nil
	}
	return nil, fmt.Errorf("executor %q: want local or slurm", string(o.Name))
}

// jobPort is slurm.Executor.JobPort from the runner profiles (nil:
// recipes.ProfileFor): a real engine's single-node arm whose launcher
// derives the port from the job id (recipes.PortFromJobID: MI325X and
// MI300X, whose jobs share nodes) has its server on the job's port
// (launch.PortOf), as InferenceX's launcher puts it; a simulated one
// keeps the free port planned here, as sweep run --launch does.
func jobPort(profile func(runner string) (recipes.Profile, error), real bool) func(*campaign.Arm) func(slurm.JobID) (int, error) {
	if !real {
		return nil
	}
	if profile == nil {
		profile = recipes.ProfileFor
	}
	return func(a *campaign.Arm) func(slurm.JobID) (int, error) {
		prof, err := profile(a.Runner)
		if err != nil || prof.Launch.Port != recipes.PortFromJobID || a.Nodes > 0 {
			return nil
		}
		return func(id slurm.JobID) (int, error) {
			n, err := strconv.Atoi(launch.PortOf(recipes.PortFromJobID, string(id), ""))
			if err != nil {
				return 0, fmt.Errorf("job id %q: not a number to derive the engine port from", id)
			}
			return n, nil
		}
	}
}

// Choose is how the arms choose their points: with Adaptive, the knee
// search over the sweep directory's results (campaign.AdaptiveFor); nil
// (every point) otherwise. New gives it to the local executor's arms and
// Sweep.Run to campaign.Run, which forms the jobs of a resume with it.
func (o Options) Choose() func(campaign.Job, map[string]campaign.Ran) []*campaign.Point {
	if !o.Adaptive {
		return nil
	}
	return campaign.AdaptiveFor(o.Dir, o.Schedule, o.Cost.Duration)
}

// Ended is, with Adaptive, why the knee search needs none of the points
// it did not run and the verdict it ends on (campaign.AdaptiveEndFor),
// which New gives the local executor's arms for their point_skip and
// search_end records; nil otherwise.
func (o Options) Ended() func(campaign.Job, map[string]campaign.Ran) campaign.SearchEnd {
	if !o.Adaptive {
		return nil
	}
	return campaign.AdaptiveEndFor(o.Dir, o.Schedule, o.Cost.Duration)
}

// Where says where the arms run, for the sweep's header line.
func (o Options) Where() string {
	if o.Name == Slurm {
		return "one Slurm job per arm"
	}
	return fmt.Sprintf("GPUs %v", o.GPUs)
}
