package run

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"sweep/internal/proc"
	"sweep/recipes"
)

// ServerRecordFile is the name of a server's record in its directory.
const ServerRecordFile = "server.json"

// Server is a running server (sidecars, engine, router) that loads run
// against one after another. Its methods are safe for one goroutine at a
// time; Stop may be called from another.
type Server struct {
	r      *runner
	engine *proc.Process
	// unlock releases the server directory's lock (LockOutDir).
	unlock func()

	mu      sync.Mutex
	loads   int
	stopped bool
}

// StartServer starts spec's server with its logs, command files and
// server.json in o.OutDir, and waits until it answers its health URLs.
// The server holds o.OutDir's lock (LockOutDir) until it is stopped, so
// no sweep run claims the directory and stops its processes; a lock
// another process holds is an error naming it. When a stage fails,
// everything started is stopped and a *StageError is returned with the
// server's record.
func StartServer(ctx context.Context, spec ServerSpec, o Options) (srv *Server, rec *Record, err error) {
	unlock, err := LockOutDir(o.OutDir)
	if err != nil {
		if oe, ok := errors.AsType[*OutDirError](err); ok {
			oe.What = "server directory"
		}
		return nil, nil, err
	}
	r, err := newRunner(Spec{ServerSpec: spec}, o.withDefaults(), "server", ServerRecordFile)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	defer func() {
		if v := recover(); v != nil {
			r.recovered(v)
			srv = nil
			rec, err = r.finish(ctx)
		}
		if srv == nil {
			unlock()
		}
	}()
	engine, ok := r.startServer(ctx)
	if !ok {
		r.stopAll()
		rec, err := r.finish(ctx)
		return nil, rec, err
	}
	r.mu.Lock()
	snap := r.rec.clone()
	r.mu.Unlock()
	return &Server{r: r, engine: engine, unlock: unlock}, snap, nil
}

// Dir is the server's directory (its logs and server.json).
func (s *Server) Dir() string { return s.r.o.OutDir }

// PIDs are the server's processes (each a process group leader).
func (s *Server) PIDs() []int {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	pids := make([]int, 0, len(s.r.procs))
	for _, p := range s.r.procs {
		pids = append(pids, p.PID())
	}
	return pids
}

// Tags are the process tags (proc.TagEnv) of the server's processes,
// which their descendants inherit.
func (s *Server) Tags() []string {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	tags := make([]string, 0, len(s.r.procs))
	for _, p := range s.r.procs {
		tags = append(tags, p.Tag())
	}
	return tags
}

// Healthy returns nil when every server process is running and the
// engine (and its workers and router) answer their health URLs.
func (s *Server) Healthy(ctx context.Context) error {
	s.mu.Lock()
	stopped := s.stopped
	s.mu.Unlock()
	if stopped {
		return errors.New("the server was stopped")
	}
	if p := s.exited(); p != nil {
		return errors.New(exitedText(p))
	}
	c := &http.Client{Timeout: max(s.r.o.ReadyInterval, 2*time.Second)}
	for _, u := range append(s.r.spec.engineHealthURLs(), s.r.spec.RouterHealthURL) {
		if u == "" {
			continue
		}
		if err := proc.Healthy(ctx, c, u); err != nil {
			return fmt.Errorf("%s: %w", u, err)
		}
	}
	return nil
}

// Died returns the first of the server's processes that ended on its own
// before Stop (a sidecar, the engine, a worker or the router): a failed
// StageServer stage whose Error names the process and how it ended
// ("engine exited (exit code 1)") and whose LogTail is its last output
// lines, so Stage.Detail adds the line of its log that says why; and the
// path of that log ("" when it has none). It returns nil and "" while
// every process runs, and once the server was stopped.
func (s *Server) Died() (*Stage, string) {
	s.mu.Lock()
	stopped := s.stopped
	s.mu.Unlock()
	if stopped {
		return nil, ""
	}
	p := s.exited()
	if p == nil {
		return nil, ""
	}
	st := &Stage{Name: StageServer, Outcome: outcomeFailed, Error: exitedText(p), LogTail: p.Tail()}
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	if po := s.r.rec.Processes[p.Name()]; po != nil && po.Log != "" {
		return st, filepath.Join(s.Dir(), po.Log)
	}
	return st, ""
}

// exited is the first of the server's processes, in start order, that
// has ended; nil while all run.
func (s *Server) exited() *proc.Process {
	s.r.mu.Lock()
	procs := append([]*proc.Process(nil), s.r.procs...)
	s.r.mu.Unlock()
	for _, p := range procs {
		if p.Exited() {
			return p
		}
	}
	return nil
}

// exitedText names an ended process and how it ended: "engine exited
// (exit code 1)".
func exitedText(p *proc.Process) string {
	return fmt.Sprintf("%s exited (%s)", p.Name(), p.Status())
}

// RunLoad runs one point's load against the server, with its client log,
// command files, artifacts, result and run.json in outDir (the server's
// logs are linked there, so the directory describes its point on its
// own); the caller holds outDir's lock (LockOutDir) while it runs.
// Before every load but the first the server's caches are flushed
// (ServerSpec.FlushURLs), so a point measures what it would on a fresh
// server; counters (acceptance length, cache hits) are taken over the
// load's own window. A server that died or stopped answering fails the
// load without starting its client.
func (s *Server) RunLoad(ctx context.Context, spec LoadSpec, outDir string) (rec *Record, err error) {
	o := s.r.o
	o.OutDir = outDir
	lr, err := newRunner(Spec{ServerSpec: s.r.spec.ServerSpec, LoadSpec: spec}, o, spec.Name, RecordFile)
	if err != nil {
		return nil, err
	}
	defer func() {
		if v := recover(); v != nil {
			lr.recovered(v) // the load's client; the server is the caller's to stop
			rec, err = lr.finish(ctx)
		}
	}()
	s.mu.Lock()
	s.loads++
	n := s.loads
	s.mu.Unlock()
	lr.rec.Server = &ServerRef{Dir: s.Dir(), Load: n, Reused: n > 1, PIDs: s.PIDs()}
	if err := s.linkLogs(outDir); err != nil {
		lr.warn(err.Error())
	}
	if err := lr.writeCommands(true, false); err != nil {
		lr.warn(err.Error())
	}
	if err := writeFiles(besideLoad(s.r.spec.Files, outDir)); err != nil {
		lr.warn(err.Error())
	}
	ok := lr.stage(ctx, StageServer, func() []string { return s.engine.Tail() }, func() error { return s.Healthy(ctx) })
	if ok && n > 1 && len(s.r.spec.FlushURLs) > 0 {
		ok = lr.stage(ctx, StageFlush, nil, func() error { return s.flush(ctx) })
	}
	if ok {
		lr.workers = s.r.workers // watched like the engine
		lr.runLoad(ctx, s.engine)
	}
	lr.stopAll()
	return lr.finish(ctx)
}

// besideLoad are the server's sidecar files (a Mooncake store's config)
// as a load records them beside its results in outDir, as it records the
// server's command: the files the engine read, which sweep sim calibrate
// reads there (EngineCommand). An arm's shared server writes them into
// its first point's directory, which the sweep clears before that
// point's load: a discovery's points kept none.
func besideLoad(files []recipes.File, outDir string) []recipes.File {
	out := make([]recipes.File, len(files))
	for i, f := range files {
		out[i] = recipes.File{Path: filepath.Join(outDir, filepath.Base(f.Path)), Content: f.Content}
	}
	return out
}

// flush resets the engine's caches. SGLang refuses a flush while requests
// are still pending (HTTP 400), as they may be for a moment after a
// client stopped: it is retried for up to 30 s.
func (s *Server) flush(ctx context.Context) error {
	c := &http.Client{Timeout: 30 * time.Second}
	for _, u := range s.r.spec.FlushURLs {
		deadline := time.Now().Add(30 * time.Second)
		for {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
			if err != nil {
				return err
			}
			resp, err := c.Do(req)
			if err != nil {
				return fmt.Errorf("POST %s: %w", u, err)
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
			if resp.StatusCode != http.StatusBadRequest || time.Now().After(deadline) {
				return fmt.Errorf("POST %s: HTTP %s: the caches were not reset, so the point would start warm", u, resp.Status)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	return nil
}

// linkLogs links the server's logs into dir (relative symlinks), where
// aggregation reads the engine's log head and users look for it.
func (s *Server) linkLogs(dir string) error {
	logs, err := filepath.Glob(filepath.Join(s.Dir(), "*.log"))
	if err != nil {
		return err
	}
	var errs []error
	for _, l := range logs {
		dst := filepath.Join(dir, filepath.Base(l))
		rel, err := filepath.Rel(dir, l)
		if err != nil {
			rel = l
		}
		if cur, err := os.Readlink(dst); err == nil && cur == rel {
			continue
		}
		_ = os.Remove(dst)
		if err := os.Symlink(rel, dst); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Stop stops every server process, newest first, and writes the server's
// final record. It is idempotent; the record's error names processes that
// survived the stop.
func (s *Server) Stop() (*Record, error) {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		s.r.mu.Lock()
		defer s.r.mu.Unlock()
		return s.r.rec.clone(), nil
	}
	s.stopped = true
	s.mu.Unlock()
	defer s.unlock()
	s.r.stopAll()
	return s.r.finish(context.Background())
}
