package run

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sweep/internal/simproto"
	"time"

	"sweep/internal/proc"
	"sweep/metrics/power"
	"sweep/metrics/result"
	"sweep/sweep/gpumon"
)

// startMonitor starts the GPU monitor of a load with a power lane, its
// tag recorded first so a later run in the directory stops it if sweep is
// killed; nil when the lane is off or the monitor could not start (the
// power lane then reports the missing telemetry).
func (r *runner) startMonitor(ctx context.Context) *gpumon.Monitor {
	ps := r.spec.Power
	if ps == nil {
		return nil
	}
	tag := proc.NewTag("gpu-monitor")
	if err := recordTag(r.o.OutDir, tag); err != nil {
		r.progress("gpu monitor: not started: " + err.Error())
		return nil
	}
	o := gpumon.Options{Dir: r.o.OutDir, Vendor: ps.Vendor, Exec: r.o.MonitorExec, Env: maps.Clone(ps.Env), Tag: tag}
	if ps.SimulatedTool != "" {
		path, err := r.simulatedToolPath(ps)
		if err != nil {
			r.progress("gpu monitor: not started: " + err.Error())
			return nil
		}
		if o.Env == nil {
			o.Env = map[string]string{}
		}
		o.Env["PATH"] = path
		// The load has not joined the clock yet: the simulated tool
		// samples only the load that joins after this generation.
		if gen, err := simAnchorGen(ctx, ps.Env[simproto.EnvSMIURL]); err == nil {
			o.Env[simproto.EnvSMIAfterGen] = strconv.Itoa(gen)
		}
		// amd-smi's whole-second stamps are why the recipe waits before the
		// stop; the simulated tool prints the seconds the clock passed when
		// it is stopped.
		o.Sleep = func(time.Duration) {}
	}
	m, err := gpumon.Start(ctx, o)
	if err != nil {
		r.progress(err.Error())
		return nil
	}
	if m.Vendor() == "" {
		r.progress("gpu monitor: no nvidia-smi or amd-smi found, skipping")
	} else {
		r.mu.Lock()
		r.rec.Processes[monitorProcess] = &ProcessOutcome{Argv: m.Argv(), PID: m.PID(), Exit: -1}
		r.mu.Unlock()
		r.progress(fmt.Sprintf("gpu monitor: %s, pid %d -> %s", m.Vendor(), m.PID(), gpumon.TelemetryPath(r.o.OutDir)))
	}
	return m
}

// monitorProcess names the GPU monitor in the record's processes.
const monitorProcess = "gpu-monitor"

// stopMonitor stops the monitor (the recipe stops it after the load,
// sampling once more); the record says sweep stopped it.
func (r *runner) stopMonitor(m *gpumon.Monitor) {
	if m == nil {
		return
	}
	if err := m.Stop(); err != nil {
		r.progress("gpu monitor: " + err.Error())
	}
	r.mu.Lock()
	if po := r.rec.Processes[monitorProcess]; po != nil {
		po.Stopped = true
	}
	r.mu.Unlock()
}

// adaptPower runs InferenceX's power_adapter on the result being built:
// the sidecars go into OutDir, the power keys into res. It returns the
// reason to add to the result's invalid reasons when the lane requires
// valid telemetry and it is not ("" otherwise).
func (r *runner) adaptPower(res *result.Result) (power.Outcome, string) {
	ps := r.spec.Power
	expected := ps.ExpectedGPUs
	var log strings.Builder
	o := power.Options{
		ResultDir: r.o.OutDir, AggregateName: r.spec.Name + ".json",
		ExpectedGPUs: &expected, RequirePower: ps.Require, Stdout: &log, Stderr: &log,
	}
	if ps.AllocatedGPUs {
		o.GPUs = allocatedGPUs(r.spec.Engine.Env, expected)
	}
	fields, out := power.AdaptResult(o)
	res.Fields = fields
	if line := strings.TrimSpace(log.String()); line != "" {
		r.progress(line)
	}
	if out.ExitCode != 0 {
		return out, "power: " + strings.Join(out.Reasons, ", ") + " (REQUIRE_POWER)"
	}
	return out, ""
}

// simulatedGPUs points a simulated point's power lane at the simulated
// engine's telemetry: the vendor's tool (amd-smi for the MI GPUs, else
// nvidia-smi) is the sweep executable asking the engine at healthURL's
// host. The simulated tools stamp samples on the virtual clock's timeline,
// which only the virtual clock has: on the wall clock the lane is off.
func simulatedGPUs(spec *Spec, exe, gpu, healthURL string, virtual bool) {
	if !virtual {
		spec.Power = nil
		return
	}
	ps := spec.Power
	ps.SimulatedTool = exe
	ps.Vendor = gpumon.NVIDIA
	if strings.HasPrefix(gpu, "mi") {
		ps.Vendor = gpumon.AMD
	}
	base := healthURL
	if u, err := url.Parse(healthURL); err == nil {
		base = u.Scheme + "://" + u.Host
	}
	ps.Env = map[string]string{simproto.EnvSMIURL: base}
}

// simulatedToolPath links the simulated SMI tool into OutDir/sim-gpus and
// returns the PATH that puts it first.
func (r *runner) simulatedToolPath(ps *PowerSpec) (string, error) {
	dir := filepath.Join(r.o.OutDir, "sim-gpus")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tool := "nvidia-smi"
	if ps.Vendor == gpumon.AMD {
		tool = "amd-smi"
	}
	link := filepath.Join(dir, tool)
	_ = os.Remove(link)
	if err := os.Symlink(ps.SimulatedTool, link); err != nil {
		return "", err
	}
	return dir + string(os.PathListSeparator) + os.Getenv("PATH"), nil
}

// allocatedGPUs are the GPU ids a point's engine was given: its
// CUDA/HIP/ROCR_VISIBLE_DEVICES (the first set), else 0..n-1.
func allocatedGPUs(env map[string]string, n int) []string {
	for _, v := range []string{"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"} {
		if ids := env[v]; ids != "" {
			var out []string
			for id := range strings.SplitSeq(ids, ",") {
				out = append(out, strings.TrimSpace(id))
			}
			return out
		}
	}
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(i)
	}
	return out
}

// simAnchorGen asks the simulated engine at base for its anchor
// generation (the "gen G" that starts GET /sim/power's answer).
func simAnchorGen(ctx context.Context, base string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/sim/power?from="+strconv.FormatInt(math.MaxInt64, 10), nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(io.LimitReader(resp.Body, 4096)).ReadString('\n')
	f := strings.Fields(line)
	if len(f) < 2 || f[0] != "gen" {
		return 0, fmt.Errorf("GET /sim/power: %q (%v)", line, err)
	}
	return strconv.Atoi(f[1])
}
