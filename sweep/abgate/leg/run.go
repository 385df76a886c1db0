package leg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"sweep/configs"
	"sweep/internal/atomicfile"
	"sweep/internal/inputfile"
	"sweep/internal/proc"
	"sweep/internal/selfexe"
	"sweep/sweep/abgate"
	"sweep/sweep/run"
)

// Options tune Run.
type Options struct {
	// Dir is the leg's output directory: it must not exist or be empty.
	Dir string
	// Setup swaps in the simulated engine and router (Setup.Simulate).
	Setup run.Setup
	// Server tunes the servers (OutDir is set per arm).
	Server run.Options
	// BFCL is the argv that stands for the bfcl program (default
	// ["bfcl"]); with Setup.Simulate, nil means [Setup.Executable,
	// "sim-bfcl", "--"].
	BFCL []string
	// RunTimeout bounds each bfcl generate (0: no bound); the process
	// tree is stopped when it is reached and the replicate is incomplete.
	RunTimeout time.Duration
	// StopGrace is the wait between SIGTERM and SIGKILL for bfcl (default
	// 10 s).
	StopGrace time.Duration
	// Progress, when set, gets one line per step.
	Progress func(line string)
	// Calibration, when set, is the leg's A/A calibration (Calibrate):
	// the comparison's replicate advice uses its flip rates.
	Calibration *abgate.Calibration

	// started is this run's start (set by defaults): an attempt that
	// started before it is an earlier run's.
	started time.Time
	// launched are the arms whose server this run started (set by
	// defaults, shared by the copies runArm gets).
	launched *launches

	// fileWriter, when set, stands between an output's temporary file
	// and what is written to it (nil: the file itself): tests fill the
	// disk with it.
	fileWriter func(f io.Writer) io.Writer
}

// legDefaults applies the leg's timeouts where the options leave them
// unset, the leg's GPU as the simulated one, and makes Progress and the
// servers' Progress safe for two arms at once.
func (o *Options) legDefaults(l *configs.ABLeg) {
	if o.RunTimeout == 0 {
		o.RunTimeout = l.Timeouts.Run
	}
	if l.Timeouts.Startup > 0 && o.Server.ReadyTimeout == 0 {
		o.Server.ReadyTimeout = l.Timeouts.Startup
	}
	if o.Setup.Simulate && o.Setup.SimGPU == "" {
		o.Setup.SimGPU = GPU(l)
	}
	// The leg's lines and both servers' lines may come from two arms at
	// once: one lock serialises every writer.
	var mu sync.Mutex
	serialize := func(f func(string)) func(string) {
		if f == nil {
			return nil
		}
		return func(line string) {
			mu.Lock()
			defer mu.Unlock()
			f(line)
		}
	}
	o.Progress, o.Server.Progress = serialize(o.Progress), serialize(o.Server.Progress)
}

// Result is the outcome of a leg.
type Result struct {
	Report *abgate.Report
	// Roots are each arm's BFCL_PROJECT_ROOTs, one per replicate.
	Roots [2][]string
	// Output is the report: its files in the leg's directory and their
	// content.
	Output
}

// Output is a leg's report or calibration in its two forms, each with
// the file of the leg's directory it is written to.
type Output struct {
	// Table and JSON are the files: the Markdown table and the JSON.
	Table, JSON string
	// TableText and JSONText are their content, held also when a file
	// could not be written (Run's and Calibrate's *NotWrittenError).
	TableText, JSONText []byte
}

// NotWrittenError is an output drawn but not written to its file: Run and
// Calibrate return it with their result, whose Output holds the content.
// A file of the output written before is whole: the old content or the
// new, never a torn file.
type NotWrittenError struct {
	// File is the file that could not be written; Written are those of
	// the output written before it.
	File    string
	Written []string
	// Err is why: a *run.DiskFullError when the disk holding the leg's
	// directory is full.
	Err error
}

// Error is "report.json not written: CAUSE; report.md written": the
// cause names the whole path.
func (e *NotWrittenError) Error() string {
	msg := fmt.Sprintf("%s not written: %v", filepath.Base(e.File), e.Err)
	if len(e.Written) > 0 {
		names := make([]string, len(e.Written))
		for i, w := range e.Written {
			names[i] = filepath.Base(w)
		}
		msg += "; " + strings.Join(names, ", ") + " written"
	}
	return msg
}

func (e *NotWrittenError) Unwrap() error { return e.Err }

// defaults fills o's defaults and prepares the leg's directory, holding
// its lock (lockLegDir) from before it reads anything there: a new or
// empty one (but for the lock), which, resume set (Run), it marks with
// p's LegFile; or, resume set, one already marked so (an earlier Run of
// the leg, checked by CheckResume), whose earlier report it moves aside
// (keepEarlierReport). It returns the instant before which this run's
// files are stale and the lock's release.
func (o *Options) defaults(p *Plan, resume bool) (time.Time, func(), error) {
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	if o.StopGrace <= 0 {
		o.StopGrace = 10 * time.Second
	}
	if len(o.BFCL) == 0 {
		o.BFCL = []string{"bfcl"}
		if o.Setup.Simulate {
			exe := o.Setup.Executable
			if exe == "" {
				var err error
				if exe, err = selfexe.Path(); err != nil {
					return time.Time{}, nil, fmt.Errorf("find the sweep executable: %w", err)
				}
			}
			o.BFCL = []string{exe, "sim-bfcl", "--"}
		}
	}
	// Files written before this instant are stale; the second boundary
	// keeps file systems with coarse timestamps honest.
	o.started = time.Now()
	o.launched = &launches{}
	since := o.started.Truncate(time.Second)
	release, err := lockLegDir(o.Dir)
	if err != nil {
		return time.Time{}, nil, err
	}
	fail := func(err error) (time.Time, func(), error) {
		release()
		return time.Time{}, nil, err
	}
	legFile := filepath.Join(o.Dir, LegFile)
	if _, err := os.Lstat(legFile); resume && err == nil {
		if err := CheckResume(o.Dir, p, o.Setup.Simulate); err != nil {
			return fail(err)
		}
		o.Progress("resuming the leg in " + o.Dir)
		moves, err := keepEarlierReport(o.Dir)
		for _, m := range moves {
			o.Progress(fmt.Sprintf("the earlier report %s moved to %s: this run writes its own", m[0], m[1]))
		}
		if err != nil {
			return fail(err)
		}
		return since, release, nil
	}
	entries, err := os.ReadDir(o.Dir)
	if err != nil {
		return fail(fmt.Errorf("leg directory: %w", err))
	}
	if others := withoutLock(entries); len(others) > 0 {
		return fail(fmt.Errorf("leg directory %s: %w (holds %s)", o.Dir, abgate.ErrRootNotEmpty, holds(others)))
	}
	if resume {
		if err := atomicfile.WriteJSON(legFile, legMade(p, o.Setup.Simulate)); err != nil {
			return fail(fmt.Errorf("leg directory: %w", run.CheckDiskFull(o.Dir, err)))
		}
	}
	return since, release, nil
}

// Run runs both arms, one after the other or (a concurrent leg) both at
// once on their own GPUs and ports, holding the leg's host lock if it
// names one, and compares them. Its directory is new or empty, marked
// then with LegFile, or an earlier Run's of the same leg made the same
// way (CheckResume): that run's complete replicates are kept (an arm
// with all of them kept starts no server), the others run again in
// fresh roots (AttemptRoot). Interrupted (ctx done before the verdict is
// drawn), it writes the INCOMPLETE report of what the directory holds
// (InterruptedError.report: no server asked; per category, what the
// complete replicates alone measured, labelled partial) at once,
// again once the arms have stopped, and returns it with an
// *InterruptedError naming the complete replicates (joined with a
// *NotWrittenError when the report could not be written). It returns an
// error only for unusable options, an unusable output directory, a host
// lock not had in time, cancellation or a report file that cannot be
// written; every failed stage is a Problem in the report. A report drawn
// but not written is returned with its *NotWrittenError: the Result's
// Output holds it.
func Run(ctx context.Context, p *Plan, o Options) (*Result, error) {
	since, release, err := o.defaults(p, true)
	if err != nil {
		return nil, err
	}
	// Released last, once every report of this run is written.
	defer release()
	o.legDefaults(p.Leg)
	// A preempted runner may kill the leg before its servers have stopped
	// (a second signal exits at once): the report of the interrupt is
	// written as soon as it comes, then again at the end.
	early := make(chan struct{})
	stopEarly := context.AfterFunc(ctx, func() {
		defer close(early)
		res, err := o.writeInterrupted(p, context.Cause(ctx))
		if nw, ok := errors.AsType[*NotWrittenError](err); ok {
			o.Progress("interrupted: the INCOMPLETE report: " + nw.Error())
		} else if res != nil {
			o.Progress(fmt.Sprintf("interrupted: the INCOMPLETE report is written (%s, %s) while the leg stops", res.Table, res.JSON))
		}
	})
	// settled waits for the early report, if the interrupt started it,
	// so that no later report is overwritten; it runs once.
	settled := sync.OnceFunc(func() {
		if !stopEarly() {
			<-early
		}
	})
	defer settled()
	if p.Leg.HostLock != "" {
		o.Progress(fmt.Sprintf("waiting for the host lock %s (at most %s)", p.Leg.HostLock, lockTimeout(p.Leg)))
		unlock, err := lockHost(ctx, p.Leg.HostLock, lockTimeout(p.Leg))
		if err != nil {
			if ctx.Err() != nil {
				settled()
				return o.writeInterrupted(p, context.Cause(ctx))
			}
			return nil, err
		}
		defer unlock()
		o.Progress("host lock held: " + p.Leg.HostLock)
	}
	res := &Result{}
	var problems []abgate.Problem
	sinceOf := map[string]time.Time{}
	type armOut struct {
		run *armRun
		err error
	}
	var outs [2]armOut
	if p.Leg.Mode == configs.ABConcurrent {
		var wg sync.WaitGroup
		for i := range p.Arms {
			wg.Go(func() {
				r, err := runArm(ctx, p, &p.Arms[i], o, p.Leg.Replicates)
				outs[i] = armOut{r, err}
			})
		}
		wg.Wait()
	} else {
		for i := range p.Arms {
			r, err := runArm(ctx, p, &p.Arms[i], o, p.Leg.Replicates)
			outs[i] = armOut{r, err}
			if err != nil {
				break
			}
		}
	}
	if ctx.Err() != nil {
		settled()
		return o.writeInterrupted(p, context.Cause(ctx))
	}
	for i, out := range outs {
		if out.err != nil {
			return nil, out.err
		}
		res.Roots[i] = out.run.roots
		problems = append(problems, out.run.problems...)
		maps.Copy(sinceOf, out.run.kept)
	}
	servers := []abgate.ArmServer{armServer(p.Leg.Model, &p.Arms[0]), armServer(p.Leg.Model, &p.Arms[1])}
	for i, out := range outs {
		if out.run.server != nil {
			servers[i] = *out.run.server
		}
	}
	rep, err := abgate.Compare(ctx, abgate.Options{
		A: res.Roots[0], B: res.Roots[1], Model: p.Leg.Model, Categories: p.Categories,
		Tolerance: p.Leg.Tolerance, Read: readOptions(p, since, sinceOf),
		Problems: problems, Calibration: o.Calibration, Leg: p.Leg.Name, Simulated: &o.Setup.Simulate,
		Servers: servers,
	})
	settled() // a verdict drawn is written, even over the report of an interrupt that came since
	if err != nil {
		if ctx.Err() != nil {
			return o.writeInterrupted(p, context.Cause(ctx))
		}
		return nil, err
	}
	res.Report = rep
	return o.writeReport(p, res)
}

// writeReport writes res.Report as the leg's report (report.md and
// report.json), listing what resumed runs moved aside (movedAside), and
// returns res with its Output: Run's result and error.
func (o *Options) writeReport(p *Plan, res *Result) (*Result, error) {
	res.Report.MovedAside = movedAside(o.Dir, p)
	heading := fmt.Sprintf("## BFCL A/B: %s (%s): A %s, B %s%s\n\n", p.Leg.Name, p.Leg.Model, p.Arms[0].Name, p.Arms[1].Name, simulatedSuffix(o.Setup.Simulate))
	out, err := o.writeOutputs(ReportTable, heading, func(w io.Writer) error { return abgate.WriteTable(w, res.Report) },
		ReportJSON, func(w io.Writer) error { return abgate.WriteJSON(w, res.Report) })
	if out == nil {
		return nil, err
	}
	res.Output = *out
	return res, err
}

// writeInterrupted writes the INCOMPLETE report of p's leg interrupted
// by cause, from what o.Dir holds now, and returns it with the
// *InterruptedError (joined with the *NotWrittenError of a report not
// written); cause alone, and no report, when the directory's records do
// not read.
func (o *Options) writeInterrupted(p *Plan, cause error) (*Result, error) {
	ie := interrupted(o.Dir, p, o.Setup.Simulate, o.started, o.launched, cause)
	if ie == nil {
		return nil, cause
	}
	res, werr := o.writeReport(p, &Result{Report: ie.report(p, o.Setup.Simulate), Roots: ie.Roots})
	return res, errors.Join(ie, werr)
}

// writeOutputs renders a leg's two outputs, the Markdown table (heading,
// then what table writes) and the JSON, and writes each atomically into
// the leg's directory under its name. A file that cannot be written is a
// *NotWrittenError returned with the Output, which holds both renderings;
// a rendering that fails returns no Output.
func (o *Options) writeOutputs(tableName, heading string, table func(io.Writer) error, jsonName string, js func(io.Writer) error) (*Output, error) {
	var t, j bytes.Buffer
	t.WriteString(heading)
	if err := table(&t); err != nil {
		return nil, err
	}
	if err := js(&j); err != nil {
		return nil, err
	}
	out := &Output{Table: filepath.Join(o.Dir, tableName), JSON: filepath.Join(o.Dir, jsonName), TableText: t.Bytes(), JSONText: j.Bytes()}
	var written []string
	for _, f := range []struct {
		path string
		data []byte
	}{{out.Table, out.TableText}, {out.JSON, out.JSONText}} {
		err := atomicfile.WriteWith(f.path, 0o644, func(w io.Writer) error {
			if o.fileWriter != nil {
				w = o.fileWriter(w)
			}
			_, err := w.Write(f.data)
			return err
		})
		if err != nil {
			return out, &NotWrittenError{File: f.path, Written: written, Err: run.CheckDiskFull(o.Dir, err)}
		}
		written = append(written, f.path)
	}
	return out, nil
}

// armRun is what runArm made of an arm: its replicates' roots, one per
// replicate, named also when nothing was written in them, so the
// comparison names what is missing; their run-failed problems; the
// roots kept from an earlier run, each with the instant before which
// its files are stale (its attempt's start); and, when every replicate
// was kept and no server started, what the server that made them ran
// (keptServer; nil: the plan's, armServer).
type armRun struct {
	roots    []string
	problems []abgate.Problem
	kept     map[string]time.Time
	server   *abgate.ArmServer
}

// runArm keeps the arm's complete replicates in o.Dir (scanReplicates)
// and, when some are left, brings the arm's server up, runs them against
// it in fresh roots and stops it. An earlier run's server files are
// moved aside first (keepEarlierServer), under the host lock Run holds.
func runArm(ctx context.Context, p *Plan, arm *Arm, o Options, reps int) (*armRun, error) {
	made := madeOf(p, arm, o.Setup.Simulate)
	states, err := scanReplicates(o.Dir, p, arm, made, reps)
	if err != nil {
		return nil, err
	}
	out := &armRun{roots: make([]string, reps), kept: map[string]time.Time{}}
	var todo []replicateState
	for i, st := range states {
		if st.kept != "" {
			out.roots[i], out.kept[st.kept] = st.kept, st.keptRec.since()
			o.Progress(fmt.Sprintf("arm %s: replicate %d: kept %s: complete", arm.Label, st.rep, relTo(o.Dir, st.kept)))
			continue
		}
		out.roots[i] = st.fresh
		if len(st.redo) > 0 {
			o.Progress(fmt.Sprintf("arm %s: replicate %d: not complete: %s: runs again in %s", arm.Label, st.rep, strings.Join(st.redo, "; "), relTo(o.Dir, st.fresh)))
		}
		todo = append(todo, st)
	}
	if len(todo) == 0 {
		o.Progress(fmt.Sprintf("arm %s (%s): every replicate kept: its server is not started", arm.Label, arm.Name))
		out.server = keptServer(states, o.started)
		return out, nil
	}
	failAll := func(left []replicateState, detail string) {
		for _, st := range left {
			out.problems = append(out.problems, abgate.Problem{Arm: arm.Label, Root: st.fresh, Category: abgate.Every, Reason: abgate.ReasonRunFailed, Detail: detail})
		}
	}
	spec, err := run.ServerFromPlan(&arm.Point, o.Setup)
	if err != nil {
		return nil, fmt.Errorf("arm %s: %w", arm.Label, err)
	}
	so := o.Server
	so.OutDir = ServerDir(o.Dir, arm.Label)
	earlier, err := keepEarlierServer(so.OutDir)
	if err != nil {
		detail := "the server was not started: " + err.Error()
		o.Progress(fmt.Sprintf("arm %s: %s", arm.Label, detail))
		failAll(todo, detail)
		return out, nil
	}
	if earlier != "" {
		o.Progress(fmt.Sprintf("arm %s: the earlier server's files moved to %s", arm.Label, relTo(o.Dir, earlier)))
	}
	if ctx.Err() != nil {
		// interrupted before its turn: the arm's server is not started
		return nil, fmt.Errorf("arm %s: %w", arm.Label, context.Cause(ctx))
	}
	o.Progress(fmt.Sprintf("arm %s (%s): starting the server (%s, logs in %s)", arm.Label, arm.Name, arm.Point.Recipe, so.OutDir))
	o.launched.add(arm.Label)
	srv, rec, err := run.StartServer(ctx, spec.ServerSpec, so)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("arm %s: %w", arm.Label, context.Cause(ctx))
		}
		detail := "the server did not start: " + err.Error()
		if rec != nil {
			if f := rec.Failed(); f != nil && f.Cause() != "" {
				detail += " (from its log: " + f.Cause() + ")"
			}
		}
		o.Progress(fmt.Sprintf("arm %s: %s", arm.Label, detail))
		failAll(todo, detail)
		return out, nil
	}
	defer srv.Stop()
	o.Progress(fmt.Sprintf("arm %s: server ready at %s", arm.Label, arm.BaseURL))
	for k, st := range todo {
		if detail := serverDied(srv); detail != "" {
			// bfcl against a dead server would only fill the replicates
			// left with inference errors.
			detail = fmt.Sprintf("not run: the server died before replicate %d: %s", st.rep, detail)
			o.Progress(fmt.Sprintf("arm %s: %s", arm.Label, detail))
			failAll(todo[k:], detail)
			break
		}
		ps, err := runReplicate(ctx, p, arm, o, st, made, func() string { return serverDied(srv) })
		if err != nil {
			return nil, err
		}
		out.problems = append(out.problems, ps...)
	}
	final, err := srv.Stop()
	if err != nil {
		o.Progress(fmt.Sprintf("arm %s: stopping the server: %v", arm.Label, err))
	} else if final != nil {
		o.Progress(fmt.Sprintf("arm %s: server stopped", arm.Label))
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	return out, nil
}

// serverDied is "" while every process of srv runs, else which one ended
// on its own, how, the line of its log that says why (run.Stage.Detail)
// and the log: "engine exited (exit code 1); from its log: ... (log:
// DIR/server.log)".
func serverDied(srv *run.Server) string {
	st, log := srv.Died()
	if st == nil {
		return ""
	}
	if log == "" {
		return st.Detail()
	}
	return st.Detail() + " (log: " + log + ")"
}

// runReplicate runs attempt st of a replicate of arm (made as made) in
// its fresh root (runStages), recording it beside the root (Replicate):
// started, then ended with its problems. A record not written is warned
// about: the replicate counts in this run's report, and a rerun of the
// leg runs it again.
func runReplicate(ctx context.Context, p *Plan, arm *Arm, o Options, st replicateState, made Made, died func() string) ([]abgate.Problem, error) {
	root := st.fresh
	if err := abgate.PrepareRoot(root); err != nil {
		return []abgate.Problem{{Arm: arm.Label, Root: root, Category: abgate.Every, Reason: abgate.ReasonRunFailed, Detail: err.Error()}}, nil
	}
	rec := &Replicate{Arm: arm.Label, Replicate: st.rep, Attempt: st.attempt, Started: time.Now().UTC(), Made: made}
	record := func() {
		if err := writeRecord(root, rec); err != nil {
			o.Progress(fmt.Sprintf("arm %s: replicate %d: warning: its record was not written (a rerun of the leg runs it again): %v", arm.Label, st.rep, run.CheckDiskFull(o.Dir, err)))
		}
	}
	record()
	probs, err := runStages(ctx, p, arm, o, st.rep, root, died)
	if err != nil {
		return nil, err
	}
	ended := time.Now().UTC()
	rec.Ended, rec.Problems = &ended, probs
	record()
	return probs, nil
}

// runStages writes the registry entry of a fresh root, verifies it with
// bfcl models, then runs bfcl generate and bfcl evaluate there. evaluate
// runs even after a failed generate, so the categories that were generated
// are scored and the others named. A registry entry that is not written or
// not listed stops the replicate: it is a run-failed problem. died (nil:
// not asked) says whether the arm's server died (serverDied): asked when
// generate ends, a server dead by then is a run-failed problem, listed
// before the inference errors it caused.
func runStages(ctx context.Context, p *Plan, arm *Arm, o Options, rep int, root string, died func() string) ([]abgate.Problem, error) {
	problem := func(detail string) abgate.Problem {
		return abgate.Problem{Arm: arm.Label, Root: root, Category: abgate.Every, Reason: abgate.ReasonRunFailed, Detail: detail}
	}
	b := bfclOf(p, arm, root)
	reg := abgate.Registry{Name: p.Leg.Model, APIModel: apiModel(p.Leg.Model, arm), Dir: PythonDir(root)}
	if err := reg.Write(); err != nil {
		return []abgate.Problem{problem("the bfcl registry entry was not written: " + err.Error())}, nil
	}
	env := b.Env()
	maps.Copy(env, reg.Env(os.Getenv("PYTHONPATH")))
	if o.Setup.Simulate {
		maps.Copy(env, arm.Sim.Env(rep-1))
	}
	o.Progress(fmt.Sprintf("arm %s: replicate %d: bfcl models (registry entry %s in %s)", arm.Label, rep, reg.Name, reg.Dir))
	log := LogFile(root, "models")
	if detail := verifyModel(ctx, p.Leg.Model, env, root, log, o); detail != "" {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return []abgate.Problem{problem(detail)}, nil
	}
	var probs []abgate.Problem
	for _, stage := range []struct {
		name    string
		argv    []string
		timeout time.Duration
	}{{"generate", b.Generate(), o.RunTimeout}, {"evaluate", b.Evaluate(), 0}} {
		o.Progress(fmt.Sprintf("arm %s: replicate %d: bfcl %s", arm.Label, rep, stage.name))
		argv := append(append([]string{}, o.BFCL...), stage.argv[1:]...)
		log := LogFile(root, stage.name)
		st, err := runProcess(ctx, proc.Spec{Name: "bfcl " + stage.name, Argv: argv, Env: env, Dir: root, LogPath: log}, stage.timeout, o.StopGrace)
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		if stage.name == "generate" && died != nil {
			if detail := died(); detail != "" {
				o.Progress(fmt.Sprintf("arm %s: replicate %d: the server died before bfcl generate ended: %s", arm.Label, rep, detail))
				probs = append(probs, problem("the server died before bfcl generate ended: "+detail))
			}
		}
		switch {
		case err != nil:
			probs = append(probs, problem(fmt.Sprintf("bfcl %s: %v (log: %s)", stage.name, err, log)))
		case !st.Success():
			probs = append(probs, problem(fmt.Sprintf("bfcl %s: %s (log: %s)", stage.name, st, log)))
		}
	}
	return probs, nil
}

// errRunTimeout is a stage stopped at Options.RunTimeout.
var errRunTimeout = errors.New("run timeout reached, stopped")

// runProcess runs spec to completion, stopping its process tree at the
// timeout (0: none) or when ctx is done.
func runProcess(ctx context.Context, spec proc.Spec, timeout, grace time.Duration) (proc.Status, error) {
	pr, err := proc.Start(ctx, spec)
	if err != nil {
		return proc.Status{}, err
	}
	wctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeoutCause(ctx, timeout, fmt.Errorf("%w after %s", errRunTimeout, timeout))
		defer cancel()
	}
	st, err := pr.Wait(wctx)
	if err != nil {
		st = pr.Stop(grace)
		if ctx.Err() == nil {
			return st, context.Cause(wctx)
		}
		return st, err
	}
	return st, nil
}

// verifyModel runs "bfcl models" with env in dir and checks that it lists the
// leg's model on a line of its own (bfcl prints one key per line): an
// unregistered name makes bfcl generate fail per category (or, in SMG's
// nightly, a registration silently ignored). It returns "" when the model
// is listed, else what went wrong and the fix.
func verifyModel(ctx context.Context, model string, env map[string]string, dir, log string, o Options) string {
	if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
		return err.Error()
	}
	if err := os.Remove(log); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err.Error()
	}
	argv := append(append([]string{}, o.BFCL...), "models")
	st, err := runProcess(ctx, proc.Spec{Name: "bfcl models", Argv: argv, Env: env, Dir: dir, LogPath: log}, 2*time.Minute, o.StopGrace)
	if err != nil {
		return fmt.Sprintf("bfcl models: %v: is bfcl-eval installed? (log: %s)", err, log)
	}
	if !st.Success() {
		return fmt.Sprintf("bfcl models: %s (log: %s)", st, log)
	}
	out, err := inputfile.Read(log, inputfile.Text)
	if err != nil {
		return fmt.Sprintf("bfcl models: %v", err)
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		if strings.TrimSpace(line) == model {
			return ""
		}
	}
	return fmt.Sprintf("bfcl models does not list %s although the registry entry was written (%s first on PYTHONPATH): "+
		"the bfcl program must run a Python that honours PYTHONPATH and imports bfcl_eval.constants.model_config (bfcl-eval 2026.3.23); "+
		"look for a \"sweep sitecustomize:\" line in the log (log: %s)", model, env["PYTHONPATH"], log)
}

// simulatedSuffix marks a simulated leg's or calibration's heading.
func simulatedSuffix(simulated bool) string {
	if simulated {
		return " (SIMULATED)"
	}
	return ""
}
