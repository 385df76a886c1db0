package launch

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"sweep/recipes"
)

// MultiNodeJob submits a planned multi-node point (recipes.PlanMultiNode)
// the way its InferenceX launcher does, from the launcher's checkout: the
// AMD path's `sbatch ... benchmarks/multi_node/amd_utils/job.slurm` (Dir
// is the InferenceX checkout the script is relative to), or the NVIDIA
// path's `srtctl apply -f RECIPE` (Dir is the srt-slurm checkout with
// InferenceX's recipes copied over it and srtslurm.yaml written, as the
// launcher prepares it). It reads the job id back (sbatch --parsable, or
// srtctl's "Job N"), waits until squeue no longer lists the job and, when
// ctx ends first, cancels it with scancel. The job's roles, nodes and
// results are the job script's business, as in InferenceX.
type MultiNodeJob struct {
	Point *recipes.MultiNodePoint
	// Dir is the directory the submission runs in (see above).
	Dir string
	// LogsDir is BENCHMARK_LOGS_DIR (slurm_job-<id>.out/.err go there);
	// User the Slurm account the AMD launcher passes (its $USER); Date
	// the srtctl tag's date (date +%Y%m%d; default today).
	LogsDir, User, Date string
	// Poll is the longest squeue interval (default 30 s; the first polls
	// come sooner).
	Poll time.Duration
	// Exec runs the commands (its Stdout, Stderr and Progress; its Dir is
	// set to Dir).
	Exec Exec
}

// Submit is the submission command with the run-time values filled in:
// ${BENCHMARK_LOGS_DIR}, ${USER}, ${DATE}. srtctl's output is read here
// instead of through the launcher's `grep -oP 'Job \K[0-9]+'`.
func (j *MultiNodeJob) Submit() (recipes.HostCommand, error) {
	if j.Point == nil || j.Point.Submit == nil {
		return recipes.HostCommand{}, errors.New("the multi-node point has no submission command")
	}
	date := j.Date
	if date == "" {
		date = time.Now().Format("20060102")
	}
	vars := map[string]string{"${BENCHMARK_LOGS_DIR}": j.LogsDir, "${USER}": j.User, "${DATE}": date}
	bind := func(s string) string {
		for k, v := range vars {
			s = strings.ReplaceAll(s, k, v)
		}
		return s
	}
	c := recipes.HostCommand{Role: j.Point.Submit.Role, Env: map[string]string{}}
	for _, a := range j.Point.Submit.Argv {
		c.Argv = append(c.Argv, bind(a))
	}
	for k, v := range j.Point.Submit.Env {
		c.Env[k] = bind(v)
	}
	var errs []error
	for need, have := range map[string]string{"${BENCHMARK_LOGS_DIR}": j.LogsDir, "${USER}": j.User} {
		if have == "" && submitUses(j.Point.Submit, need) {
			errs = append(errs, fmt.Errorf("the submission needs %s and none was given", need))
		}
	}
	errs = append(errs, j.checkDir(c))
	for _, a := range c.Argv {
		if strings.Contains(a, "${") {
			errs = append(errs, fmt.Errorf("submit argument %q has an unfilled placeholder", a))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		if strings.Contains(c.Env[k], "${") {
			errs = append(errs, fmt.Errorf("submit variable %s=%q has an unfilled placeholder", k, c.Env[k]))
		}
	}
	return c, errors.Join(errs...)
}

// checkDir checks, before anything is submitted, that the submission's
// directory exists and, for sbatch, holds the job script it submits
// (relative to the InferenceX checkout): sbatch of a missing script, or in
// a missing directory (exec's chdir failure reads as "fork/exec
// /usr/bin/sbatch: no such file or directory"), would be a misleading
// failure, or a submitted job that cannot start.
func (j *MultiNodeJob) checkDir(c recipes.HostCommand) error {
	dir := cmp.Or(j.Dir, ".")
	what := "the prepared srt-slurm checkout srtctl apply runs in"
	if j.Point.Submitter == "sbatch" {
		what = "the root of the InferenceX checkout whose job script sbatch submits"
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("--submit-dir %s: not a directory; give %s", dir, what)
	}
	if j.Point.Submitter != "sbatch" || len(c.Argv) == 0 {
		return nil
	}
	script := c.Argv[len(c.Argv)-1]
	path := script
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, script)
	}
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("--submit-dir %s has no %s; give %s", dir, script, what)
	}
	return nil
}

// submitUses reports whether a submission's argv or environment names
// the placeholder.
func submitUses(c *recipes.HostCommand, placeholder string) bool {
	if strings.Contains(strings.Join(c.Argv, " "), placeholder) {
		return true
	}
	for _, v := range c.Env {
		if strings.Contains(v, placeholder) {
			return true
		}
	}
	return false
}

// maxSqueueFailures is how many squeue failures in a row end the wait.
const maxSqueueFailures = 5

// srtctlJob matches srtctl apply's "Job N" line.
var srtctlJob = regexp.MustCompile(`Job ([0-9]+)`)

// jobIDOf reads the job id from a submission's output: sbatch --parsable
// prints "ID" or "ID;CLUSTER", srtctl apply a line with "Job ID".
func jobIDOf(submitter string, out string) (string, error) {
	if submitter == "srtctl" {
		if m := srtctlJob.FindStringSubmatch(out); m != nil {
			return m[1], nil
		}
		return "", fmt.Errorf("srtctl apply printed no \"Job N\" line: %q", tail(out))
	}
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		id, _, _ := strings.Cut(strings.TrimSpace(line), ";")
		if jobIDPattern.MatchString(id) {
			return id, nil
		}
	}
	return "", fmt.Errorf("sbatch --parsable printed no job id: %q", tail(out))
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 300 {
		return "..." + s[len(s)-300:]
	}
	return s
}

// Run submits the job and waits for it to leave the queue; it returns the
// job id (also when waiting failed). When ctx ends while the job is
// queued or running, the job is cancelled (scancel ID) before Run returns.
func (j *MultiNodeJob) Run(ctx context.Context) (string, error) {
	c, err := j.Submit()
	if err != nil {
		return "", err
	}
	e := j.Exec
	e.Dir = j.Dir
	if e.Stdout == nil {
		e.Stdout = io.Discard
	}
	if e.Stderr == nil {
		e.Stderr = io.Discard
	}
	var out bytes.Buffer
	c.StdoutTo = nil
	if err := e.command(ctx, c, &out); err != nil {
		return "", fmt.Errorf("%s: %w", Oneline(c.Argv), err)
	}
	id, err := jobIDOf(j.Point.Submitter, out.String())
	if err != nil {
		return "", err
	}
	if e.Progress != nil {
		e.Progress(fmt.Sprintf("job %s submitted (%d node(s)); waiting for it to leave the queue", id, j.Point.Nodes))
	}
	poll := j.Poll
	if poll <= 0 {
		poll = 30 * time.Second
	}
	// Poll every second at first, then less often up to Poll: a job that
	// fails at once is seen at once, a long one costs few squeue calls.
	wait := min(time.Second, poll)
	quiet := e // squeue every Poll: its output is read, not shown
	quiet.Progress, quiet.Stdout, quiet.Stderr = nil, io.Discard, io.Discard
	failures := 0
	for {
		var q bytes.Buffer
		qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		qerr := quiet.command(qctx, recipes.HostCommand{Role: "wait", Argv: []string{"squeue", "-h", "-j", id, "-o", "%T"}}, &q)
		cancel()
		switch state := strings.TrimSpace(q.String()); {
		case qerr == nil && state == "":
			return id, nil
		case qerr != nil:
			// squeue forgets a finished job after MinJobAge and then fails
			// with "Invalid job id specified"; anything else, repeated, is
			// an error (the job is left as it is).
			if strings.Contains(state, "Invalid job id") {
				return id, nil
			}
			if failures++; failures >= maxSqueueFailures {
				return id, fmt.Errorf("squeue -j %s failed %d times (last: %v); job %s is left as it is", id, failures, qerr, id)
			}
		default:
			failures = 0
		}
		select {
		case <-ctx.Done():
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			cerr := e.command(cctx, recipes.HostCommand{Role: "release", Argv: []string{"scancel", id}}, nil)
			return id, errors.Join(ctx.Err(), cerr)
		case <-time.After(wait):
		}
		wait = min(2*wait, poll)
	}
}
