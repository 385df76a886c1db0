// Package proc runs the long-lived programs of a benchmark point (engine,
// router, load generator) and guarantees none of them outlives the point.
//
// A caller builds a Spec (argv, environment, log file), starts it, waits for
// readiness or completion, and stops it:
//
//	p, err := process.Start(ctx, process.Spec{Name: "engine", Argv: argv, LogPath: dir + "/server.log"})
//	if err != nil { ... }
//	defer p.Stop(60 * time.Second)
//	if err := process.WaitHTTP(ctx, p, "http://127.0.0.1:8888/health", process.WaitOptions{Timeout: 20 * time.Minute}); err != nil { ... }
//	...
//	st := p.Stop(60 * time.Second) // TERM to the group, grace, KILL to every descendant
//
// Every process gets its own process group. Stop sends SIGTERM to the group,
// waits up to the grace period, then sends SIGKILL to the group and to every
// descendant seen at any point (also those that moved to a group of their
// own), so no orphan survives. Output (stdout and stderr, interleaved by line)
// is drained to the log file by two goroutines that exit when the program's
// pipes close; the last lines are also kept in memory for error messages.
//
// Of several processes watched together, FirstEnded names the one that
// ended first, by the monotonic time each was seen to end (Ended), not by
// which Done channel a select happened to take:
//
//	<-p.Done() // or q's
//	first := process.FirstEnded(p, q)
package proc

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	gocmd "github.com/go-cmd/cmd"
)

// Spec says what to run.
type Spec struct {
	// Tag marks the process and its descendants (TagEnv); "" makes a
	// fresh one. Callers that must find the tree after their own death
	// (KillTagged) choose it with NewTag and record it before Start.
	Tag string

	// Name labels the process in errors and logs ("engine", "router", "client").
	Name string
	// Argv is the program and its arguments; Argv[0] is looked up in PATH.
	Argv []string
	// Env is added to the inherited environment, overriding variables of the same name.
	Env map[string]string
	// Unset removes inherited variables (applied before Env).
	Unset []string
	// Dir is the working directory; empty means the current one.
	Dir string
	// LogPath receives stdout and stderr; empty discards them (the tail is still kept).
	LogPath string
	// TailLines is how many of the last output lines Tail keeps; 0 means 50.
	TailLines int
	// OnLine, when set, is called with every output line, in order, from
	// the goroutine that drains the output; it must return quickly.
	OnLine func(line string)
}

// Status is the outcome of a process. Exit is -1 until the process has
// ended; Signal names the signal that ended it, if any.
type Status struct {
	PID     int
	Exit    int
	Signal  string
	Runtime time.Duration
	// Stopped is true when the process ended because Stop was called.
	Stopped bool
	// Err is a start or wait error (nil for a normal exit, whatever its code).
	Err error
}

// Success reports whether the process ran to completion with exit code 0.
func (s Status) Success() bool { return s.Err == nil && s.Exit == 0 && s.Signal == "" }

func (s Status) String() string {
	switch {
	case s.Err != nil && s.Exit < 0 && s.Signal == "":
		return s.Err.Error()
	case s.Signal != "":
		return "killed by " + s.Signal
	default:
		return fmt.Sprintf("exit code %d", s.Exit)
	}
}

// Process is a started program. Its methods are safe for concurrent use.
type Process struct {
	spec  Spec
	cmd   *gocmd.Cmd
	exec  *exec.Cmd // the os/exec command go-cmd runs, for its ProcessState
	pid   int
	start time.Time

	drained chan struct{} // closed when both output streams are drained
	done    chan struct{} // closed when the process has ended and output is drained
	logFile *os.File

	mu       sync.Mutex
	ended    time.Time // when go-cmd's wait returned (Ended); zero while it runs
	tail     []string
	tag      string       // value of TagEnv in the process's environment
	seen     map[int]bool // descendants ever observed, for the final KILL
	status   Status
	stopped  bool
	stopOnce sync.Once
}

// Start starts spec. The process keeps running when ctx is cancelled:
// callers stop it with Stop (usually deferred), which is what lets a
// cancelled point still record the engine's exit status.
func Start(ctx context.Context, spec Spec) (*Process, error) {
	if len(spec.Argv) == 0 {
		return nil, fmt.Errorf("start %s: empty argv", spec.Name)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	if spec.TailLines <= 0 {
		spec.TailLines = 50
	}
	path, err := exec.LookPath(spec.Argv[0])
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	p := &Process{spec: spec, drained: make(chan struct{}), done: make(chan struct{}), seen: map[int]bool{}, tag: spec.Tag}
	if p.tag == "" {
		p.tag = NewTag(spec.Name)
	}
	if spec.LogPath != "" {
		f, err := os.OpenFile(spec.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o644)
		if err != nil {
			return nil, fmt.Errorf("start %s: log: %w", spec.Name, err)
		}
		p.logFile = f
	}
	c := gocmd.NewCmdOptions(gocmd.Options{
		Streaming:      true,
		LineBufferSize: 1 << 20,
		BeforeExec: []func(*exec.Cmd){func(c *exec.Cmd) {
			c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
			p.exec = c
		}},
	}, path, spec.Argv[1:]...)
	env := maps.Clone(spec.Env)
	if env == nil {
		env = map[string]string{}
	}
	env[TagEnv] = p.tag
	c.Env = buildEnv(os.Environ(), spec.Unset, env)
	c.Dir = spec.Dir
	p.cmd = c
	statusCh := c.Start()
	go p.drain()
	go p.wait(statusCh)
	// Wait until the pid is known (the program started, even if it has
	// already ended) or the start failed.
	for {
		if st := c.Status(); st.PID > 0 {
			p.pid = st.PID
			p.start = time.Unix(0, st.StartTs)
			return p, nil
		}
		select {
		case <-p.done:
			p.mu.Lock()
			st := p.status
			p.mu.Unlock()
			if st.PID > 0 {
				p.pid = st.PID
				p.start = time.Now().Add(-st.Runtime)
				return p, nil
			}
			return nil, fmt.Errorf("start %s (%s): %w", spec.Name, spec.Argv[0], startError(st))
		case <-time.After(time.Millisecond):
		}
	}
}

func startError(st Status) error {
	if st.Err != nil {
		return st.Err
	}
	return fmt.Errorf("did not start (%s)", st)
}

// buildEnv returns base without the unset names, with env applied on top, sorted.
func buildEnv(base, unset []string, env map[string]string) []string {
	out := make([]string, 0, len(base)+len(env))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(unset, name) {
			continue
		}
		if _, over := env[name]; over {
			continue
		}
		out = append(out, kv)
	}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// drain copies both output streams to the log file and the tail. It exits
// when go-cmd closes both channels, which happens after the process ends.
func (p *Process) drain() {
	defer close(p.drained)
	stdout, stderr := p.cmd.Stdout, p.cmd.Stderr
	for stdout != nil || stderr != nil {
		var line string
		var ok bool
		select {
		case line, ok = <-stdout:
			if !ok {
				stdout = nil
				continue
			}
		case line, ok = <-stderr:
			if !ok {
				stderr = nil
				continue
			}
		}
		p.record(line)
	}
}

func (p *Process) record(line string) {
	if p.spec.OnLine != nil {
		p.spec.OnLine(line)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.logFile != nil {
		// A failed log write must not stall the program; the tail still has the line.
		_, _ = io.WriteString(p.logFile, line+"\n")
	}
	p.tail = append(p.tail, line)
	if over := len(p.tail) - p.spec.TailLines; over > 0 {
		p.tail = slices.Delete(p.tail, 0, over)
	}
}

// wait records the final status once go-cmd reports it.
func (p *Process) wait(statusCh <-chan gocmd.Status) {
	st := <-statusCh
	p.mu.Lock()
	p.ended = time.Now()
	p.mu.Unlock()
	<-p.drained
	p.mu.Lock()
	p.status = convert(st, p.exec, st.PID)
	p.status.Stopped = p.stopped
	p.mu.Unlock()
	p.closeLog()
	close(p.done)
}

func (p *Process) closeLog() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.logFile != nil {
		_ = p.logFile.Sync()
		_ = p.logFile.Close()
		p.logFile = nil
	}
}

// convert builds our Status from go-cmd's and the wait status of the
// underlying os/exec command (go-cmd flattens signals into an error string).
func convert(st gocmd.Status, c *exec.Cmd, pid int) Status {
	out := Status{PID: pid, Exit: st.Exit, Runtime: time.Duration(st.Runtime * float64(time.Second))}
	if c != nil && c.ProcessState != nil {
		if ws, ok := c.ProcessState.Sys().(syscall.WaitStatus); ok {
			if ws.Signaled() {
				out.Signal = SignalName(ws.Signal())
				out.Exit = -1
				return out
			}
			out.Exit = ws.ExitStatus()
			return out
		}
	}
	out.Err = st.Error
	return out
}

// PID is the process id (also its process group id).
func (p *Process) PID() int { return p.pid }

// Tag returns the process tree's tag (TagEnv).
func (p *Process) Tag() string { return p.tag }

// Name is the label given in the Spec.
func (p *Process) Name() string { return p.spec.Name }

// Done is closed when the process has ended and its output is drained.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Ended returns when the process was seen to end, and whether it has: a
// reading of this program's clock, its monotonic part included, taken as
// soon as go-cmd's wait for the process returned, before the output is
// drained (Done closes a moment later). Readings of two processes order
// their exits whatever the wall clock does in between. go-cmd's own
// Status.StopTs, taken at about the same moment, is not used: it is the
// wall clock in Unix nanoseconds, which a clock step (NTP) can reorder.
// It is when this program saw the exit, not the kernel's time of it: a
// program starved of CPU across two exits sees both late, and can order
// two exits closer together than that stall either way.
func (p *Process) Ended() (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ended, !p.ended.IsZero()
}

// FirstEnded returns the one of procs that ended first by Ended, nil when
// none has ended yet; nil entries are skipped, and of two with the same
// reading the earlier in procs wins. A caller that watches several
// processes decides with it which ended first, not by which Done channel
// its select saw closed: once both are closed, a select picks at random.
// The process returned may not be Done yet (its output still draining);
// its Status is final once it is.
func FirstEnded(procs ...*Process) *Process {
	var first *Process
	var firstAt time.Time
	for _, p := range procs {
		if p == nil {
			continue
		}
		if at, ok := p.Ended(); ok && (first == nil || at.Before(firstAt)) {
			first, firstAt = p, at
		}
	}
	return first
}

// Status returns the final status once Done is closed; before that Exit is -1.
func (p *Process) Status() Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.status.PID == 0 {
		return Status{PID: p.pid, Exit: -1, Runtime: time.Since(p.start)}
	}
	return p.status
}

// Tail returns the last output lines, oldest first.
func (p *Process) Tail() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.tail)
}

// Wait blocks until the process ends or ctx is done; it does not stop the process.
func (p *Process) Wait(ctx context.Context) (Status, error) {
	select {
	case <-p.done:
		return p.Status(), nil
	case <-ctx.Done():
		return p.Status(), ctx.Err()
	}
}

// Stop ends the process tree and returns the final status. It sends SIGTERM
// to the process group, waits up to grace for the process to exit, then
// sends SIGKILL to the group and to every descendant still alive, including
// ones that left the group. Stop is idempotent and safe to call after the
// process has exited on its own (it still kills leftover descendants).
func (p *Process) Stop(grace time.Duration) Status {
	p.stopOnce.Do(func() {
		p.mu.Lock()
		if !p.Exited() {
			p.stopped = true
		}
		p.mu.Unlock()
		p.remember(p.tree())
		_ = syscall.Kill(-p.pid, syscall.SIGTERM)
		timer := time.NewTimer(max(grace, 0)) // a negative grace kills at once
		defer timer.Stop()
		ticker := time.NewTicker(100 * time.Millisecond)
		defer ticker.Stop()
	waitLoop:
		for {
			select {
			case <-p.done:
				if !p.anyAlive() {
					break waitLoop
				}
			case <-timer.C:
				break waitLoop
			case <-ticker.C:
				p.remember(p.tree())
			}
		}
		p.killAll()
		<-p.done
	})
	return p.Status()
}

// tree returns the live descendants of the process: those whose parent
// chain leads to it and those that carry its tag in their environment
// (which finds daemonised children re-parented to init).
func (p *Process) tree() []int {
	pids := descendants(p.pid)
	for _, pid := range tagged(p.tag) {
		if pid != p.pid && !slices.Contains(pids, pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func (p *Process) remember(pids []int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pid := range pids {
		p.seen[pid] = true
	}
}

func (p *Process) anyAlive() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for pid := range p.seen {
		if alive(pid) {
			return true
		}
	}
	return false
}

// killAll sends SIGKILL to the group and to every descendant ever seen,
// repeating until nothing of the tree is left (bounded).
func (p *Process) killAll() {
	for range 50 {
		p.remember(p.tree())
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
		p.mu.Lock()
		pids := make([]int, 0, len(p.seen))
		for pid := range p.seen {
			pids = append(pids, pid)
		}
		p.mu.Unlock()
		left := false
		for _, pid := range pids {
			if alive(pid) {
				left = true
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if !left && !alive(p.pid) {
			return
		}
		time.Sleep(20 * time.Millisecond) // give the kernel a moment to reap
	}
}

// Leftovers returns the pids of the process and of every descendant ever
// seen that are still alive. After Stop it is empty unless a process could
// not be killed (for example one stuck in uninterruptible sleep).
func (p *Process) Leftovers() []int {
	p.remember(p.tree())
	var out []int
	if alive(p.pid) {
		out = append(out, p.pid)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for pid := range p.seen {
		if alive(pid) {
			out = append(out, pid)
		}
	}
	slices.Sort(out)
	return out
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT", syscall.SIGILL: "SIGILL",
	syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE",
	syscall.SIGKILL: "SIGKILL", syscall.SIGUSR1: "SIGUSR1", syscall.SIGSEGV: "SIGSEGV", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM", syscall.SIGXCPU: "SIGXCPU",
	syscall.SIGXFSZ: "SIGXFSZ",
}

// SignalName is the signal's C name ("SIGKILL"), or "signal N" for one
// without a common name.
func SignalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", int(s))
}
