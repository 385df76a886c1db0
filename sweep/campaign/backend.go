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

	mu     sync.Mutex
	starts map[int]int // server starts per arm in this process
}

// visibleDevices are the variables that pin an engine to its GPUs: CUDA's
// and both of ROCm's (HIP for the runtime, ROCR for the driver layer).
var visibleDevices = []string{"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"}

// StartServer starts the server first's plan names (an arm's server),
// pinned to gpus when gpus is not empty.
func (b *RunBackend) StartServer(ctx context.Context, arm *Arm, first *Point, gpus []int) (Server, error) {
	spec, err := run.FromPlan(&first.Plan, b.Setup)
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
		if rec != nil {
			if f := rec.Failed(); f != nil && len(f.LogTail) > 0 {
				err = fmt.Errorf("%w\n    %s", err, strings.Join(f.LogTail, "\n    "))
			}
		}
		return nil, err
	}
	return &runServer{b: b, srv: srv}, nil
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
	b   *RunBackend
	srv *run.Server
}

func (s *runServer) PIDs() []int                      { return s.srv.PIDs() }
func (s *runServer) Tags() []string                   { return s.srv.Tags() }
func (s *runServer) Healthy(ctx context.Context) bool { return s.srv.Healthy(ctx) == nil }

func (s *runServer) Stop(context.Context) error {
	_, err := s.srv.Stop()
	return err
}

// RunLoad runs p's load into DIR/<p.ID>/, after clearing what an earlier
// attempt of the point left there.
func (s *runServer) RunLoad(ctx context.Context, p *Point) Outcome {
	spec, err := run.FromPlan(&p.Plan, s.b.Setup)
	if err != nil {
		return Outcome{Err: err}
	}
	spec.LoadSpec.Probe, spec.LoadSpec.Official = p.Probe, s.b.Official
	dir := result.PointDir(s.b.Dir, p.ID)
	if err := os.RemoveAll(dir); err != nil {
		return Outcome{Err: fmt.Errorf("clear %s: %w", dir, err)}
	}
	rec, err := s.srv.RunLoad(ctx, spec.LoadSpec, dir)
	out := Outcome{Err: err}
	if rec == nil {
		return out
	}
	if f := rec.Failed(); f != nil && err != nil {
		out.Err = fmt.Errorf("stage %s: %s", f.Name, f.Error)
	}
	out.Result = rec.ResultFile // the campaign checks it and takes its numbers
	out.ServerGone = s.srv.Healthy(ctx) != nil
	return out
}
