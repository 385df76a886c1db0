package point

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"sweep/configs/matrix"
	"sweep/internal/usage"
	"sweep/recipes"
	"sweep/recipes/models"
	"sweep/sweep/executor/slurm"
	"sweep/sweep/run"
)

// runMultiNode is a simulated multi-node point: the disaggregated point's
// prefill and decode workers (simulated engines on this host's loopback,
// or with Slurm as job steps on the nodes of an allocation), the PD
// router in front of them and the client against the router, on the
// compressed wall clock.
func (r *Request) runMultiNode(ctx context.Context, out string, started time.Time, rows matrix.Matrix) error {
	if !r.Simulate {
		return usage.Errorf("%s is a multi-node key: its points run as one Slurm job over several nodes (sweep plan --config-keys %s shows the job); on this host they run only with --simulate", r.ConfigKey, r.ConfigKey)
	}
	if err := r.MultiNodeClock(r.SimClockSet); err != nil {
		return err
	}
	row, err := r.SelectMultiNodeRow(rows)
	if err != nil {
		return err
	}
	setup, err := r.Setup(r.Plan.AiperfVersion, false)
	if err != nil {
		return err
	}
	setup.ALTolerance = r.Point.ALTolerance
	po := r.Plan
	po.ResultDir = out
	po.Runners = nil
	planned, err := recipes.PlanMultiNode(matrix.Matrix{row}, models.WithBuiltin(po))
	if err != nil {
		return recipes.Failure(err)
	}
	workers := recipes.LocalWorkerCount(&planned[0])
	ports, err := r.FreePorts(1 + workers)
	if err != nil {
		return err
	}
	// plan lays the point out with the router and workers at hosts (nil:
	// this host's loopback) and makes its Spec.
	plan := func(hosts []string, setup run.Setup) (*recipes.LocalMultiNode, run.Spec, error) {
		l, err := recipes.PlanMultiNodeOnHosts(row, r.Conc, models.WithBuiltin(po), ports, hosts)
		if errors.Is(err, recipes.ErrNotSupported) {
			return nil, run.Spec{}, &usage.Error{Err: err}
		}
		if err != nil {
			return nil, run.Spec{}, fmt.Errorf("plan: %w", err)
		}
		spec, err := run.FromLocalMultiNode(l, setup)
		if err != nil {
			return nil, run.Spec{}, &usage.Error{Err: err}
		}
		return l, spec, nil
	}
	// The plan on this host checks the point before anything is allocated
	// and names its result.
	l, spec, err := plan(nil, setup)
	if err != nil {
		return err
	}
	// header is the point's first line: what it is.
	header := func() {
		fmt.Fprintf(r.Stderr, "point %s %s conc %d (multi-node, disaggregated, KV transfer %s)\n", row.ConfigKey, row.ExpName, r.Conc, l.Point.KVTransfer)
	}
	// details says how it runs: its roles, where, its client and output.
	details := func(l *recipes.LocalMultiNode, spec run.Spec, where string) {
		var roles []string
		for _, w := range l.Workers {
			roles = append(roles, w.Name)
		}
		calibration := ""
		if c := spec.Simulation.Calibration; c != nil {
			calibration = "; " + c.String()
		}
		fmt.Fprintf(r.Stderr, "  simulated %s on %s, time scale %gx: %s behind the PD router%s%s; client: %s (%s)\n  output: %s\n",
			row.Framework, spec.Simulation.GPU, r.TimeScale, strings.Join(roles, ", "), where, calibration, spec.ClientInfo.Name, setup.ClientWhy, out)
	}
	if !r.Slurm {
		header()
		details(l, spec, "")
		return r.runSpec(ctx, spec, out, started)
	}
	// The engines' commands run as steps of an allocation not made yet:
	// their argv is not compared.
	made := run.SpecMade(spec)
	made.Engine = nil
	pc := run.PointClaim{Dir: out, Name: spec.Name, Made: &made, AllocFiles: slurm.IsAllocFile}
	return r.runClaimed(ctx, pc, started, func() (run.Spec, func(), error) {
		header()
		bound := "until they are free (--slurm-start-timeout 0)"
		if r.SlurmStartTimeout > 0 {
			bound = fmt.Sprintf("up to %s (--slurm-start-timeout)", r.SlurmStartTimeout)
		}
		fmt.Fprintf(r.Stderr, "  allocating %d node(s) on the Slurm cluster; waiting %s\n", workers, bound)
		c := slurm.NewClient(slurm.Exec{})
		gpus := 0
		for _, role := range planned[0].Roles {
			gpus = max(gpus, role.GPUsPerNode)
		}
		// The point's planned time, twice, and ten minutes for the rest.
		d := time.Duration(recipes.Duration(row, po.Fast, po.Duration)) * time.Second
		limit := 2*time.Duration(float64(d)/r.TimeScale) + 10*time.Minute
		a, err := c.Allocate(ctx, slurm.AllocSpec{Name: "sweep-" + row.ConfigKey, Nodes: workers, GPUsPerNode: gpus, TimeLimit: limit, Dir: out,
			StartTimeout: r.SlurmStartTimeout, Progress: r.progress(started)})
		if _, ok := errors.AsType[*slurm.NotStartedError](err); ok {
			return run.Spec{}, nil, fmt.Errorf("allocating %d node(s) on the Slurm cluster: %w; %s", workers, err, slurm.StartTimeoutFix)
		}
		if err != nil {
			return run.Spec{}, nil, fmt.Errorf("allocating %d node(s) on the Slurm cluster: %w", workers, err)
		}
		release := func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if err := c.Release(rctx, a); err != nil {
				fmt.Fprintf(r.Stderr, "releasing Slurm job %s: %v\n", a.ID, err)
				return
			}
			fmt.Fprintf(r.Stderr, "released Slurm job %s\n", a.ID)
		}
		hosts, err := a.Hosts(workers)
		if err == nil {
			setup.OnHost = a.StepArgv
			l, spec, err = plan(hosts, setup)
		}
		if err != nil {
			release()
			return run.Spec{}, nil, err
		}
		var nodes []string
		for _, n := range a.Nodes {
			nodes = append(nodes, n.Name+" "+n.Addr)
		}
		details(l, spec, fmt.Sprintf(" on Slurm job %s (%s)", a.ID, strings.Join(nodes, ", ")))
		return spec, release, nil
	})
}
