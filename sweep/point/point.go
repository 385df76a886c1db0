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
	"path/filepath"
	"time"

	"sweep/internal/simproto"
	"sweep/internal/usage"
	"sweep/metrics/result"
	"sweep/recipes"
	"sweep/sweep/launch"
	"sweep/sweep/run"
)

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
		if r.PlanFile != "" {
			return fmt.Errorf("--plan %s: %w", r.PlanFile, err)
		}
		return err
	}
	if spec.Simulation != nil {
		name := row.ConfigKey + " " + result.RowIdentity(&row).PointLabel(row.Conc)
		if err := setup.CheckCalibrationReach([]string{name}, []*result.SimCalibration{spec.Simulation.Calibration}); err != nil {
			return err
		}
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
