package campaign

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"sweep/metrics/result"
	"sweep/recipes"
	"sweep/sweep/run"
)

// ServersDir is the subdirectory of a sweep directory that holds one
// directory per server start (its logs, command files and server.json).
const ServersDir = "servers"

// RunBackend starts servers with sweep/run on this machine: each point's
// files go to DIR/<point ID>/, each server's to DIR/servers/arm<N>-<k>/.
type RunBackend struct {
	// Dir is the sweep directory.
	Dir string
	// Setup swaps in the simulated engine or the built-in load generator.
	Setup run.Setup
	// Options tune the runner; OutDir is set per server and per point.
	Options run.Options
	// Official marks the points official: a result the client did not
	// stamp a valid submission for its scenario is invalid.
	Official bool
	// Nodes, when set, places each disaggregated multi-node deployment
	// (Point.Plan.MultiNode) on nodes it allocates, one allocation per
	// server start, released when the server stops (nil: every role on
	// this host's loopback).
	Nodes NodeAllocator

	mu     sync.Mutex
	starts map[int]int // server starts per arm in this process
}

// visibleDevices are the variables that pin an engine to its GPUs: CUDA's
// and both of ROCm's (HIP for the runtime, ROCR for the driver layer).
var visibleDevices = []string{"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"}

// StartServer starts the server first's plan names (an arm's server),
// pinned to gpus when gpus is not empty; a multi-node deployment on the
// nodes Nodes allocates for it when Nodes is set.
func (b *RunBackend) StartServer(ctx context.Context, arm *Arm, first *Point, gpus []int) (_ Server, err error) {
	setup := b.Setup
	// A shared server is the arm's largest point's plan: its sidecar files
	// lie in that point's directory, inside the campaign's.
	if setup.Dir == "" {
		setup.Dir = b.Dir
	}
	var nodes Nodes
	if l := first.Plan.MultiNode; l != nil && b.Nodes != nil {
		if nodes, err = b.Nodes.Allocate(ctx, arm, len(l.Workers)); err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				if rerr := release(ctx, nodes); rerr != nil {
					err = fmt.Errorf("%w; %v", err, rerr)
				}
			}
		}()
		setup.OnHost = nodes.OnHost
	}
	spec, err := specOn(&first.Plan, setup, nodes)
	if err != nil {
		return nil, err
	}
	if len(gpus) > 0 {
		ids := make([]string, len(gpus))
		for i, g := range gpus {
			ids[i] = strconv.Itoa(g)
		}
		for _, v := range visibleDevices {
			spec.Engine.Env[v] = strings.Join(ids, ",")
		}
	}
	b.mu.Lock()
	if b.starts == nil {
		b.starts = map[int]int{}
	}
	b.starts[arm.Index]++
	n := b.starts[arm.Index]
	b.mu.Unlock()
	o := b.Options
	if o.OutDir, err = b.serverDir(arm, n); err != nil {
		return nil, err
	}
	srv, rec, err := run.StartServer(ctx, spec.ServerSpec, o)
	if err != nil {
		// One line, as a point's failure (run.Stage.Detail): the log line
		// that says why, and where the server's logs are.
		err = run.CheckDiskFull(o.OutDir, err)
		if rec != nil {
			if f := rec.Failed(); f != nil && f.Cause() != "" && !strings.Contains(err.Error(), f.Cause()) {
				err = fmt.Errorf("%w; from its log: %s", err, f.Cause())
			}
		}
		return nil, b.onSweepDisk(fmt.Errorf("%w (its logs: %s)", err, o.OutDir))
	}
	return &runServer{b: b, srv: srv, setup: setup, nodes: nodes}, nil
}

// onSweepDisk names the sweep directory as the full disk of err, a
// failure for want of space in a directory inside it (a point's, a
// server's: run.DiskFullError), which the sweep reports and stops on;
// one for want of space elsewhere (/dev/shm, a cache: Elsewhere) keeps
// its disk, and any other err is returned as it is.
func (b *RunBackend) onSweepDisk(err error) error {
	if df, ok := errors.AsType[*run.DiskFullError](err); ok && !df.Elsewhere {
		df.Dir = b.Dir // made for this failure, in sweep/run
	}
	return err
}

// specOn is the Spec of p, a multi-node point laid out on nodes when
// nodes is not nil.
func specOn(p *recipes.Point, setup run.Setup, nodes Nodes) (run.Spec, error) {
	if p.MultiNode == nil || nodes == nil {
		return run.FromPlan(p, setup)
	}
	l, err := p.MultiNode.OnHosts(nodes.Hosts())
	if err != nil {
		return run.Spec{}, err
	}
	return run.FromLocalMultiNode(l, setup)
}

// serverDir is a fresh directory for the n-th server start of arm (n
// counts from 1 in this process; directories of earlier invocations are
// kept, so the first free name is taken). A name that cannot be looked up
// (DIR/servers is a file, a symlink loop, not searchable) is an error,
// not a name taken.
func (b *RunBackend) serverDir(arm *Arm, n int) (string, error) {
	for ; ; n++ {
		d := filepath.Join(b.Dir, ServersDir, fmt.Sprintf("arm%02d-%d", arm.Index+1, n))
		_, err := os.Lstat(d)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return d, nil
		case err != nil:
			return "", fmt.Errorf("server directory: %w", err)
		}
	}
}

// runServer is a sweep/run server as a campaign Server.
type runServer struct {
	b     *RunBackend
	srv   *run.Server
	setup run.Setup
	nodes Nodes // nil on this host
}

func (s *runServer) PIDs() []int                      { return s.srv.PIDs() }
func (s *runServer) Tags() []string                   { return s.srv.Tags() }
func (s *runServer) Healthy(ctx context.Context) bool { return s.srv.Healthy(ctx) == nil }

func (s *runServer) Stop(ctx context.Context) error {
	_, err := s.srv.Stop()
	if s.nodes != nil {
		if rerr := release(ctx, s.nodes); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	return err
}

// RunLoad runs p's load into DIR/<p.ID>/, after clearing what an earlier
// attempt of the point left there (ClearPointDir: a completed probe that
// this full-length run replaces is kept in DIR/<p.ID>.probe/), holding
// the directory's lock. A load that failed for want of space on the
// sweep directory's disk, or on another that stays full, is a
// *run.DiskFullError.
func (s *runServer) RunLoad(ctx context.Context, p *Point) Outcome {
	spec, err := specOn(&p.Plan, s.setup, s.nodes)
	if err != nil {
		return Outcome{Err: err}
	}
	spec.LoadSpec.Probe, spec.LoadSpec.Official = p.Probe, s.b.Official
	dir := result.PointDir(s.b.Dir, p.ID)
	release, err := ClearPointDir(s.b.Dir, p)
	if err != nil {
		return Outcome{Err: s.b.onSweepDisk(run.CheckDiskFull(dir, err))}
	}
	defer release()
	rec, err := s.srv.RunLoad(ctx, spec.LoadSpec, dir)
	out := Outcome{Err: s.b.onSweepDisk(run.CheckDiskFull(dir, err))}
	if rec == nil {
		return out
	}
	if f := rec.Failed(); f != nil && err != nil {
		out.Err = fmt.Errorf("stage %s: %s", f.Name, f.Detail())
		if df, ok := errors.AsType[*run.DiskFullError](err); ok {
			// The failure's own words, and the disk: the sweep stops on it.
			out.Err = &run.DiskFullError{Dir: df.Dir, Elsewhere: df.Elsewhere, Free: df.Free, Line: df.Line, Err: out.Err}
		}
	}
	out.Err = s.b.onSweepDisk(out.Err)
	out.Result = rec.ResultFile // the campaign checks it and takes its numbers
	out.ServerGone = s.srv.Healthy(ctx) != nil
	return out
}
