// Package point runs one benchmark point as `sweep run` does: a point of
// the matrix named by its key, layout and concurrency, or one planned
// elsewhere (a plan file), on this host; through its runner's launcher
// (Request.Launch: allocate, import the image, run in it, release); or a
// disaggregated multi-node point, simulated on this host or on the nodes
// of a Slurm allocation, or submitted as its launcher submits its job.
//
// It sits above sweep/run (one point's processes), sweep/launch (a
// runner's host commands) and sweep/executor/slurm (allocations): it
// chooses among them, claims the output directory, reports progress and
// prints the point's summary.
package point

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"sweep/configs/matrix"
	"sweep/internal/simproto"
	"sweep/internal/usage"
	"sweep/metrics/result"
	"sweep/recipes"
	"sweep/recipes/models"
	"sweep/sweep/launch"
	"sweep/sweep/run"
)

// Request is one point to run and how. Errors about what it asks for are
// *usage.Error.
type Request struct {
	// Key names the point unless PlanFile is set.
	Key
	// Row is a single-node row picked elsewhere (an arm's row at a
	// concurrency off its conc-list: sweep sim agreement's frontier
	// point), planned instead of Key's.
	Row *matrix.Row
	// PlanFile is a point planned elsewhere (one element of `sweep plan
	// --format json`), run instead of planning by Key.
	PlanFile string
	// Out is the output directory (made absolute).
	Out string
	// Force reuses a non-empty Out.
	Force bool
	// Mode chooses the engine (real or simulated) and the client.
	run.Mode
	// Plan are the planning options (its Port 0: the default port, or a
	// free one when simulating).
	Plan recipes.PlanOptions
	// Point are the runner's options.
	Point run.Options
	// StopGraceSet is Point.StopGrace given (0 then means no grace);
	// SimClockSet and TimeScaleSet are the clock and the time scale given
	// (a multi-node point defaults to the wall clock at
	// run.DefaultMultiNodeTimeScale).
	StopGraceSet, SimClockSet, TimeScaleSet bool

	// Launch runs the point the way the runner's launcher does: allocate,
	// import the image, run engine and client inside it.
	Launch bool
	// Site changes the runner profile's site facts (key=value).
	Site []string
	// SweepBinary is the sweep mounted into the container (default: this one).
	SweepBinary string
	// JobID is an allocation to run in (default $SLURM_JOB_ID).
	JobID string
	// Inferencex is the host's InferenceX checkout whose utils/aiperf the
	// launched point installs into a per-job venv (launch.ClientSetup).
	Inferencex string
	// SubmitDir is where a multi-node job is submitted from.
	SubmitDir string
	// Slurm runs a simulated multi-node point's roles as job steps on the
	// nodes of a Slurm allocation.
	Slurm bool

	// Generator loads the configs (called when the point is planned by Key).
	Generator func() (*matrix.Generator, error)
	// FreePort finds a free port for a simulated point (and the ports
	// recipes.RouterPorts puts beside it); FreePorts finds n free ports.
	FreePort  func() (int, error)
	FreePorts func(n int) ([]int, error)
	// Stdout gets the summary, Stderr the progress.
	Stdout, Stderr io.Writer
}

// Run runs the point. A point already completed in Out is a no-op
// without Force. An interrupted point's error wraps context.Canceled.
func Run(ctx context.Context, r *Request) error {
	started := time.Now()
	out, err := filepath.Abs(r.Out)
	if err != nil {
		return err
	}
	if r.Launch {
		return r.runLaunched(ctx, out, started)
	}
	var p *recipes.Point
	if r.PlanFile != "" {
		if p, err = ReadPlanFile(r.PlanFile, out); err != nil {
			return err
		}
	} else {
		g, err := r.Generator()
		if err != nil {
			return err
		}
		if r.Row == nil {
			multi, err := r.MultiNodeRows(g)
			if err != nil {
				return err
			}
			if len(multi) > 0 {
				return r.runMultiNode(ctx, out, started, multi)
			}
		}
		if r.Slurm {
			return usage.Errorf("--slurm runs multi-node keys only; %s is a single-node key (sweep discover --executor slurm runs single-node arms as Slurm jobs)", r.ConfigKey)
		}
		if p, err = r.PlanRow(g, out); err != nil {
			return err
		}
	}
	row := p.Row
	if len(p.ClientSetup) > 0 {
		// In the launched container: the client's environment first, so
		// the aiperf it makes is there to be chosen.
		if err := launch.RunSetup(ctx, p.ClientSetup, launch.ExecSteps{Out: r.Stderr}, r.progress(started)); err != nil {
			return err
		}
	}
	setup, err := r.Setup(r.Plan.AiperfVersion, false)
	if err != nil {
		return err
	}
	setup.ALTolerance = r.Point.ALTolerance
	spec, err := run.FromPlan(p, setup)
	if err != nil {
		return err
	}
	client := fmt.Sprintf("%s (%s)", spec.ClientInfo.Name, setup.ClientWhy)
	engine := "engine: " + p.Engine.Argv[0]
	if r.Simulate {
		engine = fmt.Sprintf("simulated %s on %s, time scale %gx", row.Framework, spec.Engine.Env[simproto.EnvGPU], r.TimeScale)
		if setup.Virtual() {
			engine = fmt.Sprintf("simulated %s on %s, virtual clock", row.Framework, spec.Engine.Env[simproto.EnvGPU])
		}
		if c := spec.Simulation.Calibration; c != nil {
			engine += ", " + c.String()
		}
	}
	fmt.Fprintf(r.Stderr, "point %s %s (recipe %s)\n  %s; client: %s\n  output: %s\n",
		row.ConfigKey, result.RowIdentity(&row).PointLabel(row.Conc), p.Recipe, engine, client, out)
	return r.runSpec(ctx, spec, out, started)
}

// PlanRow plans the point Row is, else the one Key names, writing into
// out; with Plan.Port 0 it takes the default port, or a free one when
// simulating.
func (r *Request) PlanRow(g *matrix.Generator, out string) (*recipes.Point, error) {
	row, err := r.Row, error(nil)
	if row == nil {
		if row, err = r.SelectRow(g); err != nil {
			return nil, err
		}
	}
	if r.Plan.Port == 0 {
		r.Plan.Port = recipes.DefaultPort
		if r.Simulate {
			if r.Plan.Port, err = r.FreePort(); err != nil {
				return nil, err
			}
		}
	}
	r.Plan.ResultDir = out
	r.Plan.Eval = r.Eval
	r.Plan.Runners = g.Runners
	r.Plan = models.WithBuiltin(r.Plan)
	return planOne(row, r.Plan)
}

// progress prints a line on Stderr behind the time since started.
func (r *Request) progress(started time.Time) func(string) {
	return func(line string) {
		fmt.Fprintf(r.Stderr, "[%6s] %s\n", time.Since(started).Round(time.Second), line)
	}
}
