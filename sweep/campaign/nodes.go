package campaign

import (
	"context"
	"time"
)

// NodeAllocator allocates the nodes of a disaggregated multi-node
// deployment (a Slurm allocation).
type NodeAllocator interface {
	// Allocate allocates a node per worker of the arm's deployment.
	Allocate(ctx context.Context, arm *Arm, workers int) (Nodes, error)
}

// Nodes are allocated nodes.
type Nodes interface {
	// Hosts are the router's (and client's) address, then one per worker.
	Hosts() []string
	// OnHost is the argv prefix that runs the process name at host
	// (run.Setup.OnHost).
	OnHost(host, name string) ([]string, error)
	// Release gives the nodes back; it returns when they are.
	Release(ctx context.Context) error
}

// release gives nodes back, also when ctx is cancelled (bounded by a
// minute).
func release(ctx context.Context, nodes Nodes) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	return nodes.Release(rctx)
}
