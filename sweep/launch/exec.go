package launch

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"sweep/internal/selfexe"
	"sweep/recipes"
)

// Exec runs a launch plan's host commands.
type Exec struct {
	// Stdout and Stderr receive the commands' output.
	Stdout, Stderr io.Writer
	// Progress gets one line per command started.
	Progress func(string)
	// Guard is the argv of a guard process (`sweep launch-guard`) that
	// runs the release commands if this process dies without releasing
	// (kill -9 of the runner); nil: no guard.
	Guard []string
	// BeforeRun is called once with the bound plan (job id and port
	// known), after the allocation and before any command that copies or
	// runs the workspace: the payload's input files are written there.
	BeforeRun func(bound *Plan) error
	// ReleaseTimeout bounds the release commands (default 2 minutes).
	ReleaseTimeout time.Duration
	// Dir is the commands' working directory ("" is this process's): a
	// multi-node submission runs in the checkout it submits from.
	Dir string
	// StopWait is how long a cancelled command that has a Stop command may
	// take to end after it (the payload's own stop grace and then some;
	// default 10 s) before it is killed.
	StopWait time.Duration
	// JobEnded, when set, says whether the Slurm job jobID has ended, and
	// in which state (CANCELLED, TIMEOUT, ...). It is asked when a
	// container step fails without this process stopping it, before the
	// release, so the state is Slurm's and not the release's: a job
	// cancelled from outside is then a *JobEndedError.
	JobEnded func(ctx context.Context, jobID string) (state string, ended bool)
}

// Result is what a launch did.
type Result struct {
	// JobID is the allocation used ("" for docker launchers).
	JobID string
	// Bound is the plan with the run-time values filled in.
	Bound *Plan
	// Released says the release commands ran (and how they ended).
	Released   bool
	ReleaseErr error
	// NoContainer says a docker launch's release found no container of
	// its name to remove: docker run's --rm removed it, or docker run
	// never made one.
	NoContainer bool
}

// HostVars are the values of this host a plan's commands may hold
// before anything runs (Plan.Bind): ${UID} and ${HOME}, the user's. A
// batch job runs as the user who submits it, so they hold on its node too.
func HostVars() map[string]string {
	host := map[string]string{"UID": strconv.Itoa(os.Getuid())}
	if h, err := os.UserHomeDir(); err == nil {
		host["HOME"] = h
	}
	return host
}

// granted matches salloc's "Granted job allocation N".
var granted = regexp.MustCompile(`Granted job allocation ([0-9]+)`)

// jobIDPattern is a Slurm job id.
var jobIDPattern = regexp.MustCompile(`^[0-9]+$`)

// StepError is a host command that failed.
type StepError struct {
	Role string
	Argv []string
	Err  error
}

func (e *StepError) Error() string {
	return fmt.Sprintf("launch %s (%s): %v", e.Role, strings.Join(e.Argv[:min(len(e.Argv), 2)], " "), e.Err)
}

func (e *StepError) Unwrap() error { return e.Err }

// JobEndedError is a container step that failed because its Slurm job
// ended under it without this process stopping it: cancelled from
// outside (scancel) or by Slurm (its time limit, a node failure).
type JobEndedError struct {
	JobID, State string
	Step         *StepError
}

func (e *JobEndedError) Error() string {
	return fmt.Sprintf("slurm job %s ended %s while the point ran in it, not stopped by this sweep (scancel from outside, or Slurm: its time limit, a node failure); the point did not finish (%v)", e.JobID, e.State, e.Step)
}

func (e *JobEndedError) Unwrap() error { return e.Step }

// Preflight checks that the host programs of the plan are installed, so a
// missing tool is an error before anything is allocated.
func Preflight(pl *Plan) error {
	seen := map[string]bool{}
	var missing []string
	for _, c := range pl.Commands {
		for _, prog := range []string{c.Argv[0], first(c.StdoutTo)} {
			if prog == "" || seen[prog] {
				continue
			}
			seen[prog] = true
			if _, err := exec.LookPath(prog); err != nil {
				missing = append(missing, prog)
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("launch on %s needs %s on PATH (the %s launcher's host programs); install them or run on the cluster's login node",
			pl.Runner, strings.Join(missing, ", "), pl.Profile)
	}
	return nil
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// Run runs the plan's commands in order. When the plan allocates, the job
// is released on every exit path: a failed command, ctx cancelled
// (Ctrl-C), and, through the guard, this process killed. A job cancelled
// from outside (scancel, time limit) fails the container step.
func (e Exec) Run(ctx context.Context, pl *Plan) (res Result, err error) {
	if e.Stdout == nil {
		e.Stdout = io.Discard
	}
	if e.Stderr == nil {
		e.Stderr = io.Discard
	}
	if e.ReleaseTimeout <= 0 {
		e.ReleaseTimeout = 2 * time.Minute
	}
	pl = pl.Bind(HostVars())
	bound := pl
	var guard *guardProc
	beforeRun := func() error {
		if e.BeforeRun == nil {
			return nil
		}
		before := e.BeforeRun
		e.BeforeRun = nil
		return before(bound)
	}
	defer func() {
		if !needsRelease(pl, res.JobID) {
			return
		}
		res.Released = true
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.ReleaseTimeout)
		defer cancel()
		for _, c := range bound.Commands {
			if c.Role != RoleRelease {
				continue
			}
			var out bytes.Buffer
			rerr := e.command(rctx, c, &out)
			if pl.ContainerName != "" && strings.Contains(out.String(), noSuchContainer) {
				res.NoContainer = true
			}
			if rerr == nil || (c.MayFail && !releaseFailed(pl, out.String())) {
				continue
			}
			res.ReleaseErr = errors.Join(res.ReleaseErr, &StepError{Role: c.Role, Argv: c.Argv, Err: rerr})
		}
		guard.done()
	}()
	if pl.ContainerName != "" {
		// A docker launch releases by name: guard it from the start.
		res.JobID = "docker"
		guard = e.startGuard(pl)
	}
	ran := map[int]bool{}
	for i := 0; i < len(bound.Commands); i++ {
		c := bound.Commands[i]
		if c.Role == RoleRelease || ran[i] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		switch c.Role {
		case RoleAllocate:
			var out bytes.Buffer
			err := e.command(ctx, c, &out)
			var jobIDStep *recipes.HostCommand
			if i+1 < len(bound.Commands) && bound.Commands[i+1].Role == RoleJobID {
				ran[i+1] = true
				jobIDStep = &bound.Commands[i+1]
			}
			id, idErr := e.jobID(ctx, out.String(), err == nil, jobIDStep)
			if idErr != nil {
				return res, idErr
			}
			if id != "" {
				res.JobID = id
				bound = pl.Bind(map[string]string{"JOB_ID": id})
				res.Bound = bound
				guard = e.startGuard(bound)
			}
			if err != nil || id == "" {
				if err == nil {
					err = errors.New("no job id: salloc printed no \"Granted job allocation N\" and squeue found no job by that name")
				}
				return res, &StepError{Role: c.Role, Argv: c.Argv, Err: err}
			}
			// The payload's inputs go into the workspace before anything
			// copies it to the node (MI300X's stage).
			if err := beforeRun(); err != nil {
				return res, err
			}
			continue
		case RoleImport, RoleStage, RolePrepare, RoleRun:
			if c.Role == RoleRun || !bound.Allocates || res.JobID != "" {
				if err := beforeRun(); err != nil {
					return res, err
				}
			}
		}
		if err := e.command(ctx, c, nil); err != nil && !c.MayFail {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			return res, e.failed(ctx, bound, i, err)
		}
	}
	if res.Bound == nil {
		res.Bound = bound
	}
	return res, nil
}

// failed is the error of bound's command i, which failed with err while
// ctx was not cancelled: a *StepError, or for the container step a
// *JobEndedError when its job ended under it (asked before the release,
// which would end it anyway). A failed point's files still come back
// (MI300X's collect).
func (e Exec) failed(ctx context.Context, bound *Plan, i int, err error) error {
	c := bound.Commands[i]
	serr := &StepError{Role: c.Role, Argv: c.Argv, Err: err}
	if c.Role != RoleRun {
		return serr
	}
	var ended error
	if e.JobEnded != nil && bound.JobID != "" && bound.ContainerName == "" {
		if state, ok := e.JobEnded(ctx, bound.JobID); ok {
			ended = &JobEndedError{JobID: bound.JobID, State: state, Step: serr}
		}
	}
	for _, rest := range bound.Commands[i+1:] {
		if rest.Role == RoleCollect {
			_ = e.command(ctx, rest, nil)
		}
	}
	if ended != nil {
		return ended
	}
	return serr
}

// jobID is the id of the job an allocate step made: salloc's granted id
// (in its output) is this allocation's; the job-id step (squeue by name),
// when the plan has one, is only the fallback when salloc printed none and
// succeeded, since a name can match other jobs (another sweep on the
// runner): more than one match is an error. "" when neither gives one.
func (e Exec) jobID(ctx context.Context, allocOut string, allocOK bool, step *recipes.HostCommand) (string, error) {
	if m := granted.FindStringSubmatch(allocOut); m != nil {
		return m[1], nil
	}
	if step == nil || !allocOK {
		return "", nil
	}
	var q bytes.Buffer
	if err := e.command(ctx, *step, &q); err != nil {
		return "", nil
	}
	switch ids := jobIDs(q.String()); {
	case len(ids) == 1:
		return ids[0], nil
	case len(ids) > 1:
		return "", &StepError{Role: RoleJobID, Argv: step.Argv, Err: fmt.Errorf(
			"salloc printed no \"Granted job allocation N\" and squeue lists %d jobs of that name (%s): cannot tell which is this allocation, so none is used or cancelled; cancel the one this launch made with scancel ID",
			len(ids), strings.Join(ids, ", "))}
	}
	return "", nil
}

// releaseFailed says whether a failed optional release command left
// something behind: a docker launch's docker rm -f that failed for another
// reason than "No such container" (the container's --rm removed it) did
// not remove the container (the daemon unreachable, say). Other optional
// releases (MI300X's clean-up of copied files) only tidy up.
func releaseFailed(pl *Plan, output string) bool {
	return pl.ContainerName != "" && !strings.Contains(output, noSuchContainer)
}

// noSuchContainer is what docker rm says of a container that is not there.
const noSuchContainer = "No such container"

// notCause are lines a failed command prints that never say why: srun's
// report of a task's exit code or of its end by a signal (the error
// carries it; a time limit's line before it says why), docker's hint to
// read its --help after its own error, and what Slurm and Pyxis print
// after a container step's own reason (Pyxis's "--container-mounts:
// source path does not exist: DIR", a failed import's or enroot's
// error): that the step's container was not made or started, that the
// plugin stack failed, Pyxis's entrypoint hint and the heading of the
// log it echoes.
var notCause = regexp.MustCompile(`^(srun: error: .*: tasks? [0-9,-]+: (Exited with exit code [0-9]+|Terminated|Killed)|Run '.*--help' for more information|` +
	slurmError + `(Failed to invoke spank plugin stack|spank: required plugin \S+: \S+ failed with rc=-?[0-9]+|` +
	`pyxis: (printing \S+ log file:|container was not started successfully by another task|couldn't create enroot start configuration script|if the image has an unusual entrypoint, try using --no-container-entrypoint)))$`)

// slurmError begins an error line of srun or of a step's slurmstepd
// ("slurmstepd-NODE: error: " in Slurm 22.05).
const slurmError = `(?:srun|slurmstepd(?:-\S+)?): error: `

// pyxisEcho begins a line of the log Pyxis echoes after a failure (its
// importer's or enroot's; a blank one trimmed to "pyxis:"): such a line
// says why only when it reports an error, not the import's or the
// container's progress before it.
var pyxisEcho = regexp.MustCompile(`^` + slurmError + `pyxis:(?:     |$)`)

// NotCause reports whether a line a failed command printed is one that
// never says why it failed (notCause, or a line of a log Pyxis echoes
// that reports no error): a caller picking the line that names the cause
// passes over it.
func NotCause(line string) bool {
	if m := pyxisEcho.FindStringIndex(line); m != nil {
		return !strings.Contains(strings.ToLower(line[m[1]:]), "error")
	}
	return notCause.MatchString(line)
}

// Cause is what one line of a failed command's output says of why it
// failed: the line's last state (after its last carriage return, where a
// progress bar leaves the message that overwrote it), trimmed; "" when it
// says nothing (blank, or NotCause).
func Cause(line string) string {
	line = strings.TrimRight(line, "\r\n")
	line = strings.TrimSpace(line[strings.LastIndexByte(line, '\r')+1:])
	if line == "" || NotCause(line) {
		return ""
	}
	return line
}

// LastCause is the last line of a failed command's output that says why
// it failed (Cause), "" when none does: the rule of every launch error
// that names a cause (a host command's, Exec; an import's in an arm's
// job, from its log).
func LastCause(output string) string {
	last := ""
	for line := range strings.Lines(output) {
		if c := Cause(line); c != "" {
			last = c
		}
	}
	return last
}

// causeLine keeps the last line a command wrote that can say why it
// failed (curl's "Could not resolve host" under enroot import, docker's
// "Error response from daemon", the payload's own last word), as
// LastCause picks it from the whole output. Safe for concurrent writes.
type causeLine struct {
	mu      sync.Mutex
	partial []byte
	last    string
}

func (c *causeLine) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.partial = append(c.partial, p...)
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			break
		}
		c.keep(string(c.partial[:i]))
		c.partial = c.partial[i+1:]
	}
	if len(c.partial) > 4096 {
		// A line without end (a progress bar): only its tail matters.
		c.partial = c.partial[len(c.partial)-4096:]
	}
	return len(p), nil
}

func (c *causeLine) keep(line string) {
	if line = Cause(line); line != "" {
		c.last = line
	}
}

// String is the cause: the last line kept, or an unfinished last line.
func (c *causeLine) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.partial) > 0 {
		c.keep(string(c.partial))
		c.partial = nil
	}
	return c.last
}

// jobIDs are the job ids of squeue -h -o %A output, one a line.
func jobIDs(out string) []string {
	var ids []string
	for line := range strings.Lines(out) {
		if line = strings.TrimSpace(line); jobIDPattern.MatchString(line) {
			ids = append(ids, line)
		}
	}
	return ids
}

func needsRelease(pl *Plan, jobID string) bool {
	return jobID != "" && (pl.Allocates || pl.ContainerName != "")
}

// command runs one host command (its stdout also into capture when set),
// stopping it with SIGTERM, then SIGKILL after 10 s, when ctx ends.
func (e Exec) command(ctx context.Context, c recipes.HostCommand, capture *bytes.Buffer) error {
	if e.Progress != nil {
		e.Progress(c.Role + ": " + Oneline(c.Argv))
	}
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	// Its own process group, stopped as a whole: a terminal's Ctrl-C
	// reaches sweep, which stops the command (srun, docker run) itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if len(c.Stop) > 0 {
		// The payload stops itself (and writes down what it finished):
		// srun or docker ends when it has.
		cmd.Cancel = func() error {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			stop := exec.CommandContext(sctx, c.Stop[0], c.Stop[1:]...)
			stop.Stdout, stop.Stderr = e.Stderr, e.Stderr
			if err := stop.Run(); err != nil {
				return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			}
			return nil
		}
		if e.StopWait > 0 {
			cmd.WaitDelay = e.StopWait
		}
	}
	cmd.Dir = e.Dir
	// The container's sweep is the mounted one (SweepExport), never the
	// binary this host's SWEEP_EXECUTABLE names.
	cmd.Env = selfexe.Without(os.Environ())
	for k, v := range c.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stderr = e.Stderr
	cmd.Stdout = e.Stdout
	if c.MayFail && len(c.StdoutTo) == 0 {
		// The launchers silence these (docker rm -f of no container);
		// a capture still gets their output.
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	}
	if capture != nil {
		cmd.Stdout = io.MultiWriter(cmd.Stdout, capture)
		cmd.Stderr = io.MultiWriter(cmd.Stderr, capture)
	}
	cause := &causeLine{}
	cmd.Stderr = io.MultiWriter(cmd.Stderr, cause)
	if err := e.run(ctx, cmd, c); err != nil {
		if why := cause.String(); why != "" && ctx.Err() == nil {
			return fmt.Errorf("%w: %s", err, why)
		}
		return err
	}
	return nil
}

// run runs cmd, piping its stdout into c's StdoutTo reader when it has one.
func (e Exec) run(ctx context.Context, cmd *exec.Cmd, c recipes.HostCommand) error {
	if len(c.StdoutTo) == 0 {
		return cmd.Run()
	}
	sink := exec.CommandContext(ctx, c.StdoutTo[0], c.StdoutTo[1:]...)
	sink.Stdout, sink.Stderr = e.Stdout, e.Stderr
	cmd.Stdout = nil
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	sink.Stdin = pipe
	if err := cmd.Start(); err != nil {
		return err
	}
	if err := sink.Start(); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return err
	}
	serr := sink.Wait()
	return errors.Join(cmd.Wait(), serr)
}

// guardProc is a running guard: closing its stdin without "done" makes it
// release.
type guardProc struct {
	w   io.WriteCloser
	cmd *exec.Cmd
}

// startGuard starts the guard with the plan's first non-optional release
// command (scancel JOB, docker rm -f NAME).
func (e Exec) startGuard(pl *Plan) *guardProc {
	if len(e.Guard) == 0 {
		return nil
	}
	var release []string
	for _, c := range pl.Commands {
		if c.Role == RoleRelease && (!c.MayFail || pl.ContainerName != "") {
			release = c.Argv
		}
	}
	if release == nil {
		return nil
	}
	cmd := exec.Command(e.Guard[0], append(append(e.Guard[1:], "--"), release...)...)
	// Its own process group: a Ctrl-C to the terminal's group must not
	// stop it before this process has released.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Only a file: a pipe to this process would break (SIGPIPE) when this
	// process dies, which is when the guard has work to do.
	if f, ok := e.Stderr.(*os.File); ok {
		cmd.Stdout, cmd.Stderr = f, f
	}
	w, err := cmd.StdinPipe()
	if err != nil {
		return nil
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(e.Stderr, "launch: no release guard (%v): a kill -9 of this process would leave the job to its time limit\n", err)
		return nil
	}
	return &guardProc{w: w, cmd: cmd}
}

func (g *guardProc) done() {
	if g == nil {
		return
	}
	io.WriteString(g.w, "done\n")
	g.w.Close()
	g.cmd.Wait()
}

// Guard is the guard process's body: it waits for its stdin to end and,
// unless the launcher wrote "done" first (it released itself), runs
// release (scancel JOB): the launcher died without releasing.
func Guard(stdin io.Reader, release []string, stderr io.Writer) error {
	signal.Ignore(syscall.SIGPIPE, syscall.SIGINT, syscall.SIGHUP)
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "done" {
			return nil
		}
	}
	fmt.Fprintf(stderr, "launch guard: the launcher ended without releasing; running %s\n", strings.Join(release, " "))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, release[0], release[1:]...)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	return cmd.Run()
}

// Oneline is argv for a progress line: a shell script argument shows as
// its line count.
func Oneline(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = a
		if n := strings.Count(strings.TrimSpace(a), "\n"); n > 0 {
			out[i] = fmt.Sprintf("<script, %d lines>", n+1)
		}
	}
	return strings.Join(out, " ")
}
