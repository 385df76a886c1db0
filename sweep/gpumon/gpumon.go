// Package gpumon is the GPU monitor of a benchmark point, as InferenceX's
// benchmarks/benchmark_lib.sh (start_gpu_monitor / stop_gpu_monitor at
// 843c6254f) runs it around the load: the same programs, flags, interval,
// files and stop sequence.
//
//	m, err := gpumon.Start(ctx, gpumon.Options{Dir: resultDir})
//	... the load ...
//	err = m.Stop() // also after a cancelled load; idempotent
//
// Start writes `date +%z` to agentic_power_timezone_offset.txt and starts
// `nvidia-smi --query-gpu=... --format=csv -l 1` (stdout to gpu_metrics.csv,
// stderr dropped) or, without nvidia-smi, `amd-smi metric -p -c -t -u -w 1
// --csv` (PYTHONUNBUFFERED=1; the preamble and repeated headers dropped and
// every line flushed, as the recipe's awk filter does) plus the `amd-smi
// metric -E --csv` energy snapshot (gpu_metrics_energy_start.csv) and `amd-smi
// static --json` (gpu_metrics_identity.json). Without either tool it monitors
// nothing, as the recipe. Stop, when the monitor is still running, waits
// interval+2 s on AMD (amd-smi stamps whole seconds), ends the monitor, drops a
// truncated last line, and appends one `--format=csv,noheader` sample (NVIDIA)
// or writes the end energy snapshot (AMD).
//
// The monitor is its own process group, carries Options.Tag in
// SWEEP_PROCESS_TAG (so a later run in the directory can find it after a
// kill -9 of sweep) and dies with the process that started it (Linux
// parent-death signal); Stop signals the whole group and kills it after a
// grace period. Options.Exec is the hook that runs the commands where the
// engine runs (a container): it rewrites each argv.
package gpumon

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"sweep/internal/proc"
	"sweep/metrics/power"
)

// NvidiaQuery is the recipe's nvidia-smi query.
const NvidiaQuery = "timestamp,index,power.draw,temperature.gpu,clocks.current.sm,clocks.current.memory,utilization.gpu,utilization.memory"

// The vendors.
const (
	NVIDIA = "nvidia"
	AMD    = "amd"
)

// Options say where and how to monitor.
type Options struct {
	// Dir receives gpu_metrics.csv, its sidecars and the offset file.
	Dir string
	// Vendor is NVIDIA or AMD; "" picks as the recipe does: nvidia-smi if
	// it is on PATH, else amd-smi, else nothing is monitored.
	Vendor string
	// Exec, when set, rewrites each command to run where the engine runs
	// (e.g. inside its container); the programs are then not looked up
	// here, so Vendor must be set.
	Exec func(argv []string) []string
	// Env is added to the commands' environment (e.g. a PATH whose first
	// directory holds simulated SMI tools).
	Env map[string]string
	// Interval is the sampling interval in seconds (default 1).
	Interval int
	// Tag marks the monitor's processes (proc.TagEnv); "" makes one.
	Tag string
	// StopGrace is the wait between SIGTERM and SIGKILL (default 5 s).
	StopGrace time.Duration
	// Sleep is AMD's wait before the stop (default time.Sleep).
	Sleep func(time.Duration)
	// CommandTimeout bounds each one-shot command (default 30 s).
	CommandTimeout time.Duration
}

// Monitor is a running GPU monitor.
type Monitor struct {
	o      Options
	vendor string
	csv    string
	cmd    *exec.Cmd
	argv   []string      // the monitor's command, as given to Exec
	copied chan struct{} // closed when the stream's output is written
	exited chan struct{} // closed when the monitor process has exited

	stopOnce sync.Once
	stopErr  error
}

// TelemetryPath is gpu_metrics.csv in dir.
func TelemetryPath(dir string) string { return filepath.Join(dir, power.TelemetryFile) }

// Start writes the offset file and starts the monitor. With no tool
// found it returns a Monitor that monitors nothing (Vendor() == "").
func Start(ctx context.Context, o Options) (*Monitor, error) {
	if o.Interval <= 0 {
		o.Interval = 1
	}
	if o.Tag == "" {
		o.Tag = proc.NewTag("gpu-monitor")
	}
	if o.StopGrace <= 0 {
		o.StopGrace = 5 * time.Second
	}
	if o.Sleep == nil {
		o.Sleep = time.Sleep
	}
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = 30 * time.Second
	}
	m := &Monitor{o: o, csv: TelemetryPath(o.Dir)}
	offset, err := m.output(ctx, []string{"date", "+%z"}, nil)
	if err != nil {
		return nil, fmt.Errorf("gpu monitor: date +%%z: %w", err)
	}
	if err := os.WriteFile(filepath.Join(o.Dir, power.OffsetFile), offset, 0o644); err != nil {
		return nil, fmt.Errorf("gpu monitor: %w", err)
	}
	m.vendor = o.Vendor
	if m.vendor == "" && o.Exec == nil {
		switch {
		case m.lookPath("nvidia-smi"):
			m.vendor = NVIDIA
		case m.lookPath("amd-smi"):
			m.vendor = AMD
		}
	}
	interval := strconv.Itoa(o.Interval)
	switch m.vendor {
	case "":
		return m, nil
	case NVIDIA:
		err = m.startStream([]string{"nvidia-smi", "--query-gpu=" + NvidiaQuery, "--format=csv", "-l", interval}, nil, false)
	case AMD:
		err = m.startStream([]string{"amd-smi", "metric", "-p", "-c", "-t", "-u", "-w", interval, "--csv"},
			map[string]string{"PYTHONUNBUFFERED": "1"}, true)
		if err == nil {
			m.snapshot(ctx, "_energy_start.csv", "metric", "-E", "--csv")
			m.snapshot(ctx, "_identity.json", "static", "--json")
		}
	default:
		return nil, fmt.Errorf("gpu monitor: vendor %q: want %s or %s", m.vendor, NVIDIA, AMD)
	}
	if err != nil {
		return nil, fmt.Errorf("gpu monitor: %w", err)
	}
	return m, nil
}

// Vendor is the monitored vendor, "" when nothing is monitored.
func (m *Monitor) Vendor() string { return m.vendor }

// Argv is the monitor's command (nil when nothing is monitored).
func (m *Monitor) Argv() []string { return m.argv }

// PID is the monitor process's pid (0 when none runs).
func (m *Monitor) PID() int {
	if m.cmd == nil || m.cmd.Process == nil {
		return 0
	}
	return m.cmd.Process.Pid
}

func (m *Monitor) lookPath(name string) bool {
	_, err := lookPathIn(name, m.o.Env["PATH"])
	return err == nil
}

// command builds an exec.Cmd for argv (through the Exec hook), in its
// own process group, killed when sweep dies, with the tag and Env.
func (m *Monitor) command(ctx context.Context, argv []string, env map[string]string) (*exec.Cmd, error) {
	if m.o.Exec != nil {
		argv = m.o.Exec(argv)
	}
	if len(argv) == 0 {
		return nil, errors.New("empty command")
	}
	path := argv[0]
	if !strings.Contains(path, "/") {
		var err error
		if path, err = lookPathIn(argv[0], m.o.Env["PATH"]); err != nil {
			return nil, err
		}
	}
	var c *exec.Cmd
	if ctx != nil {
		c = exec.CommandContext(ctx, path, argv[1:]...)
		c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	} else {
		c = exec.Command(path, argv[1:]...)
	}
	c.Args[0] = argv[0]
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	c.Env = os.Environ()
	for k, v := range m.o.Env {
		c.Env = append(c.Env, k+"="+v)
	}
	for k, v := range env {
		c.Env = append(c.Env, k+"="+v)
	}
	c.Env = append(c.Env, proc.TagEnv+"="+m.o.Tag)
	return c, nil
}

// lookPathIn finds an executable name in path ("" : this process's PATH).
func lookPathIn(name, path string) (string, error) {
	if path == "" {
		return exec.LookPath(name)
	}
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found in PATH", name)
}

// output runs a one-shot command and returns its stdout (stderr dropped).
func (m *Monitor) output(ctx context.Context, argv []string, env map[string]string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, m.o.CommandTimeout)
	defer cancel()
	c, err := m.command(ctx, argv, env)
	if err != nil {
		return nil, err
	}
	return c.Output()
}

// snapshot writes one best-effort amd-smi snapshot beside the CSV,
// removing the file rather than keeping a partial one on failure.
func (m *Monitor) snapshot(ctx context.Context, suffix string, args ...string) {
	path := strings.TrimSuffix(m.csv, ".csv") + suffix
	out, err := m.output(ctx, append([]string{"amd-smi"}, args...), nil)
	if err != nil {
		_ = os.Remove(path)
		return
	}
	_ = os.WriteFile(path, out, 0o644)
}

// startStream starts the monitor with its stdout going to the CSV; amd
// applies the recipe's awk filter (keep the first header from the line
// starting "timestamp,", drop repeated headers and the preamble).
func (m *Monitor) startStream(argv []string, env map[string]string, amd bool) error {
	c, err := m.command(nil, argv, env)
	if err != nil {
		return err
	}
	f, err := os.Create(m.csv)
	if err != nil {
		return err
	}
	out, err := c.StdoutPipe()
	if err != nil {
		f.Close()
		return err
	}
	if err := c.Start(); err != nil {
		f.Close()
		return err
	}
	m.cmd, m.argv, m.copied, m.exited = c, argv, make(chan struct{}), make(chan struct{})
	go func() {
		defer close(m.copied)
		defer f.Close()
		if amd {
			filterAMD(out, f)
		} else {
			_, _ = io.Copy(f, out)
		}
	}()
	go func() {
		<-m.copied
		_ = c.Wait()
		close(m.exited)
	}()
	return nil
}

// filterAMD is the recipe's awk program over amd-smi's watch output, every
// line written as soon as it is read.
func filterAMD(r io.Reader, w io.Writer) {
	br := bufio.NewReader(r)
	header := false
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			text := strings.TrimSuffix(line, "\n")
			switch {
			case strings.HasPrefix(text, "timestamp,"):
				if !header {
					_, _ = io.WriteString(w, text+"\n")
					header = true
				}
			case header:
				_, _ = io.WriteString(w, text+"\n")
			}
		}
		if err != nil {
			return
		}
	}
}

// running reports whether the monitor process is still alive (kill -0).
func (m *Monitor) running() bool {
	if m.cmd == nil {
		return false
	}
	select {
	case <-m.exited:
		return false
	default:
		return true
	}
}

// Stop ends the monitor as stop_gpu_monitor does; later calls return the
// first call's result. The monitor's process group is gone when Stop
// returns.
func (m *Monitor) Stop() error {
	m.stopOnce.Do(func() { m.stopErr = m.stop() })
	return m.stopErr
}

func (m *Monitor) stop() error {
	if !m.running() {
		m.kill() // a monitor that died on its own may have left children
		return nil
	}
	if m.vendor == AMD {
		m.o.Sleep(time.Duration(m.o.Interval+2) * time.Second)
	}
	m.kill()
	ctx := context.Background()
	switch m.vendor {
	case NVIDIA:
		if err := repairTail(m.csv); err != nil {
			return err
		}
		out, err := m.output(ctx, []string{"nvidia-smi", "--query-gpu=" + NvidiaQuery, "--format=csv,noheader"}, nil)
		if err != nil {
			return nil // the recipe warns and goes on
		}
		f, err := os.OpenFile(m.csv, os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		_, err = f.Write(out)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	case AMD:
		err := repairTail(m.csv)
		m.snapshot(ctx, "_energy_end.csv", "metric", "-E", "--csv")
		return err
	}
	return nil
}

// kill sends SIGTERM to the monitor's group, then SIGKILL after the grace
// period, and waits for its output to be written.
func (m *Monitor) kill() {
	if m.cmd == nil {
		return
	}
	pgid := m.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-m.exited:
	case <-time.After(m.o.StopGrace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-m.exited
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL) // anything left in the group
}

// repairTail drops a partial last line (no trailing newline), as
// _repair_truncated_gpu_metrics_tail does.
func repairTail(path string) error {
	data, err := os.ReadFile(path)
	if err != nil || len(data) == 0 || data[len(data)-1] == '\n' {
		return nil
	}
	i := bytes.LastIndexByte(data, '\n')
	return os.WriteFile(path, data[:i+1], 0o644)
}
