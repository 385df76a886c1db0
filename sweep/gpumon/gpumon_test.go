package gpumon

import (
	"context"
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

// fakeTools returns a PATH with only the fake SMI tool named tool (and the
// system's sh, date and sleep).
func fakeTools(t *testing.T, tool string) string {
	t.Helper()
	dir := t.TempDir()
	abs, err := filepath.Abs(filepath.Join("testdata", "bin", tool))
	require.NoError(t, err)
	require.NoError(t, os.Symlink(abs, filepath.Join(dir, tool)))
	return dir + ":/usr/bin:/bin"
}

func pids(t *testing.T, file string) []int {
	data, _ := os.ReadFile(file)
	var out []int
	for _, f := range strings.Fields(string(data)) {
		n, err := strconv.Atoi(f)
		require.NoError(t, err)
		out = append(out, n)
	}
	return out
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func waitGone(t *testing.T, pidFile string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids(t, pidFile) {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("monitor process %d outlived its point", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func TestNvidiaMonitor(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	m, err := Start(context.Background(), Options{Dir: dir, Env: map[string]string{"PATH": fakeTools(t, "nvidia-smi"), "FAKE_SMI_PIDS": pidFile}})
	require.NoError(t, err)
	assert.Equal(t, NVIDIA, m.Vendor())
	time.Sleep(350 * time.Millisecond)
	require.NoError(t, m.Stop())
	require.NoError(t, m.Stop()) // idempotent
	waitGone(t, pidFile)
	data, err := os.ReadFile(TelemetryPath(dir))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	assert.True(t, strings.HasPrefix(lines[0], "timestamp, index, power.draw [W]"), lines[0])
	assert.GreaterOrEqual(t, len(lines), 3)
	assert.Equal(t, "2026/12/04 10:00:09.000, 0, 100.00 W, 40, 1980 MHz, 3201 MHz, 90 %, 40 %", lines[len(lines)-1], "the final noheader sample")
	assert.NotContains(t, string(data), "stderr noise")
	offset, err := os.ReadFile(filepath.Join(dir, "agentic_power_timezone_offset.txt"))
	require.NoError(t, err)
	assert.Regexp(t, `^[+-][0-9]{4}\n$`, string(offset))
}

func TestAMDMonitor(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	var slept time.Duration
	m, err := Start(context.Background(), Options{Dir: dir, Sleep: func(d time.Duration) { slept = d; time.Sleep(300 * time.Millisecond) },
		Env: map[string]string{"PATH": fakeTools(t, "amd-smi"), "FAKE_SMI_PIDS": pidFile}})
	require.NoError(t, err)
	assert.Equal(t, AMD, m.Vendor())
	require.NoError(t, m.Stop())
	assert.Equal(t, 3*time.Second, slept, "interval + 2 s before the stop")
	waitGone(t, pidFile)
	data, err := os.ReadFile(TelemetryPath(dir))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data), "timestamp,gpu,socket_power\r\n1787199810,0,180\r\n\n1787199811,0,181\r\n"), "%q", data)
	assert.Equal(t, 1, strings.Count(string(data), "timestamp"), "one header")
	assert.NotContains(t, string(data), "preamble")
	for _, f := range []string{"gpu_metrics_energy_start.csv", "gpu_metrics_energy_end.csv", "gpu_metrics_identity.json"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
}

func TestNoTool(t *testing.T) {
	dir := t.TempDir()
	m, err := Start(context.Background(), Options{Dir: dir, Env: map[string]string{"PATH": "/usr/bin:/bin"}})
	require.NoError(t, err)
	assert.Equal(t, "", m.Vendor())
	require.NoError(t, m.Stop())
	assert.NoFileExists(t, TelemetryPath(dir))
	assert.FileExists(t, filepath.Join(dir, "agentic_power_timezone_offset.txt"))
}

func TestRepairTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.csv")
	require.NoError(t, os.WriteFile(p, []byte("h\nrow1\nrow"), 0o644))
	require.NoError(t, repairTail(p))
	data, _ := os.ReadFile(p)
	assert.Equal(t, "h\nrow1\n", string(data))
}

// TestMain doubles as the helper "runner" of TestMonitorDiesWithRunner.
func TestMain(m *testing.M) {
	if dir := os.Getenv("GPUMON_HELPER_DIR"); dir != "" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT)
		defer stop()
		mon, err := Start(ctx, Options{Dir: dir, Env: map[string]string{"PATH": os.Getenv("GPUMON_HELPER_PATH"), "FAKE_SMI_PIDS": filepath.Join(dir, "pids")}})
		if err != nil {
			os.Exit(3)
		}
		_ = os.WriteFile(filepath.Join(dir, "started"), nil, 0o644)
		<-ctx.Done() // Ctrl-C: the runner stops the monitor on its way out
		_ = mon.Stop()
		os.Exit(130)
	}
	os.Exit(m.Run())
}

// TestMonitorDiesWithRunner: no monitor outlives the process that started
// it, whether that process is interrupted (it stops the monitor) or killed
// with SIGKILL (the parent-death signal ends the monitor).
func TestMonitorDiesWithRunner(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			c := exec.Command(os.Args[0], "-test.run=^$")
			c.Env = append(os.Environ(), "GPUMON_HELPER_DIR="+dir, "GPUMON_HELPER_PATH="+fakeTools(t, "nvidia-smi"))
			require.NoError(t, c.Start())
			deadline := time.Now().Add(10 * time.Second)
			for {
				if _, err := os.Stat(filepath.Join(dir, "started")); err == nil && len(pids(t, filepath.Join(dir, "pids"))) > 0 {
					break
				}
				if time.Now().After(deadline) {
					_ = c.Process.Kill()
					t.Fatal("helper did not start its monitor")
				}
				time.Sleep(20 * time.Millisecond)
			}
			require.NoError(t, c.Process.Signal(sig))
			_ = c.Wait()
			waitGone(t, filepath.Join(dir, "pids"))
			if sig == syscall.SIGINT {
				data, _ := os.ReadFile(TelemetryPath(dir))
				assert.Contains(t, string(data), "10:00:09.000", "the final sample after Ctrl-C")
			}
		})
	}
}
