package slurm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"sweep/sweep/campaign"
)

// ArmNodes allocates each disaggregated multi-node deployment of a sweep
// (campaign.RunBackend.Nodes) as one allocation of Client: a node per
// worker, GPUs per node the arm's, a time limit of twice the arm's
// planned wall time plus ten minutes. The deployment's roles run as job
// steps on its nodes; the allocation is released when the deployment
// stops (also after a failure or an interrupt).
type ArmNodes struct {
	Client *Client
	// Dir holds the holder jobs' scripts and outputs.
	Dir string
	// Wall is the arm's planned wall time (its points' load and the
	// deployment's start), before doubling.
	Wall func(*campaign.Arm) time.Duration
	// StartTimeout bounds how long an allocation may stay pending (0: no
	// bound; AllocSpec.StartTimeout).
	StartTimeout time.Duration
	// Progress receives a line per allocation and release, and the
	// allocation's state while it is pending (nil: none).
	Progress io.Writer
}

// Allocate implements campaign.NodeAllocator.
func (n *ArmNodes) Allocate(ctx context.Context, arm *campaign.Arm, workers int) (campaign.Nodes, error) {
	limit := 10 * time.Minute
	if n.Wall != nil {
		limit += 2 * n.Wall(arm)
	}
	spec := AllocSpec{Name: "sweep-" + arm.ConfigKey, Nodes: workers, GPUsPerNode: arm.GPUs, TimeLimit: limit, Dir: n.Dir, StartTimeout: n.StartTimeout}
	if n.Progress != nil {
		spec.Progress = func(line string) { n.printf("arm %d: %s\n", arm.Index+1, line) }
	}
	a, err := n.Client.Allocate(ctx, spec)
	if _, ok := errors.AsType[*NotStartedError](err); ok {
		return nil, fmt.Errorf("allocating %d node(s) for arm %d on the Slurm cluster: %w; %s", workers, arm.Index+1, err, StartTimeoutFix)
	}
	if err != nil {
		return nil, fmt.Errorf("allocating %d node(s) for arm %d on the Slurm cluster: %w", workers, arm.Index+1, err)
	}
	hosts, err := a.Hosts(workers)
	if err != nil {
		n.release(ctx, a)
		return nil, err
	}
	var nodes []string
	for _, nd := range a.Nodes {
		nodes = append(nodes, nd.Name+" "+nd.Addr)
	}
	n.printf("arm %d: Slurm job %s (%s)\n", arm.Index+1, a.ID, strings.Join(nodes, ", "))
	return &armAlloc{n: n, a: a, hosts: hosts}, nil
}

func (n *ArmNodes) printf(format string, args ...any) {
	if n.Progress != nil {
		fmt.Fprintf(n.Progress, format, args...)
	}
}

func (n *ArmNodes) release(ctx context.Context, a *Allocation) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := n.Client.Release(rctx, a); err != nil {
		return fmt.Errorf("releasing Slurm job %s: %w", a.ID, err)
	}
	n.printf("released Slurm job %s\n", a.ID)
	return nil
}

// armAlloc is one deployment's allocation as campaign.Nodes.
type armAlloc struct {
	n     *ArmNodes
	a     *Allocation
	hosts []string
}

func (x *armAlloc) Hosts() []string { return x.hosts }

func (x *armAlloc) OnHost(host, name string) ([]string, error) { return x.a.StepArgv(host, name) }

func (x *armAlloc) Release(ctx context.Context) error { return x.n.release(ctx, x.a) }
