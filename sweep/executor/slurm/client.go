// Package slurm submits, watches and cancels Slurm batch jobs by running
// Slurm's own commands (sbatch --parsable, squeue --json, sacct --json,
// scancel) as argv, never as shell strings. A sweep's Slurm executor runs
// one job per arm: the job's program is a sweep command on the node that
// runs the arm's points in a row on one server.
//
// The call sequence:
//
//	c := slurm.NewClient(slurm.Exec{})               // or a fake Commander in tests
//	id, err := c.Submit(ctx, slurm.JobSpec{Name: ..., GPUs: 8, TimeLimit: 2 * time.Hour, Argv: argv})
//	st, err := c.Wait(ctx, id, slurm.WaitOptions{Poll: 2 * time.Second, StartTimeout: limit})
//	_ = c.Cancel(ctx, id)                              // on Ctrl-C
//
// squeue --json of Slurm 22.05 ignores its job filters, so the client
// filters by job id itself; when slurmctld does not answer it exits 0
// with an empty job list and an "errors" entry, which the client reads as
// no answer (ErrNoAnswer), not as an empty queue. A job squeue no longer
// shows (MinJobAge passed, or slurmctld lost it) is looked up with
// sacct --json when the cluster keeps accounting.
package slurm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"sweep/internal/selfexe"
)

// Commander runs one Slurm command and returns its standard output.
type Commander interface {
	Run(ctx context.Context, argv []string) ([]byte, error)
}

// Exec runs commands with os/exec, each bounded by Timeout (default 60 s).
type Exec struct {
	Timeout time.Duration
	// Env is added to the process environment (e.g. SLURM_CONF=...).
	Env []string
}

// CommandError is a Slurm command that failed.
type CommandError struct {
	Argv   []string
	Err    error
	Stderr string
}

func (e *CommandError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("%s: %s", strings.Join(e.Argv, " "), msg)
}

func (e *CommandError) Unwrap() error { return e.Err }

// Run implements Commander.
func (x Exec) Run(ctx context.Context, argv []string) ([]byte, error) {
	if len(argv) == 0 {
		return nil, errors.New("slurm: empty command")
	}
	t := x.Timeout
	if t <= 0 {
		t = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	// A job's sweep is its Program (or the mounted one in a launched
	// arm's container): this host's SWEEP_EXECUTABLE is not the node's.
	cmd.Env = append(selfexe.Without(os.Environ()), x.Env...)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %s: %w", t, ctx.Err())
		}
		return stdout.Bytes(), &CommandError{Argv: argv, Err: err, Stderr: stderr.String()}
	}
	return stdout.Bytes(), nil
}

// JobID is a Slurm job id.
type JobID string

// JobSpec is one batch job.
type JobSpec struct {
	Name      string        // --job-name
	GPUs      int           // --gres=gpu:N (0: none)
	TimeLimit time.Duration // --time, rounded up to whole minutes (0: the partition's)
	Partition string        // --partition ("" : the default)
	Output    string        // --output file (stdout and stderr)
	Dir       string        // --chdir
	// Hold submits the job held (--hold): it starts once released
	// (Client.Unhold).
	Hold bool
	// Options are further sbatch options from the runner profile
	// (e.g. --exclusive, --cpus-per-task=256), one token each.
	Options []string
	// Script is a batch script that runs its arguments as a command
	// (WrapperScript writes one); Argv is that command.
	Script string
	Argv   []string
}

// WrapperScript is a batch script that replaces itself with its
// arguments, so a job's command stays an argv from end to end.
const WrapperScript = "#!/bin/sh\n# sweep: run the job's command, given as arguments.\nexec \"$@\"\n"

// ImportScript is a batch script (bash) for a job that imports its image
// on its node before its command, both argvs end to end: its arguments are
// LOG, N, the import's N arguments, then the command. The import's output
// goes to LOG and then to the job's output; LOG is removed once the import
// succeeded, and a failed import ends the job with its exit status before
// the command runs, LOG kept for the submitter to read why. A successful
// import writes importedLine before the command runs, so that the job's
// output after it is the command's alone.
const ImportScript = `#!/bin/bash
# sweep: import the job's image on its node, then run the job's command.
# Arguments: LOG N IMPORT... (N arguments) COMMAND...
log=$1 n=$2
shift 2
"${@:1:$n}" >"$log" 2>&1
rc=$?
cat "$log"
if [ "$rc" -ne 0 ]; then
	echo "sweep: the image import failed (exit $rc); its output is in $log" >&2
	exit "$rc"
fi
rm -f "$log"
echo "` + importedLine + `"
shift "$n"
exec "$@"
`

// importedLine is the line ImportScript writes to the job's output once
// the import succeeded, before the job's command runs.
const importedLine = "sweep: the image is imported; the job's command follows"

// SbatchArgv returns the sbatch command line for spec.
func SbatchArgv(spec JobSpec) ([]string, error) {
	if spec.Script == "" || len(spec.Argv) == 0 {
		return nil, errors.New("slurm job: a script and a command are required")
	}
	argv := []string{"sbatch", "--parsable"}
	if spec.Name != "" {
		argv = append(argv, "--job-name="+spec.Name)
	}
	if spec.GPUs > 0 {
		argv = append(argv, "--gres=gpu:"+strconv.Itoa(spec.GPUs))
	}
	if spec.TimeLimit > 0 {
		min := int((spec.TimeLimit + time.Minute - 1) / time.Minute)
		argv = append(argv, "--time="+strconv.Itoa(min))
	}
	if spec.Partition != "" {
		argv = append(argv, "--partition="+spec.Partition)
	}
	if spec.Output != "" {
		argv = append(argv, "--output="+spec.Output)
	}
	if spec.Dir != "" {
		argv = append(argv, "--chdir="+spec.Dir)
	}
	if spec.Hold {
		argv = append(argv, "--hold")
	}
	for _, o := range spec.Options {
		if !strings.HasPrefix(o, "-") {
			return nil, fmt.Errorf("slurm job: sbatch option %q must start with '-' (write --name=value as one token)", o)
		}
		argv = append(argv, o)
	}
	argv = append(argv, spec.Script)
	return append(argv, spec.Argv...), nil
}

// State is a job's state as Slurm names it (PENDING, RUNNING, COMPLETED,
// FAILED, CANCELLED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, PREEMPTED, ...).
type State string

// Done reports whether the job has ended.
func (s State) Done() bool {
	switch s {
	case "", "PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING", "SIGNALING", "STAGE_OUT":
		return false
	}
	return true
}

// JobStatus is what Slurm reports of a job.
type JobStatus struct {
	ID       JobID
	State    State
	Reason   string    // state_reason
	ExitCode int       // the program's exit status
	Signal   int       // the signal that ended it (0: none)
	Start    time.Time // zero until it started
	End      time.Time
	// Source is "squeue" or "sacct".
	Source string
	// Name is the job's name (--job-name), Output its standard output
	// file made absolute against its working directory (unexpanded %
	// patterns kept), User and UserID its owner: as squeue reports them;
	// from sacct they are empty (UserID -1).
	Name   string
	Output string
	User   string
	UserID int
}

// ErrUnknownJob is a job neither squeue nor sacct knows.
var ErrUnknownJob = errors.New("slurm does not know the job")

// Client runs Slurm commands through a Commander.
type Client struct {
	Cmd Commander
}

// NewClient returns a client that runs commands with cmd.
func NewClient(cmd Commander) *Client { return &Client{Cmd: cmd} }

// Submit submits spec and returns its job id.
func (c *Client) Submit(ctx context.Context, spec JobSpec) (JobID, error) {
	argv, err := SbatchArgv(spec)
	if err != nil {
		return "", err
	}
	out, err := c.Cmd.Run(ctx, argv)
	if err != nil {
		return "", err
	}
	// --parsable prints "jobid" or "jobid;cluster".
	line := strings.TrimSpace(string(out))
	id, _, _ := strings.Cut(line, ";")
	if _, perr := strconv.Atoi(id); perr != nil {
		return "", fmt.Errorf("sbatch --parsable printed %q, want a job id", line)
	}
	return JobID(id), nil
}

// Cancel cancels a job (scancel); cancelling an ended job is not an error.
func (c *Client) Cancel(ctx context.Context, id JobID) error {
	_, err := c.Cmd.Run(ctx, []string{"scancel", string(id)})
	if ce, ok := errors.AsType[*CommandError](err); ok && strings.Contains(ce.Stderr, "already completing or completed") {
		return nil
	}
	return err
}

// Unhold releases a job submitted held (scontrol release), which then
// starts as its resources allow.
func (c *Client) Unhold(ctx context.Context, id JobID) error {
	_, err := c.Cmd.Run(ctx, []string{"scontrol", "release", string(id)})
	return err
}

type slurmTime int64

func (t slurmTime) time() time.Time {
	if t <= 0 {
		return time.Time{}
	}
	return time.Unix(int64(t), 0)
}

// squeueJob holds the fields of squeue --json (openapi v0.0.38+) we read.
type squeueJob struct {
	JobID       json.Number     `json:"job_id"`
	JobState    json.RawMessage `json:"job_state"` // a string; a list in newer Slurm
	StateReason string          `json:"state_reason"`
	ExitCode    json.RawMessage `json:"exit_code"` // an int; an object in newer Slurm
	StartTime   json.RawMessage `json:"start_time"`
	EndTime     json.RawMessage `json:"end_time"`
	Name        string          `json:"name"`
	Output      string          `json:"standard_output"`
	Cwd         string          `json:"current_working_directory"`
	UserName    string          `json:"user_name"`
	UserID      *int            `json:"user_id"`
}

type squeueOut struct {
	Jobs   []squeueJob  `json:"jobs"`
	Errors []slurmError `json:"errors"`
}

// slurmError is an entry of the "errors" list of Slurm's JSON output.
type slurmError struct {
	Description string `json:"description"`
	Error       string `json:"error"`
	Source      string `json:"source"`
}

// ErrNoAnswer is a Slurm command that ran but reports that slurmctld did
// not answer (squeue --json exits 0 then, with an error entry and no job).
var ErrNoAnswer = errors.New("slurmctld did not answer")

// Status returns what Slurm reports of id: squeue first, then sacct.
func (c *Client) Status(ctx context.Context, id JobID) (JobStatus, error) {
	all, err := c.Statuses(ctx)
	if err != nil {
		return JobStatus{}, err
	}
	if st, ok := all[id]; ok {
		return st, nil
	}
	return c.sacct(ctx, id)
}

// Statuses returns every job squeue --json shows, by id.
func (c *Client) Statuses(ctx context.Context) (map[JobID]JobStatus, error) {
	out, err := c.Cmd.Run(ctx, []string{"squeue", "--all", "--json"})
	if err != nil {
		return nil, err
	}
	var q squeueOut
	if err := json.Unmarshal(out, &q); err != nil {
		return nil, fmt.Errorf("squeue --json: %w", err)
	}
	if len(q.Errors) > 0 {
		// Its job list is empty, not the cluster's: never read it as
		// "every job has left the queue".
		e := q.Errors[0]
		return nil, fmt.Errorf("squeue --json: %w: %s (%s: %s)", ErrNoAnswer, e.Description, e.Source, e.Error)
	}
	res := make(map[JobID]JobStatus, len(q.Jobs))
	for _, j := range q.Jobs {
		st := JobStatus{ID: JobID(j.JobID.String()), State: parseState(j.JobState), Reason: j.StateReason,
			Start: parseTime(j.StartTime), End: parseTime(j.EndTime), Source: "squeue",
			Name: j.Name, Output: j.Output, User: j.UserName, UserID: -1}
		if st.Output != "" && !filepath.IsAbs(st.Output) && j.Cwd != "" {
			st.Output = filepath.Join(j.Cwd, st.Output)
		}
		if j.UserID != nil {
			st.UserID = *j.UserID
		}
		st.ExitCode, st.Signal = parseExit(j.ExitCode)
		if st.State == "PENDING" {
			st.Start = time.Time{} // squeue predicts a start time for pending jobs
		}
		res[st.ID] = st
	}
	return res, nil
}

// sacct looks a job up in the accounting database.
func (c *Client) sacct(ctx context.Context, id JobID) (JobStatus, error) {
	out, err := c.Cmd.Run(ctx, []string{"sacct", "--json", "-j", string(id)})
	if err != nil {
		if ce, ok := errors.AsType[*CommandError](err); ok && strings.Contains(strings.ToLower(ce.Stderr), "accounting storage is disabled") {
			return JobStatus{}, fmt.Errorf("slurm job %s: %w (squeue no longer shows it and the cluster keeps no accounting)", id, ErrUnknownJob)
		}
		return JobStatus{}, err
	}
	var a struct {
		Jobs []struct {
			JobID    json.Number     `json:"job_id"`
			State    json.RawMessage `json:"state"`
			ExitCode json.RawMessage `json:"exit_code"`
			Time     struct {
				Start json.RawMessage `json:"start"`
				End   json.RawMessage `json:"end"`
			} `json:"time"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(out, &a); err != nil {
		return JobStatus{}, fmt.Errorf("sacct --json: %w", err)
	}
	for _, j := range a.Jobs {
		if JobID(j.JobID.String()) != id {
			continue
		}
		st := JobStatus{ID: id, State: parseState(j.State),
			Start: parseTime(j.Time.Start), End: parseTime(j.Time.End), Source: "sacct", UserID: -1}
		st.ExitCode, st.Signal = parseExit(j.ExitCode)
		return st, nil
	}
	return JobStatus{}, fmt.Errorf("slurm job %s: %w", id, ErrUnknownJob)
}

// parseState reads "RUNNING", ["RUNNING"] or {"current": "RUNNING"}.
func parseState(raw json.RawMessage) State {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return State(strings.ToUpper(s))
	}
	var l []string
	if json.Unmarshal(raw, &l) == nil && len(l) > 0 {
		return State(strings.ToUpper(l[0]))
	}
	var o struct {
		Current json.RawMessage `json:"current"`
	}
	if json.Unmarshal(raw, &o) == nil && o.Current != nil {
		return parseState(o.Current)
	}
	return ""
}

// parseExit reads Slurm 22.05's raw wait status (768 is exit 3, 15 is
// signal 15) or newer Slurm's {"return_code": 3, "signal": {"id": 15}}
// (return_code possibly {"number": 3}).
func parseExit(raw json.RawMessage) (code, signal int) {
	var n int
	if json.Unmarshal(raw, &n) == nil {
		return (n >> 8) & 0xff, n & 0x7f
	}
	var o struct {
		ReturnCode json.RawMessage `json:"return_code"`
		Signal     struct {
			ID json.RawMessage `json:"id"`
		} `json:"signal"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return 0, 0
	}
	code = number(o.ReturnCode)
	signal = number(o.Signal.ID)
	return code, signal
}

// number reads 3 or {"number": 3, "set": true}.
func number(raw json.RawMessage) int {
	var n int
	if json.Unmarshal(raw, &n) == nil {
		return n
	}
	var num struct {
		Number int `json:"number"`
	}
	if json.Unmarshal(raw, &num) == nil {
		return num.Number
	}
	return 0
}

// parseTime reads 1700000000 or {"number": 1700000000, "set": true}.
func parseTime(raw json.RawMessage) time.Time {
	var n int64
	if json.Unmarshal(raw, &n) == nil {
		return slurmTime(n).time()
	}
	var num struct {
		Number int64 `json:"number"`
		Set    *bool `json:"set"`
	}
	if json.Unmarshal(raw, &num) == nil && (num.Set == nil || *num.Set) {
		return slurmTime(num.Number).time()
	}
	return time.Time{}
}

// Available reports whether this machine can submit jobs: sbatch is on
// PATH and sinfo lists at least one node state within ctx.
func Available(ctx context.Context) error {
	if _, err := exec.LookPath("sbatch"); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, "sinfo", "-h", "-o", "%T").Output()
	if err != nil {
		return fmt.Errorf("sinfo: %w", err)
	}
	if len(strings.TrimSpace(string(out))) == 0 {
		return errors.New("sinfo lists no node")
	}
	return nil
}
