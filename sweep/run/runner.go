package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"sweep/internal/atomicfile"
	"sweep/internal/proc"
	"sweep/metrics/result"
)

// runner runs the stages of a point (Run), or of a server and each load
// run against it (StartServer, Server.RunLoad), and keeps their record,
// saved to its file in OutDir as it changes.
type runner struct {
	spec Spec
	o    Options
	rec  *Record
	file string // the record's file name in o.OutDir

	mu      sync.Mutex
	procs   []*proc.Process // started processes, stopped in reverse order
	workers []*proc.Process // Spec.Workers' processes, watched like the engine
	// clockOrigin is the wall-clock origin (Unix ns) the simulated GPU
	// tools and the load generator share; "" on the virtual clock.
	clockOrigin string
	firstErr    error
	// lag is how far the simulated engines on the wall clock fell behind
	// their schedule during the load (nil: not read).
	lag *result.ScheduleLag

	// progressMu serialises Options.Progress: stages and the client's
	// output echo (called from its drain goroutine) report concurrently.
	progressMu sync.Mutex
}

// newRunner prepares o.OutDir and writes the first record.
func newRunner(spec Spec, o Options, name, file string) (*runner, error) {
	if o.OutDir == "" {
		return nil, errors.New("run: no output directory")
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	_ = atomicfile.CleanStale(o.OutDir)
	r := &runner{spec: spec, o: o, file: file, rec: &Record{
		Name: name, Started: time.Now(), Processes: map[string]*ProcessOutcome{},
		ArtifactDir: spec.ArtifactDir,
	}}
	if spec.Client != nil {
		facts := spec.Facts
		r.rec.Facts, r.rec.Simulation, r.rec.Client = &facts, spec.Simulation, spec.ClientInfo
		r.rec.Official, r.rec.Probe = spec.Official, spec.Probe
		r.rec.ValidateOptions = &result.ValidateOptions{FailedRequestThreshold: o.FailedRequestThreshold, RequiredMetricPrefix: spec.RequiredMetricPrefix}
	}
	r.save()
	return r, nil
}

// stage runs fn as the named stage and records its outcome; tail, when
// not nil, supplies log lines for a failure. It reports success.
func (r *runner) stage(ctx context.Context, name string, tail func() []string, fn func() error) bool {
	start := time.Now()
	r.progress(name + ": started")
	err := fn()
	s := Stage{Name: name, Outcome: outcomeOK, Started: start, Finished: time.Now()}
	s.Seconds = s.Finished.Sub(start).Seconds()
	if err != nil {
		s.Outcome, s.Error = outcomeFailed, err.Error()
		if ctx.Err() != nil {
			s.Outcome = outcomeCancelled
		}
		if tail != nil {
			s.LogTail = tail()
		}
		r.setErr(err)
	}
	r.add(s)
	r.progress(fmt.Sprintf("%s: %s in %s", name, s.Outcome, time.Duration(s.Seconds*float64(time.Second)).Round(time.Millisecond)))
	return err == nil
}

func (r *runner) fail(name string, err error, tail []string) {
	now := time.Now()
	r.setErr(err)
	r.add(Stage{Name: name, Outcome: outcomeFailed, Error: err.Error(), LogTail: tail, Started: now, Finished: now})
}

func (r *runner) skip(name, why string) {
	now := time.Now()
	r.add(Stage{Name: name, Outcome: outcomeSkipped, Error: why, Started: now, Finished: now})
}

func (r *runner) setErr(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.firstErr == nil {
		r.firstErr = err
	}
}

func (r *runner) add(s Stage) {
	r.mu.Lock()
	r.rec.Stages = append(r.rec.Stages, s)
	r.mu.Unlock()
	r.save()
}

// save writes run.json atomically; a failure to write it is reported on
// the progress line but does not stop the point.
func (r *runner) save() {
	r.mu.Lock()
	snap := r.rec.clone()
	r.mu.Unlock()
	if err := atomicfile.WriteJSON(filepath.Join(r.o.OutDir, r.file), snap); err != nil {
		r.warn(err.Error()) // the next save that succeeds records it
	}
}

// warn prints a warning on the progress lines ("warning: w") and records
// it in the record's Warnings, once however often it is raised; the next
// save writes it. A warning fails nothing: the point stays as its stages
// say.
func (r *runner) warn(w string) {
	r.mu.Lock()
	if !slices.Contains(r.rec.Warnings, w) {
		r.rec.Warnings = append(r.rec.Warnings, w)
	}
	r.mu.Unlock()
	r.progress("warning: " + w)
}

func (r *runner) progress(line string) {
	r.progressMu.Lock()
	defer r.progressMu.Unlock()
	r.o.Progress(line)
}
