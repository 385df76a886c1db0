package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"sweep/internal/atomicfile"
	"sweep/internal/proc"
	"sweep/internal/simproto"
	"sweep/recipes"
	"sweep/simengine"
)

// StageError is returned by Run when a stage failed; Stage names it.
type StageError struct {
	Stage string
	Err   error
}

func (e *StageError) Error() string { return fmt.Sprintf("stage %s: %v", e.Stage, e.Err) }
func (e *StageError) Unwrap() error { return e.Err }

// Run runs the point against a server of its own. It returns the record
// (also written to OutDir/run.json) and a *StageError for the first failed
// stage; when ctx is cancelled the error also wraps ctx.Err(). The
// aggregate result is written whenever the client produced artifacts,
// even if a later stage fails, and every process is stopped before Run
// returns.
func Run(ctx context.Context, spec Spec, o Options) (rec *Record, err error) {
	r, err := newRunner(spec, o.withDefaults(), spec.Name, RecordFile)
	if err != nil {
		return nil, err
	}
	defer func() {
		if v := recover(); v != nil {
			r.recovered(v)
			rec, err = r.finish(ctx)
		}
	}()
	if engine, ok := r.startServer(ctx); ok {
		r.runLoad(ctx, engine)
	}
	r.stopAll()
	return r.finish(ctx)
}

// recovered handles a panic v recovered on the runner's goroutine, as any
// failure is handled: the stack goes to PanicFile, a failed StageInternal
// is recorded and every process is stopped. The caller finishes the
// record. (A panic once killed sweep run mid-point: no result, run.json
// unfinished and the engine left to Pdeathsig.)
func (r *runner) recovered(v any) {
	path := filepath.Join(r.o.OutDir, PanicFile)
	if err := atomicfile.Write(path, fmt.Appendf(nil, "panic: %v\n\n%s", v, debug.Stack()), 0o644); err != nil {
		path = "not saved: " + err.Error()
	}
	r.fail(StageInternal, fmt.Errorf("internal error (a bug in sweep): panic: %v (stack: %s)", v, path), nil)
	r.stopAll()
}

// finish closes the record and returns the first failure as a *StageError,
// which wraps ctx.Err() when ctx is cancelled: joined to it unless the
// failure already wraps it (a readiness wait cancelled says so once). A
// failure for want of space on OutDir's filesystem (diskFull) is a
// *DiskFullError inside it.
func (r *runner) finish(ctx context.Context) (*Record, error) {
	r.mu.Lock()
	r.rec.Finished = time.Now()
	r.rec.OK = r.rec.Failed() == nil
	r.mu.Unlock()
	r.save()
	if f := r.rec.Failed(); f != nil {
		err := &StageError{Stage: f.Name, Err: r.firstErr}
		if df := diskFull(osDisk{}, r.o.OutDir, r.firstErr, f.LogTail); df != nil && ctx.Err() == nil {
			err.Err = df
		}
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			return r.rec, errors.Join(err, ctx.Err())
		}
		return r.rec, err
	}
	return r.rec, nil
}

// startServer waits for idle GPUs and starts the sidecars, the engine and
// the router, each waited for on its health URL. It returns the engine.
func (r *runner) startServer(ctx context.Context) (*proc.Process, bool) {
	if r.o.SkipGPUCheck {
		r.skip(StageGPUIdle, "simulated engine")
	} else if !r.stage(ctx, StageGPUIdle, nil, func() error {
		checked, err := WaitGPUsIdle(ctx, r.o.GPUProbe, r.o.GPUIdle)
		if err == nil && !checked {
			r.progress("gpu-idle: no rocm-smi or nvidia-smi here, not checked")
		}
		return err
	}) {
		return nil, false
	}
	if err := r.writeCommands(true, false); err != nil {
		r.fail(StageEngine, err, nil)
		return nil, false
	}
	if err := writeFiles(r.spec.Files); err != nil {
		r.fail(StageSidecars, err, nil)
		return nil, false
	}
	for i, sc := range r.spec.Sidecars {
		if _, ok := r.startAndWait(ctx, StageSidecars, sc.Proc, fmt.Sprintf("sidecar%d.log", i), sc.HealthURL); !ok {
			return nil, false
		}
	}
	engine, ok := r.startAndWait(ctx, StageEngine, r.spec.Engine, cmp.Or(r.spec.EngineLog, "server.log"), r.spec.HealthURL, r.spec.ServedModels...)
	if !ok {
		return nil, false
	}
	for _, w := range r.spec.Workers {
		p, ok := r.startAndWait(ctx, StageEngine, w.Proc, w.Log, w.HealthURL, r.spec.ServedModels...)
		if !ok {
			return nil, false
		}
		r.workers = append(r.workers, p)
	}
	if r.spec.Router != nil {
		if _, ok := r.startAndWait(ctx, StageRouter, *r.spec.Router, "router.log", r.spec.RouterHealthURL); !ok {
			return nil, false
		}
	}
	return engine, true
}

// runLoad runs the client (or eval) against engine and turns its
// artifacts into the result.
func (r *runner) runLoad(ctx context.Context, engine *proc.Process) {
	if err := r.writeCommands(false, true); err != nil {
		r.fail(StageClient, err, nil)
		return
	}
	if r.spec.Eval != nil {
		r.runClient(ctx, StageEval, *r.spec.Eval, "eval.log", engine, nil)
		for _, s := range []string{StageAcceptance, StageAggregate, StageValidate} {
			r.skip(s, "eval-only point: lm-eval scores are checked by their thresholds")
		}
		return
	}
	if r.spec.Client == nil {
		r.fail(StageClient, errors.New("the point has neither a client nor an eval command"), nil)
		return
	}
	mons := r.startMonitors(ctx)
	defer r.stopMonitors(mons) // a panic too; Stop is idempotent
	client := *r.spec.Client
	if r.clockOrigin != "" {
		client.Env = maps.Clone(client.Env)
		client.Env[simproto.EnvLoadgenClockOrigin] = r.clockOrigin
	}
	scrape := r.startScraper(ctx)
	lagBases := r.lagBases()
	lagBefore, lagErr := readLags(ctx, lagBases)
	r.runClient(ctx, StageClient, client, "benchmark.log", engine, scrape)
	if len(lagBases) > 0 && ctx.Err() == nil {
		var lagAfter []simengine.Lag
		if lagErr == nil {
			lagAfter, lagErr = readLags(ctx, lagBases)
		}
		if lagErr != nil {
			r.warn("the simulated engine's schedule lag not read (whether the host kept up with the time scale is unknown): " + lagErr.Error())
		} else {
			r.lag = scheduleLag(lagBefore, lagAfter)
			r.lag.InvalidShare = r.spec.MaxLag
		}
	}
	scraped := scrape.finish()
	if scraped != nil {
		if w := scraped.Health().Warning(); w != "" {
			r.warn(w)
		}
	}
	r.stopMonitors(mons)
	if ctx.Err() != nil {
		for _, s := range []string{StageAcceptance, StageAggregate, StageValidate, StagePower} {
			r.skip(s, "cancelled")
		}
		return
	}
	r.finishResult(scraped)
}

// startAndWait starts a server process and waits for its health URL; with
// models, the server answering must also serve one of them.
func (r *runner) startAndWait(ctx context.Context, stage string, spec proc.Spec, logName, healthURL string, models ...string) (*proc.Process, bool) {
	var p *proc.Process
	ok := r.stage(ctx, stage, func() []string { return tailOf(p) }, func() error {
		spec.LogPath = filepath.Join(r.o.OutDir, logName)
		if err := portFree(healthURL); err != nil {
			return fmt.Errorf("%s: %w", spec.Name, err)
		}
		var err error
		if p, err = r.start(ctx, spec); err != nil {
			return err
		}
		r.progress(fmt.Sprintf("%s: started pid %d, waiting for %s (timeout %s)", spec.Name, p.PID(), healthURL, r.o.ReadyTimeout))
		if err := proc.WaitHTTP(ctx, p, healthURL, proc.WaitOptions{Timeout: r.o.ReadyTimeout, Interval: r.o.ReadyInterval}); err != nil {
			return err
		}
		if p.Exited() {
			// Something answered, but not our process: another server holds the port.
			return fmt.Errorf("%s answered on %s but has exited (%s): is another server using the port?", spec.Name, healthURL, p.Status())
		}
		if len(models) > 0 {
			if err := checkServedModel(ctx, healthURL, models); err != nil {
				return fmt.Errorf("%s: %w", spec.Name, err)
			}
		}
		return nil
	})
	return p, ok
}

func (r *runner) start(ctx context.Context, spec proc.Spec) (*proc.Process, error) {
	// The tag goes on disk before the process exists, so a later run in
	// this directory can stop its tree even if sweep is killed (kill -9).
	spec.Tag = proc.NewTag(spec.Name)
	if err := recordTag(r.o.OutDir, spec.Tag); err != nil {
		return nil, err
	}
	p, err := proc.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.procs = append(r.procs, p)
	argv, goRun := recordedArgv(spec.Argv)
	r.rec.Processes[spec.Name] = &ProcessOutcome{Argv: argv, GoRun: goRun, PID: p.PID(), Exit: -1, Log: filepath.Base(spec.LogPath)}
	r.mu.Unlock()
	r.save()
	return p, nil
}

// runClient runs the load (or eval) client to completion while watching
// the engine: if the engine exits or stops answering its health endpoint,
// the client is stopped and the stage fails naming the engine.
func (r *runner) runClient(ctx context.Context, stage string, spec proc.Spec, logName string, engine *proc.Process, scrape *scrapeRun) {
	var blame *proc.Process
	r.stage(ctx, stage, func() []string { return tailOf(blame) }, func() error {
		spec.LogPath = filepath.Join(r.o.OutDir, logName)
		spec.OnLine = r.echo(spec.Name)
		client, err := r.start(ctx, spec)
		if err != nil {
			return err
		}
		blame = client
		r.progress(fmt.Sprintf("%s: started pid %d", spec.Name, client.PID()))
		blame, err = r.watchLoad(ctx, client, engine, r.watchHealth(ctx, client.Done()))
		return err
	})
}

// watchLoad waits for the client's exit while watching the engine and the
// workers, and returns the process a failure is put on (the client unless
// a server is to blame) with the failure. When the client and a server
// have both exited by the time it looks, the wording follows which of them
// exited first (firstDone), not which channel a select took.
func (r *runner) watchLoad(ctx context.Context, client, engine *proc.Process, hung <-chan error) (*proc.Process, error) {
	down := watchExits(append([]*proc.Process{engine}, r.workers...))
	select {
	case <-client.Done():
	case <-down.any:
	case err := <-hung:
		client.Stop(r.o.StopGrace)
		return engine, err
	case <-ctx.Done():
		client.Stop(r.o.StopGrace)
		return client, ctx.Err()
	}
	if e := firstDone(append([]*proc.Process{client}, down.procs...)...); e != client {
		// An engine that exits after the last request leaves a client
		// that is writing its artifacts: let it finish, as long as it
		// takes a client to stop.
		if r.clientFinishes(ctx, client) {
			return e, fmt.Errorf("%s exited as the load ended (%s): %s had sent its last request and finished on its own", e.Name(), e.Status(), client.Name())
		}
		client.Stop(r.o.StopGrace)
		return e, fmt.Errorf("%s exited during the load (%s)", e.Name(), e.Status())
	}
	st := client.Status()
	if st.Success() {
		// An engine that crashes with the load's last request exits
		// just after the client: the point is its failure, not that
		// of a later stage that misses its metrics.
		if e := r.exitedAtEnd(ctx, down); e != nil {
			return e, fmt.Errorf("%s exited as the load ended (%s), just after %s finished", e.Name(), e.Status(), client.Name())
		}
		return client, nil
	}
	// A client fails at once when the engine dies under it: give the
	// engine's exit a moment to show, and blame the engine.
	select {
	case <-down.any:
		e := down.first()
		return e, fmt.Errorf("%s exited during the load (%s)", e.Name(), e.Status())
	case <-time.After(engineExitWait):
	}
	return client, fmt.Errorf("%s failed (%s)", client.Name(), st)
}

// clientFinishes waits up to the stop grace for a client whose engine has
// exited to exit by itself, and reports whether it did so successfully: a
// client that had sent its last request writes its artifacts, one whose
// requests the engine's exit cut fails at once or runs on until stopped.
func (r *runner) clientFinishes(ctx context.Context, client *proc.Process) bool {
	if r.o.StopGrace <= 0 {
		return false
	}
	t := time.NewTimer(r.o.StopGrace)
	defer t.Stop()
	select {
	case <-client.Done():
		return client.Status().Success()
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// exitWatch watches a point's servers (engine and workers): any is
// closed once one of them is Done.
type exitWatch struct {
	procs []*proc.Process
	any   chan struct{}
}

// watchExits starts watching procs (nil entries left out). Its goroutines
// end when their processes do (every process is stopped before a point
// ends).
func watchExits(procs []*proc.Process) *exitWatch {
	w := &exitWatch{procs: slices.DeleteFunc(slices.Clone(procs), func(p *proc.Process) bool { return p == nil }), any: make(chan struct{})}
	var once sync.Once
	for _, p := range w.procs {
		go func() {
			<-p.Done()
			once.Do(func() { close(w.any) })
		}()
	}
	return w
}

// first is the first of the watched servers to exit (firstDone); nil
// while all run.
func (w *exitWatch) first() *proc.Process { return firstDone(w.procs...) }

// firstDone returns the one of procs that exited first, by the time each
// was seen to exit (proc.FirstEnded), once it is Done (its Status final,
// a moment after its exit); nil when none has exited. Every decision of
// the runner between exits takes it: a select on their Done channels,
// once both are closed (a loaded host), picks one at random.
func firstDone(procs ...*proc.Process) *proc.Process {
	p := proc.FirstEnded(procs...)
	if p != nil {
		<-p.Done()
	}
	return p
}

// engineExitWait is how long a failed client waits for the engine's exit
// to show before the failure is put on the client, and how long a
// successful one waits for the servers to answer again (exitedAtEnd).
const engineExitWait = 2 * time.Second

// endPoll is exitedAtEnd's interval between health probes.
const endPoll = 20 * time.Millisecond

// exitedAtEnd checks, after the client exited successfully, that the
// engine and the workers outlived the load: it returns the first of them
// to exit (down.first) if one does before each answers its health URL
// once more, within engineExitWait; nil when they all answered, or when
// neither happened in time (a hang is the health watchdog's to report). A
// crashing engine stops answering at once but can take a moment to exit,
// and exits after a client whose last request it served: without this
// wait its exit went unnoticed, and the point failed at the acceptance
// check for want of metrics, or not at all.
func (r *runner) exitedAtEnd(ctx context.Context, down *exitWatch) *proc.Process {
	ctx, cancel := context.WithTimeout(ctx, engineExitWait)
	defer cancel()
	urls := r.spec.engineHealthURLs()
	noURL := len(urls) == 0 // then the whole wait
	c := &http.Client{}
	t := time.NewTicker(endPoll)
	defer t.Stop()
	for {
		for len(urls) > 0 && proc.Healthy(ctx, c, urls[0]) == nil {
			urls = urls[1:]
		}
		select {
		case <-down.any:
			return down.first()
		default:
		}
		if len(urls) == 0 && !noURL {
			return nil
		}
		select {
		case <-down.any:
			return down.first()
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// echo returns an OnLine callback that passes a client's output to the
// progress line, at most one line every ClientEcho, so a long load shows
// the client's own progress and ETA without flooding the terminal.
func (r *runner) echo(name string) func(string) {
	var last time.Time
	return func(line string) {
		if line == "" || time.Since(last) < r.o.ClientEcho {
			return
		}
		last = time.Now()
		r.progress(name + " | " + line)
	}
}

// watchHealth polls the engine's health URL until done is closed and
// reports an error when it has not answered 200 for HangTimeout. The
// goroutine exits when done is closed or ctx is cancelled.
func (r *runner) watchHealth(ctx context.Context, done <-chan struct{}) <-chan error {
	out := make(chan error, 1)
	if r.spec.HealthURL == "" {
		return out
	}
	client := &http.Client{Timeout: max(r.o.ReadyInterval, 2*time.Second)}
	go func() {
		lastOK := time.Now()
		lastErr := ""
		t := time.NewTicker(r.o.ReadyInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if err := proc.Healthy(ctx, client, r.spec.HealthURL); err != nil {
				lastErr = err.Error()
				if time.Since(lastOK) >= r.o.HangTimeout {
					out <- fmt.Errorf("engine stopped answering %s for %s (last: %s)", r.spec.HealthURL, r.o.HangTimeout, lastErr)
					return
				}
				continue
			}
			lastOK = time.Now()
		}
	}()
	return out
}

// stopAll stops every started process, newest first (client, router,
// engine), and records their outcomes.
func (r *runner) stopAll() {
	r.mu.Lock()
	procs := append([]*proc.Process(nil), r.procs...)
	r.mu.Unlock()
	start := time.Now()
	var left []string
	for i := len(procs) - 1; i >= 0; i-- {
		p := procs[i]
		st := p.Stop(r.o.StopGrace)
		r.progress(fmt.Sprintf("stop: %s pid %d ended (%s)", p.Name(), p.PID(), st))
		r.mu.Lock()
		po := r.rec.Processes[p.Name()]
		po.Exit, po.Signal, po.Stopped, po.Seconds = st.Exit, st.Signal, st.Stopped, st.Runtime.Seconds()
		r.mu.Unlock()
		if alive := p.Leftovers(); len(alive) > 0 {
			left = append(left, fmt.Sprintf("%s: pids %v", p.Name(), alive))
		}
	}
	if len(procs) == 0 {
		return
	}
	s := Stage{Name: StageStop, Outcome: outcomeOK, Started: start, Finished: time.Now()}
	if len(left) > 0 {
		s.Outcome, s.Error = outcomeFailed, "processes survived the stop: "+strings.Join(left, "; ")
		r.setErr(errors.New(s.Error))
	}
	s.Seconds = s.Finished.Sub(s.Started).Seconds()
	r.add(s)
}

func tailOf(p *proc.Process) []string {
	if p == nil {
		return nil
	}
	return p.Tail()
}

// writeFiles writes the sidecars' files, each where its Path says.
func writeFiles(files []recipes.File) error {
	for _, f := range files {
		err := os.MkdirAll(filepath.Dir(f.Path), 0o755)
		if err == nil {
			err = atomicfile.Write(f.Path, []byte(f.Content), 0o644)
		}
		if err != nil {
			return fmt.Errorf("sidecar file: %w", err)
		}
	}
	return nil
}

// writeCommands records the server's commands, the load's, or both,
// secrets redacted, as InferenceX does.
func (r *runner) writeCommands(server, load bool) error {
	write := func(name string, s *proc.Spec) error {
		if s == nil || name == "" {
			return nil
		}
		return atomicfile.Write(filepath.Join(r.o.OutDir, name), []byte(commandText(s.Argv, s.Env, s.Unset)), 0o644)
	}
	var errs []error
	if server {
		errs = append(errs, write(r.spec.EngineCommandFile, &r.spec.Engine), write("router_command.txt", r.spec.Router))
		for _, w := range r.spec.Workers {
			errs = append(errs, write(w.CommandFile, &w.Proc))
		}
	}
	if load {
		client, clientFile := r.spec.Client, "benchmark_command.txt"
		if client == nil {
			client, clientFile = r.spec.Eval, "eval_command.txt"
		}
		errs = append(errs, write(clientFile, client))
	}
	return errors.Join(errs...)
}

// portFree checks that nothing listens on the host and port of url yet:
// a server already there would answer our health checks and load, and its
// numbers would be written as ours.
func portFree(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil // no URL to check
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		return nil
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(host, port), 500*time.Millisecond)
	if err != nil {
		return nil
	}
	conn.Close()
	return fmt.Errorf("port %s on %s is already in use by another server; stop it or choose another --port", port, host)
}
