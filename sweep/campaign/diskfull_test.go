package campaign_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/campaign"
)

// TestFullDiskStopsTheSweep: a disk filled by a point's artifacts failed
// every later point in ~4 s and a retry round failed them all again,
// each after a server start on the GPUs. A point that fails for want of
// space on the sweep directory's disk stops the sweep: no later point,
// no retry; the error, the summary and the journal say the disk is full,
// where, and what to do.
func TestFullDiskStopsTheSweep(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8}, 4, 8, 16, 32))
	full := s.sched.Points[1]
	s.b.faults[full.ID] = "disk-full-dir"
	sum, err := s.run(t.Context())

	de, ok := errors.AsType[*campaign.DiskFullError](err)
	require.True(t, ok, "%v", err)
	disk := "the disk holding " + s.dir + " is full (4.1 kB free)"
	assert.Equal(t, disk, de.Disk)
	assert.EqualError(t, err, "the sweep stopped: "+disk+": point "+s.sched.Arms[0].Name+" c8 failed for want of space there, and so would every point and retry after it; free space on it (or move the sweep directory to a larger disk) and rerun the same command to resume")
	for i, want := range []int{1, 1, 0, 0} {
		assert.Equal(t, want, s.b.loadsOf(s.sched.Points[i].ID), "loads of c%d: no later point, no retry", s.sched.Points[i].Conc())
	}
	assert.Equal(t, []int{1, 1, 0, 2}, []int{sum.OK, sum.Failed, sum.Interrupted, sum.Pending}, "ok, failed, interrupted, not run")
	assert.Equal(t, err.Error(), sum.Stopped)
	txt, rerr := os.ReadFile(filepath.Join(s.dir, campaign.SummaryText))
	require.NoError(t, rerr)
	assert.Contains(t, string(txt), "\n"+err.Error()+"\n", "summary.txt says why the sweep stopped")

	ends := events(t, s.dir, campaign.EventPointEnd)
	require.Len(t, ends, 2)
	assert.Equal(t, disk, ends[1].DiskFull, "the point's end says the disk is full")
	assert.Len(t, events(t, s.dir, campaign.EventPointStart), 2)
	sweepEnd := events(t, s.dir, campaign.EventSweepEnd)
	require.Len(t, sweepEnd, 1)
	assert.Equal(t, err.Error(), sweepEnd[0].Error)
}

// TestFullShmStopsTheSweep: a point whose engine found /dev/shm (or its
// cache's disk) full named it in its error, and the sweep went on: every
// later point failed the same way, each after a server start. It stops
// the sweep as a full sweep directory does, naming that disk, with
// advice that fits it (a larger disk for the sweep directory does not
// help), and the point keeps its retries.
func TestFullShmStopsTheSweep(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8}, 4, 8, 16, 32))
	s.o.Retries = 0
	s.b.faults[s.sched.Points[1].ID] = "disk-full-shm"
	sum, err := s.run(t.Context())

	de, ok := errors.AsType[*campaign.DiskFullError](err)
	require.True(t, ok, "%v", err)
	disk := "the disk holding /dev/shm is full (0 B free)"
	assert.EqualError(t, err, "the sweep stopped: "+disk+": point "+s.sched.Arms[0].Name+" c8 failed for want of space there, and so would every point and retry after it; free space on it and rerun the same command to resume")
	assert.True(t, de.Elsewhere)
	for i, want := range []int{1, 1, 0, 0} {
		assert.Equal(t, want, s.b.loadsOf(s.sched.Points[i].ID), "loads of c%d: no later point, no retry", s.sched.Points[i].Conc())
	}
	assert.Equal(t, []int{1, 1, 0, 2}, []int{sum.OK, sum.Failed, sum.Interrupted, sum.Pending}, "ok, failed, interrupted, not run")
	ends := events(t, s.dir, campaign.EventPointEnd)
	require.Len(t, ends, 2)
	assert.Equal(t, disk, ends[1].DiskFull)
	assert.True(t, ends[1].DiskElsewhere, "the journal says the disk is not the sweep directory's")
	assert.True(t, sum.Points[1].DiskFull)
	txt, rerr := os.ReadFile(filepath.Join(s.dir, campaign.SummaryText))
	require.NoError(t, rerr)
	assert.Contains(t, string(txt), " c8, 0 attempts (the full disk's not counted: a resume runs it again): ", "summary.txt says why the attempt does not count")

	sum, err = s.run(t.Context()) // space freed: the fault is spent
	require.NoError(t, err, "the point kept its retries")
	assert.Equal(t, 4, sum.OK)
}

// TestSummaryNotWrittenIsReported: a summary that could not be written
// (a full disk) was dropped when the sweep had failed already, and its
// paths were printed all the same. Run reports both errors, and
// Summary.Written lists no file.
func TestSummaryNotWrittenIsReported(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8}, 4, 8))
	s.b.faults[s.sched.Points[0].ID] = "disk-full-dir"
	// summary.txt cannot be written: a directory in its place, made once
	// the sweep began (a new sweep's directory holds nothing else).
	s.o.Begin = func(campaign.Left) { assert.NoError(t, os.Mkdir(filepath.Join(s.dir, campaign.SummaryText), 0o755)) }
	sum, err := s.run(t.Context())
	s.o.Begin = nil
	require.NotNil(t, sum)
	_, ok := errors.AsType[*campaign.DiskFullError](err)
	assert.True(t, ok, "the sweep's own error: %v", err)
	assert.ErrorContains(t, err, "\nsummary: ")
	assert.ErrorContains(t, err, filepath.Join(s.dir, campaign.SummaryText))
	assert.Empty(t, sum.Written)
	assert.NoFileExists(t, filepath.Join(s.dir, campaign.SummaryJSON))
	end := events(t, s.dir, campaign.EventSweepEnd)
	require.Len(t, end, 1)
	assert.Contains(t, end[0].Error, "\nsummary: ", "the journal says it too")

	// Written: both files, once they can be.
	require.NoError(t, os.Remove(filepath.Join(s.dir, campaign.SummaryText)))
	require.NoError(t, sum.Write(s.dir))
	assert.Equal(t, []string{filepath.Join(s.dir, campaign.SummaryText), filepath.Join(s.dir, campaign.SummaryJSON)}, sum.Written)
}

// armsInOrder runs each job's arm in turn with RunArm, showing obs each
// record after before has seen it.
type armsInOrder struct {
	b      campaign.Backend
	before func(campaign.Record)
}

func (e armsInOrder) Execute(ctx context.Context, jobs []campaign.Job, obs campaign.Observer) error {
	for _, j := range jobs {
		campaign.RunArm(ctx, j, []int{0}, e.b, func(r campaign.Record) { e.before(r); obs(r) }, campaign.ArmOptions{})
	}
	return nil
}

// fillJournal makes every later write of the open journal of the sweep
// directory dir fail with ENOSPC, as a full disk does: /dev/full takes
// its file descriptor's place.
func fillJournal(t *testing.T, dir string) {
	t.Helper()
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	for _, e := range entries {
		if target, _ := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); target == filepath.Join(dir, campaign.JournalFile) {
			fd, err := strconv.Atoi(e.Name())
			require.NoError(t, err)
			require.NoError(t, syscall.Dup3(int(full.Fd()), fd, syscall.O_CLOEXEC))
			return
		}
	}
	t.Fatal("the journal is not open")
}

// TestJournalFailureLeavesPointsNotRun: a point whose start the journal
// could not record was reported "interrupted in 0s: interrupted" and
// counted interrupted, when nobody interrupted it and it never ran. It
// is not run and says the sweep stopped on the journal's error.
func TestJournalFailureLeavesPointsNotRun(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8}, 4, 8, 16))
	var progress strings.Builder
	s.o.Progress = &progress
	s.o.Executor = armsInOrder{b: s.b, before: func(r campaign.Record) {
		if r.Event == campaign.EventPointStart && r.Conc == 8 {
			fillJournal(t, s.dir)
		}
	}}
	sum, err := s.run(t.Context())
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "the sweep stopped: journal: "), "%v", err)
	assert.ErrorIs(t, err, syscall.ENOSPC)
	assert.Equal(t, 0, s.b.loadsOf(s.sched.Points[1].ID), "the point whose start was not recorded does not run")
	assert.Equal(t, 0, s.b.loadsOf(s.sched.Points[2].ID))
	assert.Equal(t, []int{1, 0, 0, 2}, []int{sum.OK, sum.Failed, sum.Interrupted, sum.Pending}, "ok, failed, interrupted, not run")
	p := sum.Points[1]
	assert.Empty(t, p.Status, "not run")
	assert.True(t, strings.HasPrefix(p.Error, "not run: the sweep stopped: journal: "), p.Error)
	assert.True(t, strings.HasPrefix(err.Error(), strings.TrimPrefix(p.Error, "not run: ")), "its error is the sweep's: %q, %q", p.Error, err)
	assert.Equal(t, err.Error(), sum.Stopped)
	assert.Contains(t, progress.String(), "  "+p.ID+" not run: the sweep stopped: journal: ")
	assert.NotContains(t, progress.String(), "interrupted")
}

// TestFullDiskUsesNoRetry: a point that failed for want of space on the
// sweep directory's disk counted as a failed attempt, so a resume after
// space was freed gave it up with --retries 0 ("1 failed with no retry
// left"). A full disk is not the point's fault: the resume says so and
// runs the point again as the same attempt, its retries intact.
func TestFullDiskUsesNoRetry(t *testing.T) {
	for _, tc := range []struct {
		name     string
		adaptive bool
		full     int // the point that finds the disk full
		status   string
	}{
		{"grid", false, 1, "1 of 4 points complete, 1 stopped by a full disk (not counted against --retries): 3 to run"},
		// The search runs c4, then c16.
		{"adaptive", true, 2, "1 of 4 points complete, 1 stopped by a full disk (not counted against --retries): 3 to run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSweep(t, testSchedule(t, []int{8}, 4, 8, 16, 32))
			s.o.Retries = 0
			if tc.adaptive {
				s.adaptive()
			}
			full := s.sched.Points[tc.full]
			s.b.faults[full.ID] = "disk-full-dir"
			_, err := s.run(t.Context())
			_, ok := errors.AsType[*campaign.DiskFullError](err)
			require.True(t, ok, "%v", err)

			l, err := campaign.Preview(s.o)
			require.NoError(t, err)
			assert.Equal(t, tc.status, l.Status)
			cov, err := campaign.ReadCoverage(s.dir)
			require.NoError(t, err)
			assert.Contains(t, cov.Unfinished, campaign.Record{Point: full.ID, Arm: 1, Conc: full.Conc(), Status: campaign.StatusInterrupted},
				"the point the sweep stopped on is unfinished, not failed")

			sum, err := s.run(t.Context()) // space freed: the fault is spent
			require.NoError(t, err)
			assert.Equal(t, campaign.StatusOK, sum.Points[tc.full].Status)
			assert.Equal(t, 1, sum.Points[tc.full].Attempts, "the full disk's attempt does not count")
			assert.Equal(t, 2, s.b.loadsOf(full.ID))
			var attempts []int
			for _, r := range events(t, s.dir, campaign.EventPointStart) {
				if r.Point == full.ID {
					attempts = append(attempts, r.Attempt)
				}
			}
			assert.Equal(t, []int{1, 1}, attempts, "the resume's run is the point's first attempt again")
		})
	}
}
