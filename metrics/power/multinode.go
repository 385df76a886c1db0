package power

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"sweep/internal/atomicfile"
	"sweep/internal/pyjson"
)

// A disaggregated point's power, summed over its nodes as InferenceX's
// multi-node power path does (utils/aggregate_power_multinode.py at
// 843c6254f, run from process_result.py on srt-slurm's DCGM artifacts):
// every worker GPU is integrated over the benchmark window on its own
// (per_device_trapezoidal_with_linear_boundary_interpolation, as the
// single-node adapter does), the energies sum into a role's energy and
// into the deployment's, and
//
//	avg_power_w           = total / duration / GPUs (prefill + decode)
//	avg_total_gpu_power_w = total / duration
//	joules_per_*          = total / completed, input, output, input+output tokens
//	prefill_gpu_energy_j  = Σ prefill GPUs   (decode_gpu_energy_j likewise)
//	prefill_avg_power_w   = prefill energy / duration / prefill GPUs
//	prefill_joules_per_input_token  = prefill energy / input tokens
//	decode_joules_per_output_token  = decode energy / output tokens
//
// A role's figures are present only when the role has GPUs. InferenceX
// reads the telemetry of all nodes from one DCGM scrape; here each node has
// a monitor of its own (gpu_metrics.csv in the node's directory), read as
// the single-node adapter reads it, and only the node's worker GPUs
// (0..GPUs-1) are integrated, as the multi-node path integrates only the
// manifest's expected devices.

// The worker roles of a disaggregated point's power.
const (
	RolePrefill = "prefill"
	RoleDecode  = "decode"
)

// NodeEnergy is one node's worker GPUs' energy over the window.
type NodeEnergy struct {
	Role    string    // RolePrefill or RoleDecode
	EnergyJ []float64 // per GPU
}

// SumNodes sums the nodes' energies over window w as the multi-node path
// does; prefillGPUs and decodeGPUs are the workflow's PREFILL_GPUS and
// DECODE_GPUS. The caller checks the counts first (see AdaptMultiNode).
func SumNodes(w *Window, nodes []NodeEnergy, prefillGPUs, decodeGPUs int) (*Metrics, *RoleMetrics) {
	var total, prefill, decode float64
	gpus := 0
	for _, n := range nodes {
		for _, e := range n.EnergyJ {
			total += e
			gpus++
			switch n.Role {
			case RolePrefill:
				prefill += e
			case RoleDecode:
				decode += e
			}
		}
	}
	d := w.End - w.Start
	m := &Metrics{
		AvgPowerW:                total / d / float64(gpus),
		AvgTotalGPUPowerW:        total / d,
		TotalGPUEnergyJ:          total,
		JoulesPerSuccessfulQuery: total / float64(w.Completed),
		JoulesPerInputToken:      total / float64(w.TotalInputTokens),
		JoulesPerOutputToken:     total / float64(w.TotalOutputTokens),
		JoulesPerTotalToken:      total / float64(w.TotalInputTokens+w.TotalOutputTokens),
	}
	r := &RoleMetrics{}
	if prefillGPUs > 0 {
		avg, per := prefill/d/float64(prefillGPUs), prefill/float64(w.TotalInputTokens)
		r.PrefillGPUEnergyJ, r.PrefillAvgPowerW, r.PrefillJoulesPerInputToken = &prefill, &avg, &per
	}
	if decodeGPUs > 0 {
		avg, per := decode/d/float64(decodeGPUs), decode/float64(w.TotalOutputTokens)
		r.DecodeGPUEnergyJ, r.DecodeAvgPowerW, r.DecodeJoulesPerOutputToken = &decode, &avg, &per
	}
	return m, r
}

// NodeTelemetry is one node of a disaggregated point: its worker and the
// directory its GPU monitor wrote gpu_metrics.csv into.
type NodeTelemetry struct {
	Name string // the worker, "prefill0"
	Role string // RolePrefill or RoleDecode
	Dir  string
	GPUs int // the worker's GPUs: ids 0..GPUs-1 of the node's telemetry
}

// MultiNodeOptions are AdaptMultiNode's inputs.
type MultiNodeOptions struct {
	// ResultDir holds aiperf_artifacts/ and the offset file; the window
	// and validation sidecars are written into it.
	ResultDir string
	Nodes     []NodeTelemetry
	// PrefillGPUs and DecodeGPUs are the point's GPU counts per role
	// (InferenceX's --prefill-gpus and --decode-gpus).
	PrefillGPUs, DecodeGPUs int
	// RequirePower makes an invalid measurement exit 1.
	RequirePower bool
	// Zone reads zone-less telemetry timestamps; nil is time.Local.
	Zone *time.Location
	// Stdout and Stderr receive the adapter's messages (nil: discarded).
	Stdout, Stderr io.Writer
}

// AdaptMultiNode is the power lane of a disaggregated point: the window
// from aiperf's artifacts (agentic_power_window.json), each node's worker
// GPUs integrated over it, the sums of SumNodes, and power_validation.json
// naming every GPU's role and energy. It returns the aggregate's power
// keys (the role keys included) and the outcome.
func AdaptMultiNode(o MultiNodeOptions) (*Fields, Outcome) {
	ioDefaults(&o.Zone, &o.Stdout, &o.Stderr)
	var reasons []string
	window, wr := BuildWindow(o.ResultDir, nil)
	reasons = append(reasons, wr...)
	if window != nil {
		if err := atomicfile.Write(filepath.Join(o.ResultDir, WindowFile), dumps(window.value()), 0o644); err != nil {
			reasons = appendReason(reasons, "power_window_unwritable")
		}
	}
	roleGPUs := map[string]int{}
	count := &GPUCount{} // over the nodes integrated
	nodes := object()
	perRole, perEnergy, perGap := object(), object(), object()
	var energies []NodeEnergy
	observed := 0
	for _, n := range o.Nodes {
		nv := object().set("role", str(n.Role)).set("telemetry_source", str(filepath.Join(n.Dir, TelemetryFile)))
		nodes.set(n.Name, nv)
		if n.Role != RolePrefill && n.Role != RoleDecode {
			reasons = appendReason(reasons, "topology_env_mismatch")
			nv.set("reasons", strList([]string{"topology_env_mismatch"}))
			continue
		}
		roleGPUs[n.Role] += n.GPUs
		if window == nil {
			continue
		}
		filter := make([]string, n.GPUs)
		for g := range filter {
			filter[g] = strconv.Itoa(g)
		}
		expected := n.GPUs
		in := integrate(filepath.Join(n.Dir, TelemetryFile), window.Start, window.End, &expected, MaxSampleGap, o.Zone, filter)
		for _, r := range in.Reasons {
			reasons = appendReason(reasons, r)
		}
		nv.set("reasons", strList(in.Reasons)).set("observed_gpu_ids", strList(in.ObservedGPUs))
		observed += len(in.ObservedGPUs)
		nc := newGPUCount(in, n.GPUs, filter, n.Name+"/")
		count.Expected += nc.Expected
		count.Observed = append(count.Observed, nc.Observed...)
		count.Missing = append(count.Missing, nc.Missing...)
		ne := NodeEnergy{Role: n.Role}
		for _, gpu := range in.eOrder {
			label := n.Name + "/" + gpu
			perRole.set(label, str(n.Role))
			perEnergy.set(label, float(in.EnergyJ[gpu]))
			ne.EnergyJ = append(ne.EnergyJ, in.EnergyJ[gpu])
		}
		for _, gpu := range in.gapOrder {
			perGap.set(n.Name+"/"+gpu, float(in.MaxSampleGaps[gpu]))
		}
		energies = append(energies, ne)
	}
	if len(o.Nodes) == 0 || roleGPUs[RolePrefill] != o.PrefillGPUs || roleGPUs[RoleDecode] != o.DecodeGPUs || o.PrefillGPUs+o.DecodeGPUs == 0 {
		reasons = appendReason(reasons, "topology_env_mismatch")
	}
	out := Outcome{Window: window}
	if len(count.Observed) > 0 {
		out.GPUs = count
	}
	var roles *RoleMetrics
	if len(reasons) == 0 {
		m, r := SumNodes(window, energies, o.PrefillGPUs, o.DecodeGPUs)
		if slices.ContainsFunc(append(m.named(), r.named()...), func(nm namedMetric) bool { return isNonFinite(nm.v) }) {
			reasons = appendReason(reasons, "non_finite_power_metric")
		} else {
			out.Valid, out.Metrics, roles = true, m, r
			out.Roles = r
		}
	}
	out.Reasons = reasons
	fields := newMultiNodeFields(out.Valid, out.Metrics, roles)

	bw := null()
	if window != nil {
		bw = object().
			set("start_time_unix", float(window.Start)).
			set("end_time_unix", float(window.End)).
			set("integration_duration_s", float(window.End-window.Start)).
			set("completed", integer(window.Completed)).
			set("total_input_tokens", integer(window.TotalInputTokens)).
			set("total_output_tokens", integer(window.TotalOutputTokens))
	}
	metrics := object()
	if out.Valid {
		for _, nm := range append(out.Metrics.named(), roles.named()...) {
			metrics.set(nm.key, float(round(nm.v, 6)))
		}
	}
	payload := object().
		set("schema_version", integer(1)).
		set("power_valid", boolean(out.Valid)).
		set("reasons", strList(reasons)).
		set("benchmark_window", bw).
		set("integration_method", str(IntegrationMethod)).
		set("prefill_gpus", integer(int64(o.PrefillGPUs))).
		set("decode_gpus", integer(int64(o.DecodeGPUs))).
		set("expected_gpu_count", integer(int64(o.PrefillGPUs+o.DecodeGPUs))).
		set("observed_gpu_count", integer(int64(observed))).
		set("nodes", nodes).
		set("per_gpu_role", perRole).
		set("per_gpu_max_sample_gap_s", perGap).
		set("per_gpu_energy_j", perEnergy).
		set("metrics", metrics)
	validationPath := filepath.Join(o.ResultDir, ValidationFile)
	if err := atomicfile.Write(validationPath, dumps(payload), 0o644); err != nil {
		fmt.Fprintf(o.Stderr, "[aggregate_power_multinode] Failed to write validation artifact %s: %v\n", validationPath, err)
		if o.RequirePower {
			out.ExitCode = 1
		}
		return fields, out
	}
	if !out.Valid {
		fmt.Fprintf(o.Stderr, "[aggregate_power_multinode] Power validation failed: %s (details: %s)\n", strings.Join(reasons, ", "), validationPath)
		if o.RequirePower {
			out.ExitCode = 1
		}
		return fields, out
	}
	m := out.Metrics
	fmt.Fprintf(o.Stdout, "[aggregate_power_multinode] avg_power_w=%.2f total_gpu_energy_j=%.2f prefill_gpu_energy_j=%.2f decode_gpu_energy_j=%.2f (n=%d)\n",
		m.AvgPowerW, m.TotalGPUEnergyJ, deref(roles.PrefillGPUEnergyJ), deref(roles.DecodeGPUEnergyJ), o.PrefillGPUs+o.DecodeGPUs)
	return fields, out
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// newMultiNodeFields rounds the whole and role metrics as the multi-node
// patch does (3 decimals for keys ending _w or _j, else 6).
func newMultiNodeFields(valid bool, m *Metrics, r *RoleMetrics) *Fields {
	f, err := NewFields(valid, m)
	if err != nil { // SumNodes' metrics were checked finite
		return &Fields{SchemaVersion: SchemaVersion}
	}
	if !valid || r == nil {
		return f
	}
	dst := map[string]**pyjson.Float{
		"prefill_gpu_energy_j": &f.PrefillGPUEnergyJ, "prefill_avg_power_w": &f.PrefillAvgPowerW,
		"prefill_joules_per_input_token": &f.PrefillJoulesPerInputToken,
		"decode_gpu_energy_j":            &f.DecodeGPUEnergyJ, "decode_avg_power_w": &f.DecodeAvgPowerW,
		"decode_joules_per_output_token": &f.DecodeJoulesPerOutputToken,
	}
	for _, nm := range r.named() {
		v := pyjson.Float(round(nm.v, precisionOf(nm.key)))
		*dst[nm.key] = &v
	}
	return f
}
