package slurm

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fake answers Slurm commands from a script of replies, recording argv.
type fake struct {
	mu    sync.Mutex
	calls [][]string
	reply func(argv []string) ([]byte, error)
}

func (f *fake) Run(_ context.Context, argv []string) ([]byte, error) {
	f.mu.Lock()
	f.calls = append(f.calls, argv)
	f.mu.Unlock()
	return f.reply(argv)
}

func (f *fake) commands() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, c[0])
	}
	return out
}

func TestSbatchArgv(t *testing.T) {
	cases := []struct {
		name string
		spec JobSpec
		want []string
		err  string
	}{
		{name: "full", spec: JobSpec{Name: "sweep-arm-1", GPUs: 8, TimeLimit: 90*time.Minute + time.Second, Partition: "compute",
			Output: "/d/slurm-%j.out", Dir: "/d", Options: []string{"--exclusive", "--cpus-per-task=256"}, Script: "/d/job.sh",
			Argv: []string{"sweep", "campaign", "arm", "--dir", "/d", "--arm", "a b"}},
			want: []string{"sbatch", "--parsable", "--job-name=sweep-arm-1", "--gres=gpu:8", "--time=91", "--partition=compute",
				"--output=/d/slurm-%j.out", "--chdir=/d", "--exclusive", "--cpus-per-task=256", "/d/job.sh",
				"sweep", "campaign", "arm", "--dir", "/d", "--arm", "a b"}},
		{name: "minimal", spec: JobSpec{Script: "j.sh", Argv: []string{"true"}}, want: []string{"sbatch", "--parsable", "j.sh", "true"}},
		{name: "held", spec: JobSpec{Script: "j.sh", Argv: []string{"true"}, Hold: true}, want: []string{"sbatch", "--parsable", "--hold", "j.sh", "true"}},
		{name: "no command", spec: JobSpec{Script: "j.sh"}, err: "a script and a command are required"},
		{name: "option without dash", spec: JobSpec{Script: "j.sh", Argv: []string{"true"}, Options: []string{"exclusive"}}, err: "must start with '-'"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SbatchArgv(tc.spec)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestSubmitParsesParsable(t *testing.T) {
	for _, tc := range []struct{ out, id, err string }{
		{out: "42\n", id: "42"},
		{out: "42;cluster\n", id: "42"},
		{out: "Submitted batch job 42\n", err: "want a job id"},
	} {
		f := &fake{reply: func([]string) ([]byte, error) { return []byte(tc.out), nil }}
		id, err := NewClient(f).Submit(t.Context(), JobSpec{Script: "j.sh", Argv: []string{"true"}})
		if tc.err != "" {
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, JobID(tc.id), id)
	}
}

// The fixtures were recorded from Slurm 22.05.8's squeue --json on the
// one-node test cluster (scripts/slurm-cluster.sh).
func TestStatusesFromRecordedSqueue(t *testing.T) {
	running, err := os.ReadFile("../../../testdata/slurm/squeue-22.05.json")
	require.NoError(t, err)
	ended, err := os.ReadFile("../../../testdata/slurm/squeue-22.05-ended.json")
	require.NoError(t, err)
	for _, tc := range []struct {
		page   []byte
		id     JobID
		state  State
		reason string
		code   int
		signal int
		start  bool
	}{
		{page: running, id: "3", state: "RUNNING", reason: "None", start: true},
		{page: running, id: "4", state: "PENDING", reason: "Resources"},
		{page: running, id: "1", state: "COMPLETED", start: true, reason: "None"},
		{page: ended, id: "5", state: "FAILED", reason: "NonZeroExitCode", code: 3, start: true},
		{page: ended, id: "3", state: "CANCELLED", reason: "None", signal: 15, start: true},
	} {
		f := &fake{reply: func([]string) ([]byte, error) { return tc.page, nil }}
		st, err := NewClient(f).Status(t.Context(), tc.id)
		require.NoError(t, err)
		assert.Equal(t, tc.state, st.State, "job %s", tc.id)
		assert.Equal(t, tc.reason, st.Reason, "job %s", tc.id)
		assert.Equal(t, tc.code, st.ExitCode, "job %s", tc.id)
		assert.Equal(t, tc.signal, st.Signal, "job %s", tc.id)
		assert.Equal(t, tc.start, !st.Start.IsZero(), "job %s start %v", tc.id, st.Start)
		assert.Equal(t, tc.state != "RUNNING" && tc.state != "PENDING", st.State.Done())
	}
	// Whose job it is, by what name and output file: what a resumed sweep
	// checks before cancelling a leftover.
	f := &fake{reply: func([]string) ([]byte, error) { return running, nil }}
	st, err := NewClient(f).Status(t.Context(), "1")
	require.NoError(t, err)
	assert.Equal(t, JobStatus{ID: "1", State: "COMPLETED", Reason: "None", Start: st.Start, End: st.End, Source: "squeue",
		Name: "j.sh", Output: "/tmp/j-%j.out", User: "root", UserID: 0}, st)
}

func TestStatusFallsBackToSacct(t *testing.T) {
	squeue := []byte(`{"jobs": [], "errors": []}`)
	sacct := []byte(`{"jobs": [{"job_id": 9, "state": {"current": ["COMPLETED"], "reason": "None"},
		"exit_code": {"status": ["SUCCESS"], "return_code": {"set": true, "number": 0}},
		"time": {"start": {"set": true, "number": 1700000000}, "end": {"set": true, "number": 1700000100}}}]}`)
	f := &fake{reply: func(argv []string) ([]byte, error) {
		if argv[0] == "squeue" {
			return squeue, nil
		}
		return sacct, nil
	}}
	st, err := NewClient(f).Status(t.Context(), "9")
	require.NoError(t, err)
	assert.Equal(t, State("COMPLETED"), st.State)
	assert.Equal(t, "sacct", st.Source)
	assert.Equal(t, int64(1700000000), st.Start.Unix())

	f.reply = func(argv []string) ([]byte, error) {
		if argv[0] == "squeue" {
			return squeue, nil
		}
		return nil, &CommandError{Argv: argv, Err: errors.New("exit status 1"), Stderr: "Slurm accounting storage is disabled\n"}
	}
	_, err = NewClient(f).Status(t.Context(), "9")
	assert.ErrorIs(t, err, ErrUnknownJob)
}

func squeuePage(state, reason string) []byte {
	return []byte(`{"jobs": [{"job_id": 7, "job_state": "` + state + `", "state_reason": "` + reason + `", "exit_code": 0, "start_time": 1700000000, "end_time": 0}], "errors": []}`)
}

// squeue --json of Slurm 22.05 exits 0 when slurmctld does not answer
// (recorded): that is no answer, not an empty queue, and sacct is not
// asked.
func TestStatusOfAControllerThatDoesNotAnswer(t *testing.T) {
	down, err := os.ReadFile("../../../testdata/slurm/squeue-22.05-controller-down.json")
	require.NoError(t, err)
	f := &fake{reply: func([]string) ([]byte, error) { return down, nil }}
	_, err = NewClient(f).Status(t.Context(), "7")
	require.ErrorIs(t, err, ErrNoAnswer)
	assert.NotErrorIs(t, err, ErrUnknownJob)
	assert.Contains(t, err.Error(), "Failed while looking for jobs (slurm_load_jobs: Unspecified error)")
	assert.Equal(t, []string{"squeue"}, f.commands())
}

func TestWaitRidesOutAnOutage(t *testing.T) {
	down, err := os.ReadFile("../../../testdata/slurm/squeue-22.05-controller-down.json")
	require.NoError(t, err)
	// slurmctld restarts: two squeue calls without an answer, then the
	// job is found completed (its state recovered from the state save).
	for _, tc := range []struct {
		name  string
		reply func(argv []string) ([]byte, error)
	}{
		{name: "squeue fails", reply: func(argv []string) ([]byte, error) {
			return nil, &CommandError{Argv: argv, Err: errors.New("exit status 1"), Stderr: "slurm_load_jobs error: Unable to contact slurm controller"}
		}},
		{name: "squeue --json prints an error", reply: func([]string) ([]byte, error) { return down, nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			f := &fake{reply: func(argv []string) ([]byte, error) {
				n++
				switch {
				case n == 1:
					return squeuePage("RUNNING", "None"), nil
				case n <= 3:
					return tc.reply(argv)
				}
				return squeuePage("COMPLETED", "None"), nil
			}}
			var seen []State
			st, err := NewClient(f).Wait(t.Context(), "7", WaitOptions{Poll: time.Millisecond, Outage: time.Minute,
				OnChange: func(s JobStatus) { seen = append(seen, s.State) }})
			require.NoError(t, err)
			assert.Equal(t, State("COMPLETED"), st.State)
			assert.Equal(t, []State{"RUNNING", "COMPLETED"}, seen)
			assert.NotContains(t, f.commands(), "sacct")
		})
	}
}

func TestWaitGivesUpAfterOutage(t *testing.T) {
	f := &fake{reply: func(argv []string) ([]byte, error) {
		return nil, &CommandError{Argv: argv, Err: errors.New("exit status 1"), Stderr: "Unable to contact slurm controller"}
	}}
	_, err := NewClient(f).Wait(t.Context(), "7", WaitOptions{Poll: time.Millisecond, Outage: 20 * time.Millisecond})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no answer from Slurm")
}

func TestWaitCancelsAJobThatNeverStarts(t *testing.T) {
	f := &fake{reply: func(argv []string) ([]byte, error) {
		if argv[0] == "scancel" {
			return nil, nil
		}
		return squeuePage("PENDING", "Resources"), nil
	}}
	_, err := NewClient(f).Wait(t.Context(), "7", WaitOptions{Poll: time.Millisecond, StartTimeout: 20 * time.Millisecond})
	nse, ok := errors.AsType[*NotStartedError](err)
	require.True(t, ok, "got %v", err)
	assert.Equal(t, "Resources", nse.Reason)
	assert.Contains(t, f.commands(), "scancel")
	assert.True(t, strings.Contains(err.Error(), "did not start within"))
}

func TestWaitHonoursContext(t *testing.T) {
	f := &fake{reply: func([]string) ([]byte, error) { return squeuePage("RUNNING", "None"), nil }}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer cancel()
	_, err := NewClient(f).Wait(ctx, "7", WaitOptions{Poll: time.Millisecond})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}
