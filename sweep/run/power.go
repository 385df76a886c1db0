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
	"sweep/metrics/aiperf"
	"sweep/metrics/power"
	"sweep/metrics/result"
	"sweep/sweep/gpumon"
)

// startMonitors starts the GPU monitors of a load with a power lane: one
// into OutDir, or for a disaggregated point one per node (its worker's
// GPUs) into OutDir/power/<worker>. Each one's tag is recorded first so a
// later run in the directory stops it if sweep is killed. None runs when
// the lane is off; one that could not start is missing (the power lane
// then reports the missing telemetry). On the wall clock it picks the
// clock origin the simulated tools and the load generator share
// (r.clockOrigin).
func (r *runner) startMonitors(ctx context.Context) []*gpumon.Monitor {
	ps := r.spec.Power
	if ps == nil {
		return nil
	}
	if ps.SimulatedTool != "" && ps.WallClock {
		r.clockOrigin = strconv.FormatInt(time.Now().UnixNano(), 10)
	}
	if len(ps.Nodes) == 0 {
		if m := r.startMonitor(ctx, r.o.OutDir, monitorProcess, ps.Env); m != nil {
			return []*gpumon.Monitor{m}
		}
		return nil
	}
	var out []*gpumon.Monitor
	for _, n := range ps.Nodes {
		dir := filepath.Join(r.o.OutDir, NodePowerDir(n.Name))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			r.progress("gpu monitor " + n.Name + ": not started: " + err.Error())
			continue
		}
		env := maps.Clone(ps.Env)
		if env == nil {
			env = map[string]string{}
		}
		maps.Copy(env, n.Env)
		if m := r.startMonitor(ctx, dir, monitorProcess+"-"+n.Name, env); m != nil {
			out = append(out, m)
		}
	}
	// The window's naive times are read in the zone the monitors
	// captured, as a single-node point's are (the first node's).
	if len(out) > 0 {
		if b, err := os.ReadFile(filepath.Join(r.o.OutDir, NodePowerDir(ps.Nodes[0].Name), power.OffsetFile)); err == nil {
			_ = os.WriteFile(filepath.Join(r.o.OutDir, power.OffsetFile), b, 0o644)
		}
	}
	return out
}

// NodePowerDir is where a disaggregated point's node monitor writes its
// telemetry, relative to the point's directory.
func NodePowerDir(worker string) string { return filepath.Join("power", worker) }

// startMonitor starts one GPU monitor into dir, recorded under name; env
// is added to its commands' environment.
func (r *runner) startMonitor(ctx context.Context, dir, name string, env map[string]string) *gpumon.Monitor {
	ps := r.spec.Power
	label := strings.ReplaceAll(name, "-", " ") // "gpu monitor", "gpu monitor prefill0"
	tag := proc.NewTag("gpu-monitor")
	if err := recordTag(r.o.OutDir, tag); err != nil {
		r.progress(label + ": not started: " + err.Error())
		return nil
	}
	o := gpumon.Options{Dir: dir, Vendor: ps.Vendor, Exec: r.o.MonitorExec, Env: maps.Clone(env), Tag: tag}
	if ps.SimulatedTool != "" {
		path, err := r.simulatedToolPath(ps)
		if err != nil {
			r.progress(label + ": not started: " + err.Error())
			return nil
		}
		if o.Env == nil {
			o.Env = map[string]string{}
		}
		o.Env["PATH"] = path
		if r.clockOrigin != "" {
			o.Env[simproto.EnvSMIClockOrigin] = r.clockOrigin
		} else if gen, err := simAnchorGen(ctx, env[simproto.EnvSMIURL]); err == nil {
			// The load has not joined the virtual clock yet: the
			// simulated tool samples only the load that joins after
			// this generation.
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
		r.progress(label + ": no nvidia-smi or amd-smi found, skipping")
	} else {
		r.mu.Lock()
		r.rec.Processes[name] = &ProcessOutcome{Argv: m.Argv(), PID: m.PID(), Exit: -1}
		r.mu.Unlock()
		r.progress(fmt.Sprintf("%s: %s, pid %d -> %s", label, m.Vendor(), m.PID(), gpumon.TelemetryPath(dir)))
	}
	return m
}

// monitorProcess names the GPU monitor in the record's processes (a
// node's: monitorProcess-<worker>).
const monitorProcess = "gpu-monitor"

// stopMonitors stops the monitors (the recipe stops them after the load,
// sampling once more); the record says sweep stopped them. Stop is
// idempotent.
func (r *runner) stopMonitors(ms []*gpumon.Monitor) {
	for _, m := range ms {
		if err := m.Stop(); err != nil {
			r.progress("gpu monitor: " + err.Error())
		}
	}
	r.mu.Lock()
	for name, po := range r.rec.Processes {
		if name == monitorProcess || strings.HasPrefix(name, monitorProcess+"-") {
			po.Stopped = true
		}
	}
	r.mu.Unlock()
}

// adaptPower runs InferenceX's power_adapter on the result being built
// (records: the point's records, already read for the aggregate): the
// sidecars go into OutDir, the power keys into res. It returns the
// reason to add to the result's invalid reasons when the lane requires
// valid telemetry and it is not ("" otherwise).
func (r *runner) adaptPower(res *result.Result, records []aiperf.Record) (power.Outcome, string) {
	ps := r.spec.Power
	if len(ps.Nodes) > 0 {
		return r.adaptMultiNodePower(res)
	}
	expected := ps.ExpectedGPUs
	var log strings.Builder
	o := power.Options{
		ResultDir: r.o.OutDir, AggregateName: result.FileName(r.spec.Name),
		ExpectedGPUs: &expected, RequirePower: ps.Require, Stdout: &log, Stderr: &log,
		Records: records,
	}
	if ps.AllocatedGPUs {
		o.GPUs = allocatedGPUs(r.spec.Engine.Env, expected)
	}
	fields, out := power.AdaptResult(o)
	return r.powerVerdict(res, fields, out, log.String())
}

// powerVerdict puts the lane's keys into res, passes on the adapter's
// messages and returns the outcome with the invalid reason REQUIRE_POWER
// adds ("" otherwise).
func (r *runner) powerVerdict(res *result.Result, fields *power.Fields, out power.Outcome, log string) (power.Outcome, string) {
	res.Fields = fields
	if line := strings.TrimSpace(log); line != "" {
		r.progress(line)
	}
	if out.ExitCode != 0 {
		return out, "power: " + strings.Join(out.Explained(), ", ") + " (REQUIRE_POWER)"
	}
	return out, ""
}

// adaptMultiNodePower is adaptPower for a disaggregated point: the
// nodes' telemetry summed as InferenceX's multi-node power path sums it
// (power.AdaptMultiNode), the per-role keys included.
func (r *runner) adaptMultiNodePower(res *result.Result) (power.Outcome, string) {
	ps := r.spec.Power
	var log strings.Builder
	var names []string
	for _, n := range ps.Nodes {
		names = append(names, n.Name)
	}
	o := multiNodePowerOptions(r.o.OutDir, r.spec.Facts, names)
	o.RequirePower, o.Stdout, o.Stderr = ps.Require, &log, &log
	fields, out := power.AdaptMultiNode(o)
	return r.powerVerdict(res, fields, out, log.String())
}

// multiNodePowerOptions are the multi-node power lane's inputs for the
// disaggregated point in dir whose node monitors are named (their
// workers, "prefill0", "decode0"; the role is the name's): each node's
// telemetry in NodePowerDir, its worker's GPUs and the role totals from
// the point's facts (InferenceX's PREFILL_GPUS and DECODE_GPUS).
func multiNodePowerOptions(dir string, f result.RunFacts, names []string) power.MultiNodeOptions {
	o := power.MultiNodeOptions{
		ResultDir:   dir,
		PrefillGPUs: f.Prefill.NumWorkers * power.ExpectedGPUs(f.Prefill.TP, f.Prefill.PP, f.Prefill.PCP),
		DecodeGPUs:  f.Decode.NumWorkers * power.ExpectedGPUs(f.Decode.TP, f.Decode.PP, f.Decode.PCP),
	}
	for _, name := range names {
		n := power.NodeTelemetry{Name: name, Role: strings.TrimRight(name, "0123456789"), Dir: filepath.Join(dir, NodePowerDir(name))}
		switch n.Role {
		case power.RolePrefill:
			n.GPUs = power.ExpectedGPUs(f.Prefill.TP, f.Prefill.PP, f.Prefill.PCP)
		case power.RoleDecode:
			n.GPUs = power.ExpectedGPUs(f.Decode.TP, f.Decode.PP, f.Decode.PCP)
		}
		o.Nodes = append(o.Nodes, n)
	}
	return o
}

// multiNodePowerRan reports the node monitors a disaggregated point's
// power lane left in dir (the prefill<N> and decode<N> directories under
// dir/power), none when the lane did not run (no offset file).
func multiNodePowerRan(dir string) []string {
	if !power.LaneRan(dir) {
		return nil
	}
	entries, err := os.ReadDir(filepath.Join(dir, NodePowerDir("")))
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		role := strings.TrimRight(e.Name(), "0123456789")
		if e.IsDir() && (role == power.RolePrefill || role == power.RoleDecode) {
			names = append(names, e.Name())
		}
	}
	return names
}

// simulatedGPUs points a simulated point's power lane at the simulated
// engine's telemetry: the vendor's tool (amd-smi for the MI GPUs, else
// nvidia-smi) is the sweep executable asking the engine at healthURL's
// host. On the virtual clock the tools stamp samples on its timeline; on
// the wall clock on the load generator's compressed clock about the
// origin the runner gives both when the monitor starts.
func simulatedGPUs(spec *Spec, exe, gpu, healthURL string, virtual bool) {
	ps := spec.Power
	ps.SimulatedTool = exe
	ps.WallClock = !virtual
	ps.Vendor = gpumon.NVIDIA
	if strings.HasPrefix(gpu, "mi") {
		ps.Vendor = gpumon.AMD
	}
	ps.Env = map[string]string{simproto.EnvSMIURL: baseURL(healthURL)}
}

// baseURL is the scheme and host of a URL (u itself if it does not parse).
func baseURL(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Scheme + "://" + p.Host
	}
	return u
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
