package slurm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// AllocSpec asks for several nodes to run job steps on (srun --jobid).
type AllocSpec struct {
	Name        string        // --job-name
	Nodes       int           // --nodes
	GPUsPerNode int           // --gres=gpu:N (0: none)
	TimeLimit   time.Duration // --time; the holder job also ends after it
	// Dir holds the holder job's script and output (Dir/slurm-alloc.sh,
	// Dir/slurm-alloc-<id>.out; IsAllocFile).
	Dir string
	// Poll is how often the job's state is read until it runs (default
	// 250 ms).
	Poll time.Duration
	// StartTimeout is how long the job may stay pending; past it the job
	// is cancelled and Allocate returns a *NotStartedError (0: no bound,
	// wait until it runs or ctx ends), as WaitOptions.StartTimeout.
	StartTimeout time.Duration
	// Progress, when set, receives a line while the job is not running
	// yet: its id, state, Slurm's reason and how long it has waited, when
	// first seen, on every change, and every PendingEvery in between.
	Progress func(line string)
}

// StartTimeoutFix is the fix for an allocation still pending at its start
// timeout (*NotStartedError), the flag sweep run --slurm and discover
// --slurm bound the wait with.
const StartTimeoutFix = "give --slurm-start-timeout a longer wait, or 0 to wait until the nodes are free, and run the same command again"

// PendingEvery is how often Allocate repeats the progress line of a job
// that stays pending with the same reason.
const PendingEvery = 30 * time.Second

// AllocScript is the holder job's script Allocate writes into its
// directory; its output is "slurm-alloc-<id>.out" beside it.
const AllocScript = "slurm-alloc.sh"

// IsAllocFile reports whether name (an entry of an allocation's
// directory) is a file Allocate writes there: AllocScript or the holder
// job's output.
func IsAllocFile(name string) bool {
	if name == AllocScript {
		return true
	}
	id, ok := strings.CutPrefix(name, "slurm-alloc-")
	id, ok2 := strings.CutSuffix(id, ".out")
	_, err := strconv.ParseUint(id, 10, 64)
	return ok && ok2 && err == nil
}

// Node is one node of an allocation: its name (srun --nodelist) and the
// address it is reached at (NodeAddr).
type Node struct {
	Name, Addr string
}

// Allocation is a running holder job whose nodes run job steps.
type Allocation struct {
	ID    JobID
	Nodes []Node
}

// StepArgv is the srun prefix that runs a command as a step of the
// allocation on the node with address addr: one task, sharing the
// node's resources with the other steps (--overlap), named name.
func (a *Allocation) StepArgv(addr, name string) ([]string, error) {
	i := slices.IndexFunc(a.Nodes, func(n Node) bool { return n.Addr == addr || n.Name == addr })
	if i < 0 {
		return nil, fmt.Errorf("job %s has no node at %s (its nodes: %v)", a.ID, addr, a.Nodes)
	}
	return []string{"srun", "--jobid=" + string(a.ID), "--nodes=1", "--ntasks=1", "--nodelist=" + a.Nodes[i].Name,
		"--overlap", "--kill-on-bad-exit=1", "--job-name=" + name, "--"}, nil
}

// Allocate submits a holder job over spec.Nodes nodes (a batch step that
// sleeps until the time limit) and waits until it runs; its nodes then
// run job steps (StepArgv) until Release. Allocating with sbatch, not
// salloc --no-shell, gives the job id on stdout (--parsable) and the
// job's own time limit as a bound if its caller dies.
func (c *Client) Allocate(ctx context.Context, spec AllocSpec) (*Allocation, error) {
	if spec.Nodes < 1 || spec.TimeLimit <= 0 || spec.Dir == "" {
		return nil, errors.New("slurm allocation: nodes, a time limit and a directory are required")
	}
	script := filepath.Join(spec.Dir, AllocScript)
	if err := os.WriteFile(script, []byte(WrapperScript), 0o755); err != nil {
		return nil, err
	}
	js := JobSpec{Name: spec.Name, GPUs: spec.GPUsPerNode, TimeLimit: spec.TimeLimit, Dir: spec.Dir,
		Output:  filepath.Join(spec.Dir, "slurm-alloc-%j.out"),
		Options: []string{"--nodes=" + strconv.Itoa(spec.Nodes), "--ntasks-per-node=1"},
		Script:  script, Argv: []string{"sleep", strconv.Itoa(int(spec.TimeLimit / time.Second))}}
	id, err := c.Submit(ctx, js)
	if err != nil {
		return nil, err
	}
	a, err := c.awaitNodes(ctx, id, spec)
	if err != nil {
		// Never leave the job behind: cancel it with a context of its own.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = c.Release(cctx, &Allocation{ID: id})
		return nil, err
	}
	return a, nil
}

// awaitNodes polls the holder job until it runs, reporting it on
// spec.Progress while it does not.
func (c *Client) awaitNodes(ctx context.Context, id JobID, spec AllocSpec) (*Allocation, error) {
	poll := spec.Poll
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	began := time.Now()
	var said string // the state and reason last reported
	var saidAt time.Time
	for {
		out, err := c.Cmd.Run(ctx, []string{"scontrol", "show", "job", "-o", string(id)})
		if err != nil {
			return nil, err
		}
		f := scontrolFields(string(out))
		switch st := State(f["JobState"]); {
		case st == "RUNNING":
			return c.nodes(ctx, id, f["NodeList"])
		case st.Done():
			return nil, fmt.Errorf("slurm allocation %s ended before it ran: %s (%s)", id, st, f["Reason"])
		}
		waited := time.Since(began)
		if now := f["JobState"] + " " + f["Reason"]; spec.Progress != nil && (now != said || time.Since(saidAt) >= PendingEvery) {
			line := fmt.Sprintf("slurm job %s %s", id, f["JobState"])
			if r := f["Reason"]; r != "" && r != "None" {
				line += " (reason " + r + ")"
			}
			line += "; waited " + waited.Round(time.Second).String()
			if spec.StartTimeout > 0 {
				line += " of " + spec.StartTimeout.String()
			}
			spec.Progress(line)
			said, saidAt = now, time.Now()
		}
		if spec.StartTimeout > 0 && waited > spec.StartTimeout {
			return nil, &NotStartedError{ID: id, Waited: waited, Reason: f["Reason"]}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// nodes resolves a job's node list (mn[1-2]) to names and addresses.
func (c *Client) nodes(ctx context.Context, id JobID, list string) (*Allocation, error) {
	out, err := c.Cmd.Run(ctx, []string{"scontrol", "show", "hostnames", list})
	if err != nil {
		return nil, err
	}
	a := &Allocation{ID: id}
	for name := range strings.FieldsSeq(string(out)) {
		no, err := c.Cmd.Run(ctx, []string{"scontrol", "show", "node", "-o", name})
		if err != nil {
			return nil, err
		}
		addr := scontrolFields(string(no))["NodeAddr"]
		if addr == "" {
			addr = name
		}
		a.Nodes = append(a.Nodes, Node{Name: name, Addr: addr})
	}
	if len(a.Nodes) == 0 {
		return nil, fmt.Errorf("slurm allocation %s runs on no node (NodeList=%q)", id, list)
	}
	return a, nil
}

// Release cancels the allocation and waits (up to 30 s) until Slurm no
// longer runs it, so none of its steps is left.
func (c *Client) Release(ctx context.Context, a *Allocation) error {
	if err := c.Cancel(ctx, a.ID); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := c.Cmd.Run(ctx, []string{"scontrol", "show", "job", "-o", string(a.ID)})
		if err != nil {
			// A job slurmctld has forgotten is gone.
			if ce, ok := errors.AsType[*CommandError](err); ok && strings.Contains(ce.Stderr, "Invalid job id") {
				return nil
			}
			return err
		}
		st := State(scontrolFields(string(out))["JobState"])
		if st.Done() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("slurm allocation %s still %s 30 s after scancel", a.ID, st)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// scontrolFields are the KEY=VALUE words of scontrol's one-line (-o) output.
func scontrolFields(s string) map[string]string {
	f := map[string]string{}
	for w := range strings.FieldsSeq(s) {
		if k, v, ok := strings.Cut(w, "="); ok {
			f[k] = v
		}
	}
	return f
}

// Hosts places a router and workers on the allocation's nodes: the
// router's address first (the first node, where the client runs too),
// then worker i's, on node i. The allocation needs a node per worker.
func (a *Allocation) Hosts(workers int) ([]string, error) {
	if workers > len(a.Nodes) {
		return nil, fmt.Errorf("job %s has %d node(s) for %d worker(s)", a.ID, len(a.Nodes), workers)
	}
	hosts := []string{a.Nodes[0].Addr}
	for _, n := range a.Nodes[:workers] {
		hosts = append(hosts, n.Addr)
	}
	return hosts, nil
}
