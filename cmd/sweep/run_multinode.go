package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"sweep/configs/matrix"
	"sweep/recipes"
	"sweep/sweep/executor/slurm"
	"sweep/sweep/launch"
	"sweep/sweep/run"
)

// multiNodeRows are the multi-node agentic rows of --config-key (none for
// a single-node key).
func (o *runOptions) multiNodeRows(g *matrix.Generator) (matrix.Matrix, error) {
	key, err := resolveRunKey(g.Masters, o.ConfigKey)
	if err != nil {
		return nil, err
	}
	rows, err := g.TestConfig(matrix.TestConfigOptions{ConfigKeys: []string{key}, ScenarioTypes: []string{"agentic-coding"}, EvalOptions: matrix.EvalOptions{NoEvals: true}})
	if err != nil {
		return nil, matrixError(err)
	}
	return slices.DeleteFunc(rows, func(r *matrix.Row) bool { return r.Kind != matrix.AgenticMultiNode }), nil
}

// selectMultiNodeRow is the row of a multi-node key whose prefill layout
// is --tp/--ep/--dp-attn and whose concurrencies hold --conc.
func (o *runOptions) selectMultiNodeRow(rows matrix.Matrix) (*matrix.Row, error) {
	var have []string
	for _, r := range rows {
		p := r.Prefill
		if p.TP == o.TP && p.EP == o.EP && p.DPAttn == o.DPAttn && slices.Contains(r.Concs, o.Conc) {
			r.StampFingerprint()
			return r, nil
		}
		for _, c := range r.Concs {
			have = append(have, fmt.Sprintf("--tp %d --ep %d%s --conc %d  (%s)", p.TP, p.EP, map[bool]string{true: " --dp-attn"}[p.DPAttn], c, r.ExpName))
		}
	}
	return nil, &FlagError{Err: fmt.Errorf("%s has no multi-node point with prefill tp%d ep%d dp-attn=%t at conc %d; --tp, --ep and --dp-attn name the prefill workers' layout, and its points are:\n  %s",
		rows[0].ConfigKey, o.TP, o.EP, o.DPAttn, o.Conc, strings.Join(have, "\n  "))}
}

// runMultiNode is `sweep run --simulate` on a multi-node key: the
// disaggregated point's prefill and decode workers (simulated engines on
// this host's loopback), the PD router in front of them and the client
// against the router, on the compressed wall clock.
func runMultiNode(ctx context.Context, o *runOptions, out string, started time.Time, rows matrix.Matrix) error {
	if !o.Simulate {
		return flagErrorf("%s is a multi-node key: its points run as one Slurm job over several nodes (sweep plan --config-keys %s shows the job); on this host they run only with --simulate", o.ConfigKey, o.ConfigKey)
	}
	if err := o.multiNodeClock(o.simClockSet, o.timeScaleSet); err != nil {
		return err
	}
	row, err := o.selectMultiNodeRow(rows)
	if err != nil {
		return err
	}
	setup, err := o.setup(o.Plan.AiperfVersion, false)
	if err != nil {
		return err
	}
	setup.ALTolerance = o.Point.ALTolerance
	po := o.Plan
	po.ResultDir = out
	po.Runners = nil
	planned, err := recipes.PlanMultiNode(matrix.Matrix{row}, withCatalog(po))
	if err != nil {
		return planFailure(err)
	}
	workers := recipes.LocalWorkerCount(&planned[0])
	ports, err := freePorts(1 + workers)
	if err != nil {
		return err
	}
	// plan lays the point out with the router and workers at hosts (nil:
	// this host's loopback) and makes its Spec.
	plan := func(hosts []string, setup run.Setup) (*recipes.LocalMultiNode, run.Spec, error) {
		l, err := recipes.PlanMultiNodeOnHosts(row, o.Conc, withCatalog(po), ports, hosts)
		if errors.Is(err, recipes.ErrNotSupported) {
			return nil, run.Spec{}, &FlagError{Err: err}
		}
		if err != nil {
			return nil, run.Spec{}, fmt.Errorf("plan: %w", err)
		}
		spec, err := run.FromLocalMultiNode(l, setup)
		if err != nil {
			return nil, run.Spec{}, &FlagError{Err: err}
		}
		return l, spec, nil
	}
	// The plan on this host checks the point before anything is allocated
	// and names its result.
	l, spec, err := plan(nil, setup)
	if err != nil {
		return err
	}
	announce := func(l *recipes.LocalMultiNode, spec run.Spec, where string) {
		var roles []string
		for _, w := range l.Workers {
			roles = append(roles, w.Name)
		}
		fmt.Fprintf(o.IO.ErrOut, "point %s %s conc %d (multi-node, disaggregated, KV transfer %s)\n  simulated %s on %s, time scale %gx: %s behind the PD router%s; client: %s (%s)\n  output: %s\n",
			row.ConfigKey, row.ExpName, o.Conc, l.Point.KVTransfer, row.Framework, spec.Simulation.GPU, o.TimeScale,
			strings.Join(roles, ", "), where, spec.ClientInfo.Name, setup.ClientWhy, out)
	}
	if !o.Slurm {
		announce(l, spec, "")
		return o.runSpec(ctx, spec, out, started)
	}
	return o.runClaimed(ctx, spec.Name, out, started, func() (run.Spec, func(), error) {
		c := slurm.NewClient(slurm.Exec{})
		gpus := 0
		for _, r := range planned[0].Roles {
			gpus = max(gpus, r.GPUsPerNode)
		}
		// The point's planned time, twice, and ten minutes for the rest.
		d := time.Duration(recipes.Duration(row, po.Fast, po.Duration)) * time.Second
		limit := 2*time.Duration(float64(d)/o.TimeScale) + 10*time.Minute
		a, err := c.Allocate(ctx, slurm.AllocSpec{Name: "sweep-" + row.ConfigKey, Nodes: workers, GPUsPerNode: gpus, TimeLimit: limit, Dir: out})
		if err != nil {
			return run.Spec{}, nil, fmt.Errorf("allocating %d node(s) on the Slurm cluster: %w", workers, err)
		}
		release := func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if err := c.Release(rctx, a); err != nil {
				fmt.Fprintf(o.IO.ErrOut, "releasing Slurm job %s: %v\n", a.ID, err)
				return
			}
			fmt.Fprintf(o.IO.ErrOut, "released Slurm job %s\n", a.ID)
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
		announce(l, spec, fmt.Sprintf(" on Slurm job %s (%s)", a.ID, strings.Join(nodes, ", ")))
		return spec, release, nil
	})
}

// runMultiNodeLaunched is `sweep run --launch` on a multi-node key: the
// row holding --conc is submitted as its launcher submits it (sbatch of
// job.slurm, or srtctl apply), from --submit-dir, and waited for; the job
// runs every concurrency of the row and writes InferenceX's
// <RESULT_FILENAME>_conc<N>.json where its launcher puts them. Ctrl-C
// cancels the job.
func runMultiNodeLaunched(ctx context.Context, o *runOptions, out string, started time.Time, rows matrix.Matrix) error {
	if o.Simulate {
		return flagErrorf("--launch --simulate on a multi-node key: a simulated multi-node point runs on this host (drop --launch)")
	}
	row, err := o.selectMultiNodeRow(rows)
	if err != nil {
		return err
	}
	po := o.Plan
	po.Runners = nil
	planned, err := recipes.PlanMultiNode(matrix.Matrix{row}, withCatalog(po))
	if err != nil {
		return planFailure(err)
	}
	dir := o.SubmitDir
	if dir == "" {
		dir = "."
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	logs := filepath.Join(out, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	j := launch.MultiNodeJob{Point: &planned[0], Dir: dir, LogsDir: logs, Exec: launch.Exec{Stdout: o.IO.Out, Stderr: o.IO.ErrOut,
		Progress: func(line string) {
			fmt.Fprintf(o.IO.ErrOut, "[%6s] %s\n", time.Since(started).Round(time.Second), line)
		}}}
	if u, err := user.Current(); err == nil {
		j.User = u.Username
	}
	submit, err := j.Submit()
	if err != nil {
		return &FlagError{Err: err}
	}
	p := &planned[0]
	fmt.Fprintf(o.IO.ErrOut, "point %s %s conc %v: launch_%s.sh submits with %s from %s (%d node(s), %d worker GPU(s))\n  %s\n  results: %s_conc<N>.json\n",
		row.ConfigKey, row.ExpName, row.Concs, p.Launcher, p.Submitter, dir, p.Nodes, p.GPUs, launch.Oneline(submit.Argv), p.ResultFilename)
	id, err := j.Run(ctx)
	switch {
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("job %s cancelled: %v: %w", id, err, context.Canceled)
	case err != nil:
		return &exitCodeError{Code: exitError, Err: err}
	}
	fmt.Fprintf(o.IO.Out, "job %s finished; its logs are in %s\n", id, logs)
	if p.Submitter != "sbatch" {
		return nil
	}
	// job.slurm writes the results into the checkout (the container's
	// workspace), where InferenceX's workflow looks for them.
	found, _ := filepath.Glob(filepath.Join(dir, p.ResultFilename+"_conc*.json"))
	if len(found) == 0 {
		return &exitCodeError{Code: exitError, Err: fmt.Errorf("job %s wrote no %s_conc*.json in %s (see %s)", id, p.ResultFilename, dir, logs)}
	}
	for _, f := range found {
		fmt.Fprintf(o.IO.Out, "  result: %s\n", f)
	}
	return nil
}
