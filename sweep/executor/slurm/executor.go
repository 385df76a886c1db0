package slurm

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"sweep/internal/atomicfile"
	"sweep/internal/inputfile"
	"sweep/sweep/campaign"
	"sweep/sweep/launch"
)

// Executor runs a sweep's arms as Slurm batch jobs, one job per arm: the
// job runs `sweep run-arm --job FILE --events FILE` on its node, which
// runs the arm's points in a row on one server and appends each event to
// the events file; the executor follows that file (the sweep directory
// must be on a filesystem the nodes share) and forwards the events to the
// sweep's journal. A job that ends (completed, failed, cancelled with
// scancel, timed out, node failure) closes its arm: points it started but
// did not finish are failed with the job's state, the campaign retries
// them per --retries, and the points it finished are kept; a job that
// ended before its first point fails every point with its end and the
// line of its log that says why (jobEnd). On ctx's cancellation every
// job is cancelled with scancel.
type Executor struct {
	Client *Client
	// Dir is the sweep directory; job files go to Dir/slurm/.
	Dir string
	// Program is the argv that runs sweep on a node (e.g. its absolute
	// path); "run-arm" and its flags are appended.
	Program []string
	// ArmProgram, when set, is the argv that runs sweep for an arm instead
	// of Program (run --launch: srun --container-image ... /opt/sweep/sweep)
	// and the variables of its job (the job file's env); an error fails the
	// arm's points with it. Its Import, when set, runs first in the job
	// (ImportScript); a failed import fails the arm's points with its last
	// output line.
	ArmProgram func(context.Context, *campaign.Arm) (campaign.ArmCommand, error)
	// Settings say how the node runs the points.
	Settings campaign.ArmSettings
	// JobPort, when set, gives for an arm whose server's port comes from
	// its job's id (a launcher whose nodes jobs share: MI325X's and
	// MI300X's 40000 + JOB_ID % 10000) how; nil from it: the planned
	// port stands. Such a job is submitted held, its points planned on
	// its port (OnPort) into its job file, and released.
	JobPort func(*campaign.Arm) func(JobID) (int, error)
	// OnPort plans an arm's points on another port
	// (campaign.Schedule.OnPort).
	OnPort func(a *campaign.Arm, points []*campaign.Point, port int) ([]*campaign.Point, error)
	// Spec returns the arm's job settings from its runner profile
	// (partition, options); GPUs and TimeLimit are filled in when empty.
	// Its Name and Output are not used: an arm job is named
	// sweep-armNN and writes DIR/slurm/armNN-tK.out, by which a later
	// invocation knows it before cancelling it. Nil: only those.
	Spec func(*campaign.Arm) JobSpec
	// TimeLimit is the job's --time (0: the partition's).
	TimeLimit func(campaign.Job) time.Duration
	// PointTimeout is each point's watchdog on the node.
	PointTimeout func(*campaign.Point) time.Duration
	// Poll is how often job states and event files are read (default 2 s).
	Poll time.Duration
	// StartTimeout bounds how long a job may stay pending (0: no bound).
	StartTimeout time.Duration
	// Outage is how long Slurm may not answer in a row (slurmctld down
	// or restarting) before the job's points fail (0: WaitOptions'
	// default).
	Outage time.Duration
	// Progress receives one line per job state change (nil: none).
	Progress func(string)
}

// jobsFile lists every job id this sweep directory submitted, so a later
// invocation cancels the jobs a killed one left running.
const jobsFile = "jobs.txt"

// Execute submits one job per arm and follows them until each has ended.
func (e *Executor) Execute(ctx context.Context, jobs []campaign.Job, obs campaign.Observer) error {
	dir := filepath.Join(e.Dir, "slurm")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	e.cancelLeftovers(ctx, dir)
	script := filepath.Join(dir, "job.sh")
	if err := atomicfile.Write(script, []byte(WrapperScript), 0o755); err != nil {
		return err
	}
	if e.ArmProgram != nil {
		// An arm whose image is imported in its job (ArmCommand.Import).
		if err := atomicfile.Write(filepath.Join(dir, importScriptName), []byte(ImportScript), 0o755); err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, job := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := e.runJob(ctx, dir, script, job, obs); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return errors.Join(errs...)
}

// runJob submits one arm and follows it to its end.
func (e *Executor) runJob(ctx context.Context, dir, script string, job campaign.Job, obs campaign.Observer) error {
	arm := job.Arm
	stem, err := nextStem(dir, arm.Index+1)
	if err != nil {
		campaign.FailJob(job, obs, err.Error())
		return err
	}
	jobFile, events := stem+".json", stem+".events.jsonl"
	program := campaign.ArmCommand{Argv: e.Program}
	if e.ArmProgram != nil {
		p, err := e.ArmProgram(ctx, arm)
		if err != nil {
			campaign.FailJob(job, obs, err.Error())
			return nil
		}
		program = p
	}
	aj := campaign.NewArmJob(job, e.PointTimeout, e.Settings)
	aj.Env, aj.Client = program.Env, program.Client
	var port func(JobID) (int, error)
	if e.JobPort != nil {
		port = e.JobPort(arm)
	}
	if port == nil {
		if err := aj.Write(jobFile); err != nil {
			return err
		}
	}
	spec := JobSpec{Hold: port != nil}
	if e.Spec != nil {
		spec = e.Spec(arm)
	}
	spec.Name = armJobName(arm.Index + 1)
	if spec.GPUs == 0 {
		spec.GPUs = arm.GPUs
	}
	if spec.TimeLimit == 0 && e.TimeLimit != nil {
		spec.TimeLimit = e.TimeLimit(job)
	}
	spec.Output = stem + ".out"
	spec.Script = script
	spec.Argv = append(append([]string(nil), program.Argv...), "run-arm", "--job", jobFile, "--events", events)
	importLog := ""
	if program.Import != nil {
		importLog = stem + ".import.log"
		spec.Script = filepath.Join(dir, importScriptName)
		spec.Argv = append(append([]string{importLog, strconv.Itoa(len(program.Import))}, program.Import...), spec.Argv...)
	}
	id, err := e.Client.Submit(ctx, spec)
	if err != nil {
		campaign.FailJob(job, obs, fmt.Sprintf("sbatch: %v", err))
		return nil
	}
	e.recordJob(dir, id)
	onPort := ""
	if port != nil {
		n, err := e.portJob(ctx, id, job, aj, jobFile, port)
		if err != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			_ = e.Client.Cancel(cctx, id)
			cancel()
			campaign.FailJob(job, obs, fmt.Sprintf("slurm job %s: %v", id, err))
			return nil
		}
		onPort = fmt.Sprintf("; its server on port %d, from the job id", n)
	}
	e.progress(fmt.Sprintf("arm %d: slurm job %s submitted (%d GPUs, %d points%s; log %s)", arm.Index+1, id, spec.GPUs, len(job.Points), onPort, spec.Output))

	remote := campaign.NewRemoteArm(events)
	forward := func() {
		if err := remote.Forward(ctx, obs); err != nil {
			e.progress(fmt.Sprintf("arm %d: %v", arm.Index+1, err))
		}
	}
	waitCtx, stopWait := context.WithCancel(ctx)
	defer stopWait()
	type result struct {
		st  JobStatus
		err error
	}
	done := make(chan result, 1)
	go func() {
		st, err := e.Client.Wait(waitCtx, id, WaitOptions{Poll: e.Poll, StartTimeout: e.StartTimeout, Outage: e.Outage, OnChange: func(st JobStatus) {
			e.progress(fmt.Sprintf("arm %d: slurm job %s %s%s", arm.Index+1, id, st.State, reasonOf(st)))
		}})
		done <- result{st, err}
	}()
	tick := time.NewTicker(max(e.Poll, 100*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			forward()
			continue
		case res := <-done:
			forward()
			if ctx.Err() != nil {
				// Ctrl-C: cancel the job, give its node a moment to record
				// the interruption, and close what it left open.
				cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
				_ = e.Client.Cancel(cctx, id)
				_, _ = e.Client.Wait(cctx, id, WaitOptions{Poll: e.Poll})
				cancel()
				forward()
				remote.CloseOpen(job, obs, campaign.StatusInterrupted, fmt.Sprintf("interrupted; slurm job %s cancelled", id))
				return nil
			}
			why, failRest := jobEnd(id, res.st, res.err, importLog, spec.Output, len(remote.Started) > 0)
			remote.CloseOpen(job, obs, campaign.StatusFailed, why)
			if failRest {
				campaign.FailJob(remote.NotStarted(job), obs, why)
			}
			if res.err != nil || res.st.State != "COMPLETED" {
				e.progress(fmt.Sprintf("arm %d: %s", arm.Index+1, why))
			}
			return nil
		}
	}
}

// jobEnd is why job id ended as it did (st, or Wait's error werr), and
// whether the points it never started fail with it: when it ran none (it
// did not start in time, Slurm stopped answering, its image import
// failed, or it ended before its first point: Pyxis refused its container
// step, srun failed, its time limit), they would fail so again in a new
// job, and left pending they were resubmitted with no failure counted
// until the sweep's rounds ran out, then "not run" with no reason. Such
// an end names the line of the job's log (output) that says why and the
// log. A job that ended from outside after its first point leaves the
// points it never reached to a new job. importLog is the job's import log
// ("": none); started says a point of it started.
func jobEnd(id JobID, st JobStatus, werr error, importLog, output string, started bool) (string, bool) {
	if werr != nil {
		return werr.Error(), true // names the job
	}
	if line, ok := importFailure(importLog, st); ok {
		return fmt.Sprintf("slurm job %s: the image import on its node failed: %s", id, line), true
	}
	why := fmt.Sprintf("slurm job %s ended %s%s (exit %d)", id, st.State, reasonOf(st), st.ExitCode)
	if started || st.State == "COMPLETED" {
		return why, false
	}
	why += " before its first point"
	if line, ok := logCause(output, importedLine); ok && line != "" {
		why += ": " + line
	}
	return why + " (log " + output + ")", true
}

// portJob writes the job file of held job id with its points planned on
// the port its id gives, then releases the job; it returns the port.
func (e *Executor) portJob(ctx context.Context, id JobID, job campaign.Job, aj *campaign.ArmJob, jobFile string, port func(JobID) (int, error)) (int, error) {
	n, err := port(id)
	if err != nil {
		return 0, err
	}
	if e.OnPort == nil {
		return 0, errors.New("its points cannot be planned on the job's port (no OnPort)")
	}
	if aj.Points, err = e.OnPort(job.Arm, job.Points, n); err != nil {
		return 0, err
	}
	if err := aj.Write(jobFile); err != nil {
		return 0, err
	}
	return n, e.Client.Unhold(ctx, id)
}

// importScriptName is the batch script of jobs that import their image
// first (ImportScript), in the slurm directory.
const importScriptName = "job-import.sh"

// importFailure is the last line of a failed job's image import (its
// ImportScript log, kept only when the import failed; "" log: the job
// imports nothing): false when the job did not fail or its import did
// not.
func importFailure(log string, st JobStatus) (string, bool) {
	if log == "" || st.State != "FAILED" {
		return "", false
	}
	line, ok := logCause(log, "")
	switch {
	case !ok:
		return "", false
	case line == "":
		return "no output (exit " + strconv.Itoa(st.ExitCode) + ")", true
	}
	return line, true
}

// logCause is the line of a failed job's log (its last 8 KiB, after its
// last line after, when after is not "") that says why it failed, ""
// when none does; false when the log cannot be read. The rule of every
// launch error's cause (launch.LastCause): srun's own report of a step's
// exit code says no why, the step's last line before it does; a step
// that printed nothing has none, not the line of the step before it.
func logCause(log, after string) (string, bool) {
	f, err := inputfile.Open(log, inputfile.Log)
	if err != nil {
		return "", false
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > 8<<10 {
		if _, err := f.Seek(fi.Size()-8<<10, io.SeekStart); err != nil {
			return "", false
		}
	}
	data, err := f.ReadAll()
	if err != nil {
		return "", false
	}
	text := string(data)
	if i := strings.LastIndex(text, after+"\n"); after != "" && i >= 0 {
		text = text[i+len(after)+1:]
	}
	return launch.LastCause(text), true
}

func reasonOf(st JobStatus) string {
	if st.Reason == "" || st.Reason == "None" {
		return ""
	}
	return " (" + st.Reason + ")"
}

func (e *Executor) progress(line string) {
	if e.Progress != nil {
		e.Progress(line)
	}
}

// nextStem is dir/armNN-tK for the first K not taken yet.
func nextStem(dir string, arm int) (string, error) { return campaign.NextArmJobStem(dir, arm) }

func (e *Executor) recordJob(dir string, id JobID) {
	f, err := atomicfile.OpenFile(filepath.Join(dir, jobsFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		e.progress("warning: " + err.Error())
		return
	}
	defer f.Close()
	if _, err := fmt.Fprintln(f, id); err == nil {
		_ = f.Sync()
	}
}

// cancelLeftovers cancels the jobs an earlier invocation submitted that
// are still queued or running (a sweep killed with kill -9 left them).
// A job jobs.txt lists is cancelled only when it is this directory's arm
// job of this user (its name, output file and owner say so): a copied or
// stale list, or an id the cluster gave to another job since, never
// cancels someone else's work.
func (e *Executor) cancelLeftovers(ctx context.Context, dir string) {
	path := filepath.Join(dir, jobsFile)
	f, err := inputfile.Open(path, inputfile.Text)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			e.progress(fmt.Sprintf("warning: not cancelling the jobs of an earlier run: %v", err))
		}
		return
	}
	defer f.Close()
	abs, err := filepath.Abs(dir)
	if err != nil {
		e.progress(fmt.Sprintf("warning: not cancelling the jobs of an earlier run: %v", err))
		return
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		id := JobID(strings.TrimSpace(sc.Text()))
		if id == "" {
			continue
		}
		st, err := e.Client.Status(ctx, id)
		if err != nil || st.State.Done() {
			continue
		}
		if err := armJobOf(st, abs, os.Getuid()); err != nil {
			e.progress(fmt.Sprintf("not cancelling slurm job %s listed in %s: %v", id, path, err))
			continue
		}
		if err := e.Client.Cancel(ctx, id); err == nil {
			e.progress(fmt.Sprintf("cancelled slurm job %s that an earlier run left %s", id, st.State))
			_, _ = e.Client.Wait(ctx, id, WaitOptions{Poll: e.Poll})
		}
	}
}

// armJobName is the --job-name of arm n's jobs (n counts from 1).
func armJobName(n int) string { return fmt.Sprintf("sweep-arm%02d", n) }

// armJobOf returns nil when st is an arm job submitted from the slurm
// directory dir (absolute) by user uid, else why it is not.
func armJobOf(st JobStatus, dir string, uid int) error {
	if st.UserID != uid {
		if st.UserID < 0 {
			return errors.New("slurm does not say whose job it is")
		}
		return fmt.Errorf("it is %s's (uid %d)", st.User, st.UserID)
	}
	var n, k int
	base := filepath.Base(st.Output)
	if filepath.Dir(st.Output) != dir || !filepath.IsAbs(st.Output) {
		return fmt.Errorf("its output %s is not an arm job's file in %s", st.Output, dir)
	}
	if c, err := fmt.Sscanf(base, "arm%d-t%d.out", &n, &k); err != nil || c != 2 || base != fmt.Sprintf("arm%02d-t%d.out", n, k) {
		return fmt.Errorf("its output %s is not an arm job's file in %s", st.Output, dir)
	}
	if want := armJobName(n); st.Name != want {
		return fmt.Errorf("named %q, not %q", st.Name, want)
	}
	return nil
}
