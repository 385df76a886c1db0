package proc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The test binary plays the programs under test, selected by helperEnv.
const helperEnv = "PROCESS_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "exit3":
		fmt.Println("line one")
		fmt.Fprintln(os.Stderr, "line two on stderr")
		os.Exit(3)
	case "sleep":
		writePID()
		time.Sleep(time.Hour)
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		writePID()
		fmt.Println("ignoring SIGTERM")
		time.Sleep(time.Hour)
	case "escape":
		// Leaves the process group, ignores SIGTERM: only the tag finds it
		// once its parent is gone.
		_, _ = syscall.Setsid()
		signal.Ignore(syscall.SIGTERM)
		writePID()
		time.Sleep(time.Hour)
	case "tree":
		writePID()
		for _, mode := range []string{"sleep", "ignore-term", "escape"} {
			c := exec.Command(os.Args[0])
			c.Env = append(os.Environ(), helperEnv+"="+mode)
			if err := c.Start(); err != nil {
				panic(err)
			}
		}
		fmt.Println("tree started")
		time.Sleep(time.Hour)
	}
	os.Exit(0)
}

func writePID() {
	f, err := os.OpenFile(os.Getenv("PROCESS_TEST_PIDS"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		panic(err)
	}
	fmt.Fprintln(f, os.Getpid())
	_ = f.Close()
}

func helperSpec(t *testing.T, mode string) (Spec, string) {
	t.Helper()
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	return Spec{
		Name:    mode,
		Argv:    []string{os.Args[0], "-test.run=^$"},
		Env:     map[string]string{helperEnv: mode, "PROCESS_TEST_PIDS": pids},
		LogPath: filepath.Join(dir, "out.log"),
	}, pids
}

func readPIDs(t *testing.T, path string, want int) []int {
	t.Helper()
	var pids []int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pids = pids[:0]
		for _, f := range strings.Fields(string(b)) {
			n, err := strconv.Atoi(f)
			require.NoError(t, err)
			pids = append(pids, n)
		}
		return len(pids) >= want
	}, 10*time.Second, 10*time.Millisecond, "helpers did not report %d pids", want)
	return pids
}

func TestExitCodeAndLog(t *testing.T) {
	spec, _ := helperSpec(t, "exit3")
	var echoed []string // written by the drain goroutine, read after Wait
	spec.OnLine = func(line string) { echoed = append(echoed, line) }
	p, err := Start(t.Context(), spec)
	require.NoError(t, err)
	st, err := p.Wait(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 3, st.Exit)
	assert.False(t, st.Success())
	assert.False(t, st.Stopped)
	assert.Equal(t, "exit code 3", st.String())
	log, err := os.ReadFile(spec.LogPath)
	require.NoError(t, err)
	assert.Contains(t, string(log), "line one\n")
	assert.Contains(t, string(log), "line two on stderr\n")
	assert.ElementsMatch(t, []string{"line one", "line two on stderr"}, p.Tail())
	assert.ElementsMatch(t, []string{"line one", "line two on stderr"}, echoed)
	// Stop after a natural exit is harmless and keeps the status.
	assert.Equal(t, 3, p.Stop(time.Second).Exit)
}

// TestFirstEnded: of processes that have ended, FirstEnded names the one
// that ended first by Ended's readings, whatever order it is given them
// in; one still running has no reading and is passed over.
func TestFirstEnded(t *testing.T) {
	start := func(mode string) *Process {
		t.Helper()
		spec, _ := helperSpec(t, mode)
		p, err := Start(t.Context(), spec)
		require.NoError(t, err)
		t.Cleanup(func() { p.Stop(time.Second) })
		return p
	}
	ended := func(p *Process) time.Time {
		t.Helper()
		_, err := p.Wait(t.Context())
		require.NoError(t, err)
		at, ok := p.Ended()
		require.True(t, ok, "%s: Done is closed but Ended says it runs", p.Name())
		return at
	}
	first := start("exit3")
	firstAt := ended(first) // the second starts only once the first has ended
	second := start("exit3")
	secondAt := ended(second)
	running := start("sleep")

	assert.True(t, firstAt.Before(secondAt), "first ended at %v, second at %v", firstAt, secondAt)
	// A monotonic reading, which a step of the wall clock cannot reorder
	// (time.Time prints it as m=±seconds).
	assert.Contains(t, firstAt.String(), " m=+", "the reading has no monotonic part")
	at, ok := running.Ended()
	assert.False(t, ok, "a running process has ended at %v", at)
	assert.Same(t, first, FirstEnded(second, running, first))
	assert.Same(t, first, FirstEnded(nil, first, second))
	assert.Same(t, second, FirstEnded(running, second))
	assert.Nil(t, FirstEnded(running, nil))
	assert.Nil(t, FirstEnded())
}

func TestStartErrors(t *testing.T) {
	_, err := Start(t.Context(), Spec{Name: "engine", Argv: []string{"/nonexistent/engine"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "start engine")
	_, err = Start(t.Context(), Spec{Name: "engine"})
	require.Error(t, err)
}

func TestEnvIsMergedAndUnset(t *testing.T) {
	t.Setenv("PROCESS_TEST_DROP", "x")
	env := buildEnv([]string{"A=1", "PROCESS_TEST_DROP=x", "B=2"}, []string{"PROCESS_TEST_DROP"}, map[string]string{"B": "3", "C": "4"})
	assert.Equal(t, []string{"A=1", "B=3", "C=4"}, env)
}

// TestStopKillsWholeTree starts a tree with a child that ignores SIGTERM and
// a grandchild that left the group; after Stop none of them is alive.
func TestStopKillsWholeTree(t *testing.T) {
	spec, pidFile := helperSpec(t, "tree")
	p, err := Start(t.Context(), spec)
	require.NoError(t, err)
	pids := readPIDs(t, pidFile, 4)
	for _, pid := range pids {
		require.True(t, alive(pid), "pid %d should run before Stop", pid)
	}
	st := p.Stop(300 * time.Millisecond)
	assert.True(t, st.Stopped)
	assert.Equal(t, "SIGTERM", st.Signal, "root ends on SIGTERM")
	for _, pid := range pids {
		assert.False(t, alive(pid), "pid %d survived Stop", pid)
	}
	assert.Empty(t, tagged(p.tag))
	assert.Empty(t, p.Leftovers())
}

func TestStopEscalatesToKill(t *testing.T) {
	spec, pidFile := helperSpec(t, "ignore-term")
	p, err := Start(t.Context(), spec)
	require.NoError(t, err)
	readPIDs(t, pidFile, 1)
	st := p.Stop(200 * time.Millisecond)
	assert.Equal(t, "SIGKILL", st.Signal)
	assert.True(t, st.Stopped)
	assert.Equal(t, st, p.Stop(time.Second), "Stop is idempotent")
}

func TestWaitHTTP(t *testing.T) {
	var calls int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if calls < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	spec, _ := helperSpec(t, "sleep")
	p, err := Start(t.Context(), spec)
	require.NoError(t, err)
	t.Cleanup(func() { p.Stop(time.Second) })
	require.NoError(t, WaitHTTP(t.Context(), p, srv.URL+"/health", WaitOptions{Interval: 5 * time.Millisecond}))
	assert.Equal(t, 3, calls)
}

// TestWaitTCP: a tcp:// URL (a gRPC worker) is ready once it accepts a
// connection, and not before.
func TestWaitTCP(t *testing.T) {
	spec, _ := helperSpec(t, "sleep")
	p, err := Start(t.Context(), spec)
	require.NoError(t, err)
	t.Cleanup(func() { p.Stop(time.Second) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, WaitHTTP(t.Context(), p, "tcp://"+addr, WaitOptions{Interval: 5 * time.Millisecond, Timeout: 5 * time.Second}))
	require.NoError(t, ln.Close())
	err = WaitHTTP(t.Context(), p, "tcp://"+addr, WaitOptions{Interval: 5 * time.Millisecond, Timeout: 50 * time.Millisecond})
	nr, ok := errors.AsType[*NotReadyError](err)
	require.True(t, ok, "got %v", err)
	assert.Equal(t, "timeout", nr.Reason)
}

func TestWaitHTTPFailsFastWhenProcessExits(t *testing.T) {
	spec, _ := helperSpec(t, "exit3")
	p, err := Start(t.Context(), spec)
	require.NoError(t, err)
	err = WaitHTTP(t.Context(), p, "http://127.0.0.1:1/health", WaitOptions{Interval: 5 * time.Millisecond})
	nr, ok := errors.AsType[*NotReadyError](err)
	require.True(t, ok, "got %v", err)
	assert.Equal(t, "exited", nr.Reason)
	assert.Equal(t, 3, nr.Status.Exit)
	assert.Contains(t, fmt.Sprint(nr.Tail), "line one")
	// The tail is data, not message: sweep run printed it three times
	// (progress, stage error, final error).
	assert.NotContains(t, err.Error(), "line one")
}

func TestWaitHTTPTimeoutAndCancel(t *testing.T) {
	spec, _ := helperSpec(t, "sleep")
	p, err := Start(t.Context(), spec)
	require.NoError(t, err)
	t.Cleanup(func() { p.Stop(time.Second) })
	err = WaitHTTP(t.Context(), p, "http://127.0.0.1:1/health", WaitOptions{Interval: 5 * time.Millisecond, Timeout: 50 * time.Millisecond})
	nr, ok := errors.AsType[*NotReadyError](err)
	require.True(t, ok)
	assert.Equal(t, "timeout", nr.Reason)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err = WaitHTTP(ctx, p, "http://127.0.0.1:1/health", WaitOptions{Interval: 5 * time.Millisecond})
	assert.ErrorIs(t, err, context.Canceled)
}

// TestSignalNames: a SIGKILLed process used to be reported as "killed by
// killed" (syscall.Signal's String is the description, not the name).
func TestSignalNames(t *testing.T) {
	assert.Equal(t, "SIGKILL", SignalName(syscall.SIGKILL))
	assert.Equal(t, "SIGTERM", SignalName(syscall.SIGTERM))
	assert.Equal(t, "signal 64", SignalName(syscall.Signal(64)))
	assert.Equal(t, "killed by SIGKILL", Status{Exit: -1, Signal: SignalName(syscall.SIGKILL)}.String())
}

// TestLogDoesNotFollowSymlinks: engine output was appended to a file
// outside --out through a symlinked server.log.
func TestLogDoesNotFollowSymlinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere.txt")
	require.NoError(t, os.WriteFile(target, []byte("keep\n"), 0o644))
	link := filepath.Join(dir, "server.log")
	require.NoError(t, os.Symlink(target, link))
	_, err := Start(t.Context(), Spec{Name: "engine", Argv: []string{"echo", "hello"}, LogPath: link})
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.ELOOP)
	got, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "keep\n", string(got))
}

// TestKillTaggedFindsLateProcesses: a leftover tree was scanned once, so a
// process the scan missed (one exec'ing at that instant, or forked after
// it) was neither signalled nor reported, and the caller waited out the
// whole grace (a flaky CI run: one of an engine's two processes reported).
// Every scan now signals and reports what it finds for the first time.
func TestKillTaggedFindsLateProcesses(t *testing.T) {
	late := filepath.Join(t.TempDir(), "late.pid")
	tag := NewTag("engine")
	// The root ignores SIGTERM (as does what it starts) and starts its last
	// child only after KillTagged's first scan.
	script := `trap "" TERM; sleep 0.3; sh -c 'echo $$ > "$0"; exec sleep 60' "$1" & wait`
	p, err := Start(t.Context(), Spec{Name: "engine", Tag: tag, Argv: []string{"sh", "-c", script, "sh", late}})
	require.NoError(t, err)
	t.Cleanup(func() { p.Stop(time.Second) })
	require.Eventually(t, func() bool { return len(tagged(tag)) >= 2 }, 5*time.Second, 10*time.Millisecond)

	found := KillTagged(tag, 2*time.Second)
	b, err := os.ReadFile(late)
	require.NoError(t, err, "the late child started")
	latePID, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	assert.Contains(t, found, latePID, "the process started after the first scan is reported")
	assert.Empty(t, tagged(tag), "nothing carrying the tag is left")
}
