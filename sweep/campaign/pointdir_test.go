package campaign_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/proc"
	"sweep/sweep/campaign"
	"sweep/sweep/run"
)

// TestPointHoldsItsDirectory: a sweep's point directory did not hold the
// lock sweep run takes, so sweep run --force on it stopped the live
// measurement as an earlier run's leftovers. ClearPointDir takes the
// lock for the attempt: a claim is refused naming the holder and stops
// nothing; once the attempt released it, processes it left (a dead
// holder's) are stopped by the next claim. A directory sweep run holds
// is not cleared for the sweep's point either.
func TestPointHoldsItsDirectory(t *testing.T) {
	dir := t.TempDir()
	sched := testSchedule(t, []int{8}, 4, 8)
	p := sched.Points[0]
	pd := filepath.Join(dir, p.ID)
	release, err := campaign.ClearPointDir(dir, p)
	require.NoError(t, err)
	// The attempt's client, tagged as sweep/run tags its processes.
	tag := proc.NewTag("client")
	require.NoError(t, os.WriteFile(filepath.Join(pd, run.TagsFile), []byte(tag+"\n"), 0o644))
	client, err := proc.Start(t.Context(), proc.Spec{Name: "client", Tag: tag, Argv: []string{"sleep", "60"}})
	require.NoError(t, err)
	t.Cleanup(func() { client.Stop(time.Second) })

	_, left, err := run.ClaimOutDir(pd, p.ID, true)
	oe, ok := errors.AsType[*run.OutDirError](err)
	require.True(t, ok, "sweep run --force on a live point: %v", err)
	assert.Contains(t, oe.Msg, fmt.Sprintf("process %d is running a point", os.Getpid()))
	assert.Empty(t, left)
	assert.False(t, client.Exited(), "the live point's client was stopped")

	release()
	rel, left, err := run.ClaimOutDir(pd, p.ID, true)
	require.NoError(t, err)
	rel()
	assert.Equal(t, []int{client.PID()}, left, "a dead holder's leftovers are stopped")

	// The other way round: sweep run holds the directory.
	q := sched.Points[1]
	qd := filepath.Join(dir, q.ID)
	rel, _, err = run.ClaimOutDir(qd, q.ID, false)
	require.NoError(t, err)
	defer rel()
	require.NoError(t, os.WriteFile(filepath.Join(qd, "benchmark.log"), []byte("measuring"), 0o644))
	_, err = campaign.ClearPointDir(dir, q)
	assert.ErrorContains(t, err, fmt.Sprintf("point directory %s: process %d is running a point", qd, os.Getpid()))
	assert.FileExists(t, filepath.Join(qd, "benchmark.log"), "nothing of it is cleared")
}
