// Package power is InferenceX's GPU power lane for single-node agentic
// results (utils/agentic/aggregation/power_adapter.py and
// utils/aggregate_power.py at commit 843c6254f): the benchmark window from
// aiperf's artifacts, per-GPU trapezoidal integration of the monitor's
// gpu_metrics.csv over it, the energy-counter cross-check, the patch of the
// aggregate result and the two sidecars.
//
//	out := power.Adapt(power.Options{
//		ResultDir:    dir,                        // aiperf_artifacts/, gpu_metrics.csv, agentic_power_timezone_offset.txt
//		Aggregate:    power.FilePatcher(aggPath), // patched in place, atomically
//		ExpectedGPUs: &n,                         // TP*PP*PCP
//		RequirePower: require,                    // out.ExitCode 1 when invalid
//	})
//	// dir/agentic_power_window.json, dir/power_validation.json written;
//	// out.Valid, out.Reasons, out.Metrics (unrounded)
//	fields, out := power.AdaptResult(opts)     // a result in memory: res.Fields = fields
//	j := power.JoulesPerOutputTokenOf(fields)  // readers: nil unless valid, schema 2
//
// Fidelity: the reason codes, their order, the aggregate's keys (order,
// rounding to 3 or 6 decimals), both sidecars (json.dumps(indent=2) byte for
// byte on every conformance case), the messages and the exit status are
// InferenceX's. As there, zone-less telemetry timestamps (nvidia-smi's) are
// read in the process's zone (Options.Zone, default time.Local) while aiperf's
// naive times use the captured offset file. Where InferenceX's Python would
// crash with a traceback (an aggregate that is a JSON list, a records line
// that is not an object) Adapt records a reason instead; Python's NaN and
// Infinity literals in an aggregate are refused as not JSON; ISO times are
// the forms aiperf and SMI tools write (YYYY-MM-DD[Thh[:mm[:ss[.f]]]][zone]),
// not every form fromisoformat accepts. The conformance cases are in
// testdata (see its README).
//
// A disaggregated point's power (AdaptMultiNode) sums its nodes as
// InferenceX's multi-node path does (utils/aggregate_power_multinode.py):
// each node's worker GPUs integrated over the one window, the sums per role
// and for the deployment, and the per-role keys (prefill_gpu_energy_j,
// decode_avg_power_w, ...). That path reads srt-slurm's DCGM artifact
// package; here each node has a monitor of its own, read as above (see
// multinode.go).
//
//	fields, out := power.AdaptMultiNode(power.MultiNodeOptions{ResultDir: dir,
//		Nodes: []power.NodeTelemetry{{Name: "prefill0", Role: power.RolePrefill, Dir: d0, GPUs: 8}, ...},
//		PrefillGPUs: 8, DecodeGPUs: 8})
package power
