package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sweep/recipes/models"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/recipes"
	"sweep/sweep/campaign"
)

// slurmSweep is a campaign whose arms run as jobs of a fake cluster.
type slurmSweep struct {
	dir     string
	sched   *campaign.Schedule
	cluster *fakeCluster
	node    *fakeNode
	ex      *Executor
	o       campaign.Options

	mu    sync.Mutex
	lines []string // the executor's progress
}

// newSlurmSweep is a sweep of arms arms of 8 GPUs, each with points at
// concs, on a one-node cluster of 8 GPUs (one job runs at a time).
func newSlurmSweep(t *testing.T, arms int, concs ...int) *slurmSweep {
	t.Helper()
	var pts []recipes.Point
	for a := range arms {
		for _, c := range concs {
			pts = append(pts, recipes.Point{
				Row:    matrix.Row{Kind: matrix.AgenticSingleNode, ConfigKey: fmt.Sprintf("k%d", a), Model: "m", Framework: "sglang", Parallelism: configs.Parallelism{TP: 8, EP: 1}, Conc: c},
				Recipe: "fake", Engine: recipes.Command{Argv: []string{"engine", "--tp", "8"}},
				ResultFilename: fmt.Sprintf("k%d_tp8_conc%d", a, c),
			})
		}
	}
	sched, err := campaign.BuildSchedule(pts, campaign.ScheduleOptions{Catalog: models.Builtin()})
	require.NoError(t, err)
	s := &slurmSweep{dir: t.TempDir(), sched: sched, node: newFakeNode()}
	s.cluster = newFakeCluster(8, s.node.run)
	t.Cleanup(s.cluster.shutdown)
	s.ex = &Executor{Client: NewClient(s.cluster), Dir: s.dir, Program: []string{"/opt/sweep/bin/sweep"},
		Settings: campaign.ArmSettings{Simulate: true}, Poll: 5 * time.Millisecond,
		TimeLimit: func(campaign.Job) time.Duration { return time.Hour },
		Progress: func(line string) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.lines = append(s.lines, line)
		}}
	s.o = campaign.Options{Dir: s.dir, Schedule: sched, Executor: s.ex, Retries: 1, Progress: &bytes.Buffer{},
		Identity: campaign.Identity{Command: "discover"}}
	return s
}

// run runs the sweep, bounded so that a hang fails instead of blocking.
func (s *slurmSweep) run(t *testing.T, ctx context.Context) (*campaign.Summary, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	sum, err := campaign.Run(ctx, s.o)
	require.NotErrorIs(t, err, context.DeadlineExceeded, "the sweep did not end")
	return sum, err
}

// killedAtStart leaves s.dir as a sweep killed just after it began
// leaves it: the journal holds its sweep_start record and nothing ran (a
// new sweep is refused in a directory holding anything but that, so the
// leftovers the tests plant come after it, as a killed sweep's do).
func (s *slurmSweep) killedAtStart(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	o := s.o
	o.Begin = func(campaign.Left) { cancel() }
	_, _ = campaign.Run(ctx, o)
	recs, err := campaign.ReadJournal(s.dir)
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	require.Equal(t, campaign.EventSweepStart, recs[0].Event)
}

func (s *slurmSweep) progress() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}

// ends are the journal's point_end records of point id, in order.
func (s *slurmSweep) ends(t *testing.T, id string) []campaign.Record {
	t.Helper()
	recs, err := campaign.ReadJournal(s.dir)
	require.NoError(t, err)
	var out []campaign.Record
	for _, r := range recs {
		if r.Event == campaign.EventPointEnd && r.Point == id {
			out = append(out, r)
		}
	}
	return out
}

// when runs f once started is closed (in its own goroutine).
func when(t *testing.T, started <-chan struct{}, f func()) {
	go func() {
		select {
		case <-started:
			f()
		case <-t.Context().Done():
		}
	}()
}

// eventually waits until cond holds (bounded).
func eventually(t *testing.T, what string, cond func() bool) {
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("timed out waiting until %s", what)
			return
		}
	}
}

// A job cancelled from outside (scancel by an operator) mid-arm: the
// points it finished are kept, the one it was running fails with the
// job's state and is retried per --retries, and the points it never
// reached run in a new job.
func TestExecutorJobCancelledFromOutside(t *testing.T) {
	for _, retries := range []int{0, 1} {
		t.Run(fmt.Sprintf("retries=%d", retries), func(t *testing.T) {
			s := newSlurmSweep(t, 1, 4, 8, 16)
			s.o.Retries = retries
			p := s.sched.Points
			started, _ := s.node.hold(p[1].ID)
			when(t, started, func() {
				running := s.cluster.ids("RUNNING")
				if assert.Len(t, running, 1) {
					s.cluster.end(running[0], "CANCELLED")
				}
			})
			sum, err := s.run(t, t.Context())

			first := s.ends(t, p[1].ID)[0]
			assert.Equal(t, campaign.StatusFailed, first.Status)
			assert.Contains(t, first.Error, "slurm job 1 ended CANCELLED")
			assert.Equal(t, 1, s.node.loadsOf(p[0].ID), "the finished point is kept")
			assert.Len(t, s.ends(t, p[0].ID), 1)
			assert.Equal(t, campaign.StatusOK, sum.Points[2].Status, "the point the job never reached runs in the next job")
			assert.Equal(t, []State{"CANCELLED", "COMPLETED"}, s.cluster.states())
			assert.Contains(t, s.progress(), "slurm job 1 ended CANCELLED")
			if retries == 0 {
				require.ErrorIs(t, err, campaign.ErrPointsFailed)
				assert.Equal(t, campaign.StatusFailed, sum.Points[1].Status)
				assert.Equal(t, 1, s.node.loadsOf(p[1].ID), "no retry")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, 3, sum.OK)
			assert.Equal(t, 2, s.node.loadsOf(p[1].ID), "retried once")
			assert.Equal(t, 2, sum.Points[1].Attempts)
		})
	}
}

// A job the cluster never starts (the node is down, or never has the
// GPUs) is cancelled after the start timeout and its points fail with
// the pending reason, retry included, instead of waiting forever.
func TestExecutorJobThatNeverStarts(t *testing.T) {
	s := newSlurmSweep(t, 1, 4, 8)
	s.cluster.hold = "ReqNodeNotAvail"
	s.ex.StartTimeout = 50 * time.Millisecond
	sum, err := s.run(t, t.Context())
	require.ErrorIs(t, err, campaign.ErrPointsFailed)
	assert.Equal(t, 2, sum.Failed)
	for _, ps := range sum.Points {
		assert.Regexp(t, `^slurm job [12] did not start within [0-9]+ms`, ps.Error)
		assert.Contains(t, ps.Error, "pending reason: ReqNodeNotAvail", ps.ID)
		assert.Equal(t, 2, ps.Attempts, "first submission and one retry")
	}
	assert.Equal(t, []State{"CANCELLED", "CANCELLED"}, s.cluster.states(), "nothing left queued")
	assert.Equal(t, []JobID{"1", "2"}, s.cluster.cancelled())
	assert.Zero(t, s.node.loadsOf(s.sched.Points[0].ID))
	assert.Contains(t, s.progress(), "did not start within")
}

// slurmctld stops answering while a job runs (restart, crash) and the
// job ends meanwhile; once it answers again the job's end is recovered:
// from sacct when squeue no longer lists the job, from squeue (its state
// save) on a cluster without accounting.
func TestExecutorRecoversTheJobAfterAnOutage(t *testing.T) {
	cases := []struct {
		name string
		// during the outage: the held point finishes ("") or the job
		// ends with this state
		end State
		// noAccounting: no sacct; squeue lists the ended job after the
		// restart
		noAccounting bool
	}{
		{name: "job completes during the outage"},
		{name: "node fails during the outage", end: "NODE_FAIL"},
		{name: "job completes during the outage, no accounting", noAccounting: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSlurmSweep(t, 1, 4, 8, 16)
			s.cluster.noAccounting = tc.noAccounting
			p := s.sched.Points
			started, release := s.node.hold(p[1].ID)
			when(t, started, func() {
				running := s.cluster.ids("RUNNING")
				s.cluster.setDown(true)
				eventually(t, "squeue fails", func() bool { return s.cluster.refusals() >= 3 })
				if tc.end == "" {
					release()
				} else {
					s.cluster.end(running[0], tc.end)
				}
				eventually(t, "the job ends", func() bool { return s.cluster.states()[0].Done() })
				s.cluster.setForget(!tc.noAccounting)
				s.cluster.setDown(false)
			})
			sum, err := s.run(t, t.Context())
			require.NoError(t, err)
			assert.Equal(t, 3, sum.OK)
			if !tc.noAccounting {
				assert.Positive(t, s.cluster.count("sacct"), "the job's end comes from sacct")
			}
			assert.Equal(t, 1, s.node.loadsOf(p[0].ID), "the finished point is kept")
			if tc.end == "" {
				assert.Equal(t, []State{"COMPLETED"}, s.cluster.states(), "one job ran the arm")
				assert.Equal(t, 1, s.node.loadsOf(p[1].ID))
				assert.Contains(t, s.progress(), "slurm job 1 COMPLETED")
				return
			}
			first := s.ends(t, p[1].ID)[0]
			assert.Equal(t, campaign.StatusFailed, first.Status)
			assert.Contains(t, first.Error, "slurm job 1 ended NODE_FAIL")
			assert.Equal(t, []State{"NODE_FAIL", "COMPLETED"}, s.cluster.states())
			assert.Equal(t, 2, s.node.loadsOf(p[1].ID), "retried")
		})
	}
}

// Slurm that never answers again ends the sweep once the outage bound
// passed: the open point and the ones not reached fail with the reason.
func TestExecutorGivesUpOnSlurmThatStaysDown(t *testing.T) {
	s := newSlurmSweep(t, 1, 4, 8, 16)
	s.o.Retries = 0
	s.ex.Outage = 50 * time.Millisecond
	p := s.sched.Points
	started, _ := s.node.hold(p[1].ID)
	when(t, started, func() { s.cluster.setDown(true) })
	sum, err := s.run(t, t.Context())
	require.ErrorIs(t, err, campaign.ErrPointsFailed)
	assert.Equal(t, campaign.StatusOK, sum.Points[0].Status)
	for _, ps := range sum.Points[1:] {
		assert.Equal(t, campaign.StatusFailed, ps.Status, ps.ID)
		assert.True(t, strings.HasPrefix(ps.Error, "slurm job 1: no answer from Slurm for 50ms: squeue --json: slurmctld did not answer: Failed while looking for jobs"), ps.Error)
	}
}

// Ctrl-C scancels every job the sweep submitted, running or pending; the
// open point is interrupted (not failed) and the sweep resumes later.
func TestExecutorCtrlCCancelsEveryJob(t *testing.T) {
	s := newSlurmSweep(t, 2, 4, 8) // two 8-GPU arms: one job runs, the other pends
	p := s.sched.Points
	// Either arm's job may run first; the first point of each runs until
	// its job is stopped (also a pending job that starts once the
	// running one is cancelled, before its own scancel).
	started0, release0 := s.node.hold(p[0].ID)
	started2, release2 := s.node.hold(p[2].ID)
	ctx, cancel := context.WithCancel(t.Context())
	either := make(chan struct{})
	go func() {
		select {
		case <-started0:
		case <-started2:
		case <-t.Context().Done():
		}
		close(either)
	}()
	when(t, either, func() {
		eventually(t, "both jobs are submitted", func() bool { return len(s.cluster.states()) == 2 })
		cancel()
	})
	_, err := s.run(t, ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.ElementsMatch(t, []JobID{"1", "2"}, s.cluster.cancelled())
	assert.Equal(t, []State{"CANCELLED", "CANCELLED"}, s.cluster.states())
	var interrupted []string
	for _, q := range p {
		for _, r := range s.ends(t, q.ID) {
			assert.Equal(t, campaign.StatusInterrupted, r.Status, q.ID)
			assert.Contains(t, r.Error, "interrupted", q.ID)
			interrupted = append(interrupted, q.ID)
		}
	}
	assert.NotEmpty(t, interrupted, "the running point is interrupted")

	release0()
	release2()
	sum, err := s.run(t, t.Context())
	require.NoError(t, err)
	assert.Equal(t, 4, sum.OK)
	for _, id := range interrupted {
		ends := s.ends(t, id)
		assert.Len(t, ends, 2, "%s is redone", id)
	}
	assert.Len(t, s.cluster.cancelled(), 2, "the resumed sweep cancels nothing")
}

// Jobs a killed sweep left queued or running (jobs.txt) are cancelled
// before the sweep submits its own.
func TestExecutorCancelsLeftoverJobs(t *testing.T) {
	s := newSlurmSweep(t, 1, 4)
	node := s.cluster.node
	s.cluster.node = func(ctx context.Context, argv []string) error {
		if argv[0] == "leftover" {
			<-ctx.Done()
			return ctx.Err()
		}
		return node(ctx, argv)
	}
	// As the killed sweep submitted it.
	id, err := s.ex.Client.Submit(t.Context(), JobSpec{Name: "sweep-arm01", Output: filepath.Join(s.dir, "slurm", "arm01-t1.out"),
		Script: "job.sh", Argv: []string{"leftover"}})
	require.NoError(t, err)
	s.killedAtStart(t)
	require.NoError(t, os.MkdirAll(filepath.Join(s.dir, "slurm"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(s.dir, "slurm", jobsFile), []byte(string(id)+"\n"), 0o644))

	sum, err := s.run(t, t.Context())
	require.NoError(t, err)
	assert.Equal(t, 1, sum.OK)
	assert.Equal(t, []State{"CANCELLED", "COMPLETED"}, s.cluster.states())
	assert.Contains(t, s.progress(), "cancelled slurm job 1 that an earlier run left RUNNING")
	jobs, err := os.ReadFile(filepath.Join(s.dir, "slurm", jobsFile))
	require.NoError(t, err)
	assert.Equal(t, "1\n2\n", string(jobs))
}

// A jobs.txt that names jobs this sweep did not submit (copied from
// another sweep, stale after the cluster reused its ids, edited) cancelled
// them: each leftover must be this directory's arm job (its name and
// output file) of this user before it is cancelled.
func TestExecutorLeavesJobsThatAreNotItsOwn(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec func(dir string) JobSpec
		uid  int // 0: this user
		why  string
	}{
		{"another user's", func(dir string) JobSpec {
			return JobSpec{Name: "sweep-arm01", Output: filepath.Join(dir, "slurm", "arm01-t1.out")}
		}, os.Getuid() + 1000, fmt.Sprintf("it is user%d's (uid %d)", os.Getuid()+1000, os.Getuid()+1000)},
		{"another name", func(dir string) JobSpec {
			return JobSpec{Name: "train-llm", Output: filepath.Join(dir, "slurm", "arm01-t1.out")}
		}, 0, `named "train-llm", not "sweep-arm01"`},
		{"another sweep's", func(string) JobSpec {
			return JobSpec{Name: "sweep-arm01", Output: "/elsewhere/sweep/slurm/arm01-t1.out"}
		}, 0, "its output /elsewhere/sweep/slurm/arm01-t1.out is not an arm job's file in "},
		{"no output", func(string) JobSpec { return JobSpec{Name: "sweep-arm01"} }, 0, "its output  is not an arm job's file in "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSlurmSweep(t, 1, 4)
			node := s.cluster.node
			s.cluster.node = func(ctx context.Context, argv []string) error {
				if argv[0] == "other" {
					<-ctx.Done()
					return ctx.Err()
				}
				return node(ctx, argv)
			}
			s.cluster.gpus = 16 // room for the other job and the arm
			spec := tc.spec(s.dir)
			spec.Script, spec.Argv = "job.sh", []string{"other"}
			id, err := s.ex.Client.Submit(t.Context(), spec)
			require.NoError(t, err)
			if tc.uid != 0 {
				s.cluster.setUser(id, tc.uid)
			}
			s.killedAtStart(t)
			require.NoError(t, os.MkdirAll(filepath.Join(s.dir, "slurm"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(s.dir, "slurm", jobsFile), []byte(string(id)+"\n"), 0o644))

			sum, err := s.run(t, t.Context())
			require.NoError(t, err)
			assert.Equal(t, 1, sum.OK)
			assert.NotContains(t, s.cluster.cancelled(), id, "the other job was cancelled")
			assert.Equal(t, []State{"RUNNING", "COMPLETED"}, s.cluster.states())
			assert.Contains(t, s.progress(), "not cancelling slurm job 1 listed in "+filepath.Join(s.dir, "slurm", jobsFile)+": "+tc.why)
		})
	}
}

// TestNextStemErrors: a job file name that cannot be looked up spun
// nextStem forever; it is an error naming the path.
func TestNextStemErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "slurm")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	done := make(chan error, 1)
	go func() {
		_, err := nextStem(file, 1)
		done <- err
	}()
	select {
	case err := <-done:
		require.ErrorIs(t, err, syscall.ENOTDIR)
		assert.ErrorContains(t, err, filepath.Join(file, "arm01-t1.json"))
	case <-time.After(10 * time.Second):
		t.Fatal("nextStem spins")
	}
	stem, err := nextStem(dir, 2)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "arm02-t1"), stem)
}

// TestExecutorWritesNoLinkTarget: slurm/job.sh and slurm/jobs.txt as
// symbolic links (a received directory) made the executor overwrite or
// append to the files they point to.
func TestExecutorWritesNoLinkTarget(t *testing.T) {
	s := newSlurmSweep(t, 1, 4)
	victims := t.TempDir()
	s.killedAtStart(t)
	require.NoError(t, os.MkdirAll(filepath.Join(s.dir, "slurm"), 0o755))
	for _, name := range []string{"job.sh", jobsFile} {
		victim := filepath.Join(victims, name)
		require.NoError(t, os.WriteFile(victim, []byte("precious"), 0o644))
		require.NoError(t, os.Symlink(victim, filepath.Join(s.dir, "slurm", name)))
	}
	_, err := s.run(t, t.Context())
	require.NoError(t, err)
	for _, name := range []string{"job.sh", jobsFile} {
		data, err := os.ReadFile(filepath.Join(victims, name))
		require.NoError(t, err)
		assert.Equal(t, "precious", string(data), "%s's target was written", name)
	}
	assert.Contains(t, s.progress(), filepath.Join(s.dir, "slurm", jobsFile)+" is a symbolic link")
}

// A launched arm's job runs ArmProgram's argv, and its job file carries the
// launcher's per-job variables for run-arm to set on the node.
func TestExecutorArmProgramEnv(t *testing.T) {
	s := newSlurmSweep(t, 1, 4)
	var argv []string
	node := s.cluster.node
	s.cluster.node = func(ctx context.Context, a []string) error {
		argv = a
		return node(ctx, a)
	}
	s.ex.ArmProgram = func(context.Context, *campaign.Arm) (campaign.ArmCommand, error) {
		return campaign.ArmCommand{Argv: []string{"srun", "--container-image=/sq/x.sqsh", "/opt/sweep/sweep"},
			Env: map[string]string{"XDG_CACHE_HOME": "/tmp/xdg-cache-" + campaign.SlurmJobID}}, nil
	}
	sum, err := s.run(t, t.Context())
	require.NoError(t, err)
	assert.Equal(t, 1, sum.OK)
	require.GreaterOrEqual(t, len(argv), 3)
	assert.Equal(t, []string{"srun", "--container-image=/sq/x.sqsh", "/opt/sweep/sweep", "run-arm"}, argv[:4])
	aj, err := campaign.ReadArmJob(argv[5])
	require.NoError(t, err)
	env, err := aj.JobEnv("8123")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"XDG_CACHE_HOME": "/tmp/xdg-cache-8123"}, env)
	_, err = aj.JobEnv("")
	assert.ErrorContains(t, err, "XDG_CACHE_HOME=/tmp/xdg-cache-${SLURM_JOB_ID} needs the Slurm job id")
}

// An arm whose server's port comes from its job's id is submitted held,
// its job file written with its points on that port, then released: the
// node reads the port-planned points; an arm without such a port is
// submitted as it was. A port that cannot be planned fails the arm's
// points with why and cancels the held job.
func TestExecutorJobPort(t *testing.T) {
	s := newSlurmSweep(t, 2, 1, 4)
	var ran []*campaign.ArmJob
	var mu sync.Mutex
	node := s.cluster.node
	s.cluster.node = func(ctx context.Context, a []string) error {
		aj, err := campaign.ReadArmJob(a[len(a)-3])
		require.NoError(t, err)
		mu.Lock()
		ran = append(ran, aj)
		mu.Unlock()
		return node(ctx, a)
	}
	s.ex.JobPort = func(a *campaign.Arm) func(JobID) (int, error) {
		if a.Index != 0 {
			return nil
		}
		return func(id JobID) (int, error) {
			n, err := strconv.Atoi(string(id))
			return 40000 + n, err
		}
	}
	s.ex.OnPort = func(a *campaign.Arm, points []*campaign.Point, port int) ([]*campaign.Point, error) {
		var out []*campaign.Point
		for _, p := range points {
			c := *p
			c.Plan.Port = port
			out = append(out, &c)
		}
		return out, nil
	}
	sum, err := s.run(t, t.Context())
	require.NoError(t, err)
	assert.Equal(t, 4, sum.OK)
	// The arms are submitted at once: either may be job 1.
	m := regexp.MustCompile(`arm 1: slurm job (\d+) submitted \(8 GPUs, 2 points; its server on port (\d+), from the job id; log `).FindStringSubmatch(s.progress())
	require.NotNil(t, m, s.progress())
	id, _ := strconv.Atoi(m[1])
	assert.Equal(t, strconv.Itoa(40000+id), m[2])
	require.Len(t, ran, 2)
	for _, aj := range ran {
		want := 0 // arm 2: as planned
		if aj.Arm.Index == 0 {
			want = 40000 + id
		}
		for _, p := range aj.Points {
			assert.Equal(t, want, p.Plan.Port, "arm %d", aj.Arm.Index+1)
		}
	}
	for _, p := range s.sched.Points {
		assert.Zero(t, p.Plan.Port, "the schedule's points keep their plans")
	}
	assert.Equal(t, 1, s.cluster.count("scontrol"), "one release")

	// The port cannot be planned: the held job is cancelled, never run.
	s = newSlurmSweep(t, 1, 1)
	s.ex.JobPort = func(*campaign.Arm) func(JobID) (int, error) {
		return func(JobID) (int, error) { return 40001, nil }
	}
	s.ex.OnPort = func(*campaign.Arm, []*campaign.Point, int) ([]*campaign.Point, error) {
		return nil, fmt.Errorf("no plan on that port")
	}
	s.o.Retries = 0
	sum, err = s.run(t, t.Context())
	require.Error(t, err)
	assert.Equal(t, 1, sum.Failed)
	ends := s.ends(t, s.sched.Points[0].ID)
	require.Len(t, ends, 1)
	assert.Equal(t, "slurm job 1: no plan on that port", ends[0].Error)
	assert.Equal(t, []State{"CANCELLED"}, s.cluster.states())
	assert.Equal(t, 0, s.node.loadsOf(s.sched.Points[0].ID))
}

// An arm whose image is imported in its job runs the import on its node
// before its command (ImportScript): an import that succeeds leaves no
// log and the points run; one that fails ends the job before its command,
// and the arm's points fail with the import's last line.
func TestExecutorImportInJob(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script string // the import's shell text
		ok     bool
		want   string // the points' error
	}{
		{name: "imported", script: "echo 'Squash file already exists and is valid, skipping import'", ok: true},
		{name: "import fails", script: "echo 'Pulling image'; printf '[INFO] 12%%\\r[ERROR] URL https://registry-1.docker.io/v2/x/manifests/1 returned error code: 404 Not Found\\n' >&2; exit 1",
			want: "slurm job 1: the image import on its node failed: [ERROR] URL https://registry-1.docker.io/v2/x/manifests/1 returned error code: 404 Not Found"},
		{name: "import fails silently", script: "exit 3", want: "slurm job 1: the image import on its node failed: no output (exit 1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSlurmSweep(t, 1, 4)
			s.o.Retries = 0
			var ran []string
			node := s.cluster.node
			s.cluster.node = func(ctx context.Context, a []string) error {
				ran = a
				return node(ctx, a)
			}
			s.ex.ArmProgram = func(context.Context, *campaign.Arm) (campaign.ArmCommand, error) {
				return campaign.ArmCommand{Argv: []string{"srun", "--container-image=/sq/x.sqsh", "/opt/sweep/sweep"},
					Import: []string{"srun", "bash", "-c", tc.script}}, nil
			}
			// The import's srun is bash here, as it is on the node inside the job.
			bin := t.TempDir()
			require.NoError(t, os.Symlink("/usr/bin/env", filepath.Join(bin, "srun")))
			t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
			sum, err := s.run(t, t.Context())
			log := filepath.Join(s.dir, "slurm", "arm01-t1.import.log")
			if tc.ok {
				require.NoError(t, err)
				assert.Equal(t, 1, sum.OK)
				assert.Equal(t, []string{"srun", "--container-image=/sq/x.sqsh", "/opt/sweep/sweep", "run-arm"}, ran[:4], "the command after the import")
				assert.NoFileExists(t, log, "a successful import's log is removed")
				return
			}
			require.Error(t, err)
			assert.Equal(t, 1, sum.Failed)
			assert.Nil(t, ran, "the job's command never ran")
			ends := s.ends(t, s.sched.Points[0].ID)
			require.Len(t, ends, 1)
			assert.Equal(t, tc.want, ends[0].Error)
			assert.FileExists(t, log)
		})
	}
}

// pyxisRefusal is what a job's output gets from a container step Pyxis
// refuses (Slurm 22.05, Pyxis 0.20: a --container-mounts source missing
// on the node), after srun's report of the step's exit code.
const pyxisRefusal = `slurmstepd-vm: error: pyxis: --container-mounts: source path does not exist: /data/hub
srun: error: vm: task 0: Exited with exit code 1
slurmstepd-vm: error: pyxis: couldn't create enroot start configuration script
slurmstepd-vm: error: pyxis: printing enroot log file:
slurmstepd-vm: error: pyxis:     [INFO] Extracting squashfs filesystem...
slurmstepd-vm: error: pyxis:     ` + `
slurmstepd-vm: error: pyxis:     created 0 hardlinks
slurmstepd-vm: error: pyxis: container was not started successfully by another task
slurmstepd-vm: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1
slurmstepd-vm: error: Failed to invoke spank plugin stack`

// A job that ended before its first point (Pyxis refused its container
// step, the step failed silently, its time limit) left its points
// pending: they were resubmitted in new jobs whatever --retries said, and
// ended "not run" with no reason, the sweep without an error. Its points
// fail with the job's end, the line of its log that says why and the
// log, and are retried per --retries.
func TestExecutorJobEndsBeforeItsFirstPoint(t *testing.T) {
	for _, tc := range []struct {
		name    string
		step    string // what the container step writes before it fails; "": it runs until the job ends
		end     State  // with step "": how the job ends from outside
		retries int
		want    string // the points' error; {LOG} stands for the job's log, {N} for its id
	}{
		{name: "Pyxis refuses the container step", step: pyxisRefusal,
			want: "slurm job {N} ended FAILED (NonZeroExitCode) (exit 1) before its first point: slurmstepd-vm: error: pyxis: --container-mounts: source path does not exist: /data/hub (log {LOG})"},
		{name: "retried once", step: pyxisRefusal, retries: 1,
			want: "slurm job {N} ended FAILED (NonZeroExitCode) (exit 1) before its first point: slurmstepd-vm: error: pyxis: --container-mounts: source path does not exist: /data/hub (log {LOG})"},
		{name: "a silent step: not the import's line before it", step: "srun: error: vm: task 0: Exited with exit code 1",
			want: "slurm job {N} ended FAILED (NonZeroExitCode) (exit 1) before its first point (log {LOG})"},
		{name: "its time limit", end: "TIMEOUT",
			want: "slurm job {N} ended TIMEOUT (exit 0) before its first point: slurmstepd-vm: error: *** JOB {N} ON vm CANCELLED AT 2026-12-07T18:35:19 DUE TO TIME LIMIT *** (log {LOG})"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSlurmSweep(t, 1, 4, 8)
			s.o.Retries = tc.retries
			stepped := make(chan struct{}, 10)
			s.cluster.node = func(ctx context.Context, a []string) error {
				stepped <- struct{}{}
				if tc.step == "" {
					<-ctx.Done()
					return ctx.Err()
				}
				return errors.New(tc.step)
			}
			if tc.end != "" {
				go func() {
					for {
						select {
						case <-stepped:
						case <-t.Context().Done():
							return
						}
						if running := s.cluster.ids("RUNNING"); assert.Len(t, running, 1) {
							// What slurmstepd and srun write then.
							log := filepath.Join(s.dir, "slurm", "arm01-t"+string(running[0])+".out")
							assert.NoError(t, appendFile(log, "srun: Job step aborted: Waiting up to 7 seconds for job step to finish.\n"+
								"slurmstepd-vm: error: *** JOB "+string(running[0])+" ON vm CANCELLED AT 2026-12-07T18:35:19 DUE TO TIME LIMIT ***\n"+
								"srun: error: vm: task 0: Terminated\n"))
							s.cluster.end(running[0], tc.end)
						}
					}
				}()
			}
			s.ex.ArmProgram = func(context.Context, *campaign.Arm) (campaign.ArmCommand, error) {
				return campaign.ArmCommand{Argv: []string{"srun", "--container-image=/sq/x.sqsh", "/opt/sweep/sweep"},
					Import: []string{"srun", "bash", "-c", "echo 'Squash file already exists and is valid, skipping import'"}}, nil
			}
			bin := t.TempDir()
			require.NoError(t, os.Symlink("/usr/bin/env", filepath.Join(bin, "srun")))
			t.Setenv("PATH", bin+":"+os.Getenv("PATH"))

			sum, err := s.run(t, t.Context())
			require.ErrorIs(t, err, campaign.ErrPointsFailed)
			assert.Equal(t, 2, sum.Failed)
			assert.Zero(t, sum.Pending, "no point left not run")
			jobs := tc.retries + 1
			assert.Len(t, s.cluster.states(), jobs, "one job, and one per retry")
			for _, p := range s.sched.Points {
				ends := s.ends(t, p.ID)
				require.Len(t, ends, jobs, p.ID)
				for i, e := range ends {
					n := strconv.Itoa(i + 1)
					log := filepath.Join(s.dir, "slurm", "arm01-t"+n+".out")
					want := strings.NewReplacer("{N}", n, "{LOG}", log).Replace(tc.want)
					assert.Equal(t, campaign.StatusFailed, e.Status, p.ID)
					assert.Equal(t, want, e.Error, p.ID)
				}
				assert.Zero(t, s.node.loadsOf(p.ID))
			}
			for _, ps := range sum.Points {
				assert.True(t, ps.StartFailed, "%s: no server started", ps.ID)
			}
			assert.Contains(t, s.progress(), "arm 1: slurm job 1 ended ")
			assert.NotContains(t, s.o.Progress.(*bytes.Buffer).String(), "server started")

			// The journal holds the failures: a resume with the same
			// --retries submits no job and fails as the sweep did.
			progress := &bytes.Buffer{}
			s.o.Progress = progress
			sum, err = s.run(t, t.Context())
			require.ErrorIs(t, err, campaign.ErrPointsFailed)
			assert.Equal(t, 2, sum.Failed)
			assert.Len(t, s.cluster.states(), jobs, "no job submitted on resume")
			assert.Contains(t, progress.String(), fmt.Sprintf("2 failed with no retry left (--retries %d)", tc.retries))
		})
	}
}

// appendFile appends text to the file at path.
func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
