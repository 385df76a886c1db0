package campaign_test

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/proc"
	"sweep/sweep/campaign"
)

// startGroup starts a sleeping process in a process group of its own
// (as a server's process is) with env added; the returned channel is
// closed when it exits.
func startGroup(t *testing.T, env ...string) (*exec.Cmd, <-chan struct{}) {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(os.Environ(), env...)
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	return cmd, done
}

// appendRecord adds r to dir's journal as a killed sweep would have left it.
func appendRecord(t *testing.T, dir string, r campaign.Record) {
	t.Helper()
	j, _, err := campaign.OpenJournal(dir)
	require.NoError(t, err)
	require.NoError(t, j.Append(r))
	require.NoError(t, j.Close())
}

// TestLeftoverWithReusedPIDIsNotStopped: a server_ready record without its
// server_stop names a process group whose pid now belongs to an unrelated
// process (a reboot, or the directory resumed on another node). Resume
// stopped it; it must only stop processes carrying the server's tag.
func TestLeftoverWithReusedPIDIsNotStopped(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8}, 4))
	_, err := s.run(t.Context())
	require.NoError(t, err)
	other, done := startGroup(t)
	appendRecord(t, s.dir, campaign.Record{Event: campaign.EventServerReady, Arm: 1, PIDs: []int{other.Process.Pid}, Tags: []string{"engine-1-0123456789abcdef"}})
	appendRecord(t, s.dir, campaign.Record{Event: campaign.EventServerReady, Arm: 1, PIDs: []int{other.Process.Pid}}) // an older journal: no tags

	_, err = s.run(t.Context())
	require.NoError(t, err)
	select {
	case <-done:
		t.Fatalf("resume killed pid %d, which is not the sweep's server", other.Process.Pid)
	case <-time.After(200 * time.Millisecond):
	}
	assert.Empty(t, events(t, s.dir, campaign.EventLeftover))
}

// TestLeftoverServerIsStopped: the processes of a killed sweep's server,
// carrying the tag its server_ready record names, are stopped on resume.
func TestLeftoverServerIsStopped(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8}, 4))
	_, err := s.run(t.Context())
	require.NoError(t, err)
	tag := proc.NewTag("engine")
	ours, done := startGroup(t, proc.TagEnv+"="+tag)
	appendRecord(t, s.dir, campaign.Record{Event: campaign.EventServerReady, Arm: 1, PIDs: []int{ours.Process.Pid}, Tags: []string{tag}})

	_, err = s.run(t.Context())
	require.NoError(t, err)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the leftover server was not stopped")
	}
	left := events(t, s.dir, campaign.EventLeftover)
	require.Len(t, left, 1)
	assert.Equal(t, []int{ours.Process.Pid}, left[0].PIDs)
}
