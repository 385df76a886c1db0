package recipes

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/recipes/schema"
)

// Role is what one process group of a multi-node point does.
type Role string

// Multi-node roles.
const (
	// RolePrefill workers run prompt processing and hand the KV cache to
	// the decode workers (disaggregated serving).
	RolePrefill Role = "prefill"
	// RoleDecode workers generate tokens from the transferred KV cache.
	RoleDecode Role = "decode"
	// RoleWorker workers serve both phases (aggregated multi-node serving).
	RoleWorker Role = "worker"
	// RoleRouter is the router or frontend the client talks to.
	RoleRouter Role = "router"
	// RoleClient is the benchmark client (aiperf trace replay).
	RoleClient Role = "client"
)

// RolePlan is one role of a multi-node point: how many workers, the nodes
// each spans, the GPUs it uses on each, and its command. Command is nil
// when another tool renders it from a recipe file (RenderedBy says which).
type RolePlan struct {
	Role Role `json:"role"`
	// Workers is the number of engine instances (1 for router and client).
	Workers int `json:"workers"`
	// NodesPerWorker is how many nodes one worker spans (1 when workers
	// smaller than a node share nodes); Nodes is the role's node count
	// (router and client share a worker's node: 0).
	NodesPerWorker int `json:"nodes_per_worker"`
	Nodes          int `json:"nodes"`
	// GPUsPerNode is the GPUs the role uses on each of its nodes; GPUs is
	// the role's total (0 for router and client).
	GPUsPerNode int `json:"gpus_per_node"`
	GPUs        int `json:"gpus"`
	// Parallelism is one worker's layout (TP is the worker's total).
	Parallelism *configs.Parallelism `json:"parallelism,omitempty"`
	// Placement says where a router or client runs ("node 0").
	Placement  string   `json:"placement,omitempty"`
	Command    *Command `json:"command,omitempty"`
	RenderedBy string   `json:"rendered_by,omitempty"`
}

// SrtSlurmSource is the srt-slurm checkout an NVIDIA launcher submits a
// recipe with: the repository, the ref it checks out, and the InferenceX
// recipe directory it copies over the checkout's recipes/.
type SrtSlurmSource struct {
	Repo    string `json:"repo"`
	Ref     string `json:"ref"`
	Overlay string `json:"overlay,omitempty"`
}

// MultiNodePoint is one planned multi-node agentic point: the launcher that
// submits it, its roles, and how it is submitted.
type MultiNodePoint struct {
	Row matrix.Row `json:"-"`
	// Launcher is the InferenceX launcher (runners/launch_<name>.sh).
	Launcher string `json:"launcher"`
	// Submitter is "sbatch" (AMD: amd_utils/submit.sh → job.slurm) or
	// "srtctl" (NVIDIA: srt-slurm renders and submits the recipe).
	Submitter string `json:"submitter"`
	Disagg    bool   `json:"disagg"`
	// KVTransfer is the prefill→decode KV transfer backend ("" aggregated).
	KVTransfer string `json:"kv_transfer,omitempty"`
	// Nodes is the workers' node count (the job's on AMD); GPUs the
	// workers' GPUs. On srt-slurm points the recipe file, which sweep does
	// not read, can ask srtctl for more: a dedicated etcd/NATS node
	// (infra.etcd_nats_dedicated_node) or one node per worker
	// (resources.spread_workers).
	Nodes int        `json:"nodes"`
	GPUs  int        `json:"gpus"`
	Roles []RolePlan `json:"roles"`
	// Recipe is the srt-slurm recipe file (CONFIG_FILE) on NVIDIA points.
	Recipe   string          `json:"recipe,omitempty"`
	SrtSlurm *SrtSlurmSource `json:"srt_slurm,omitempty"`
	// Submit is the submission command as the launcher runs it, Files the
	// files it submits (path → what it is).
	Submit *HostCommand      `json:"submit"`
	Files  map[string]string `json:"files,omitempty"`
	// ResultFilename is InferenceX's multi-node RESULT_FILENAME; the
	// per-concurrency results are <ResultFilename>_conc<N>.json.
	ResultFilename string          `json:"result_filename"`
	Escapes        []schema.Escape `json:"escapes,omitempty"`
}

// MarshalJSON writes the point with its row's InferenceX JSON and key.
func (p MultiNodePoint) MarshalJSON() ([]byte, error) {
	type plain MultiNodePoint
	return json.Marshal(struct {
		Row       *matrix.Row `json:"row"`
		ConfigKey string      `json:"config_key,omitempty"`
		plain
	}{&p.Row, p.Row.ConfigKey, plain(p)})
}

// IsMultiNodeRow reports whether a row is planned by PlanMultiNode.
func IsMultiNodeRow(r *matrix.Row) bool {
	return r.Kind.MultiNode() || r.Disagg || r.Framework.Disaggregated()
}

// MixedNodesError is a selection of single-node and multi-node rows,
// named by a config key of each: their plans have different shapes.
type MixedNodesError struct{ Single, Multi string }

func (e *MixedNodesError) Error() string {
	return fmt.Sprintf("--config-keys selects single-node (%s) and multi-node (%s) keys; plan them separately", e.Single, e.Multi)
}

// MultiNodeRows reports whether rows are planned by PlanMultiNode
// (IsMultiNodeRow) rather than Plan; a mix is a *MixedNodesError.
func MultiNodeRows(rows matrix.Matrix) (bool, error) {
	multi := slices.IndexFunc(rows, IsMultiNodeRow)
	if multi < 0 {
		return false, nil
	}
	if single := slices.IndexFunc(rows, func(r *matrix.Row) bool { return !IsMultiNodeRow(r) }); single >= 0 {
		return true, &MixedNodesError{Single: rows[single].ConfigKey, Multi: rows[multi].ConfigKey}
	}
	return true, nil
}

// MultiNodeResultFilename is RESULT_FILENAME of InferenceX's multi-node
// workflow (benchmark-multinode-tmpl.yml): the exp name, precision and
// framework, both workers' layouts, disagg, spec and the concurrencies.
func MultiNodeResultFilename(r *matrix.Row, runner string) string {
	w := func(name string, x *matrix.Worker) string {
		return fmt.Sprintf("%s-tp%d-pp%d-dcp%d-pcp%d-ep%d-dp%t-nw%d", name, x.TP, max(x.PP, 1), max(x.DCPSize, 1), max(x.PCPSize, 1), x.EP, x.DPAttn, x.NumWorker)
	}
	concs := make([]string, len(r.Concs))
	for i, c := range r.Concs {
		concs[i] = strconv.Itoa(c)
	}
	s := fmt.Sprintf("%s_%s_%s_%s_%s_disagg-%t_spec-%s_conc%s_%s", r.ExpName, r.Precision, r.Framework,
		w("prefill", r.Prefill), w("decode", r.Decode), r.Disagg, r.SpecDecoding, strings.Join(concs, "x"), runner)
	if fp := r.RecipeFingerprint; fp != "" {
		s += "_recipe-" + fp[:min(16, len(fp))]
	}
	return s
}

// settings reads a worker's KEY=VALUE additional settings.
func settings(w *matrix.Worker) map[string]string {
	out := map[string]string{}
	if w == nil {
		return out
	}
	for _, kv := range w.AdditionalSettings {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}

func intSetting(set map[string]string, key string) (int, error) {
	v, ok := set[key]
	if !ok {
		return 0, fmt.Errorf("additional-settings has no %s (the launcher needs it)", key)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("additional-settings %s=%q: want a positive integer", key, v)
	}
	return n, nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// LocalMultiNode is a disaggregated multi-node point laid out on one host,
// as `sweep run --simulate` runs it: each prefill and decode worker of the
// job on a loopback port of its own, the router in front of them, and the
// trace-replay client against the router. The workers' and the router's
// argv are the multi-node plan's (MultiNodePoint), with the per-node
// addresses and ports of job.slurm replaced by loopback ones.
type LocalMultiNode struct {
	Point MultiNodePoint
	// Conc is the concurrency the client runs.
	Conc int
	// Workers are the prefill workers, then the decode workers.
	Workers []LocalWorker
	Router  Command
	// RouterHost is the address the router (and the client beside it)
	// runs at: "localhost" on one host, the first node's address when
	// the roles run on several nodes (PlanMultiNodeOnHosts).
	RouterHost string
	// RouterHealthURL is the router's readiness endpoint.
	RouterHealthURL string
	// Client is the aiperf trace replay against the router (InferenceX's
	// build_replay_cmd settings, as for single-node points).
	Client Command
	// MetricsURLs are every worker's Prometheus endpoint (prefill first),
	// which the client records as server metrics.
	MetricsURLs []string
	// RequiredMetricPrefix must appear in the recorded server metrics.
	RequiredMetricPrefix string
	// ResultDir holds the logs, command files and aiperf_artifacts/;
	// ResultFilename is InferenceX's per-concurrency multi-node result
	// name, <RESULT_FILENAME>_conc<N>.
	ResultDir, ResultFilename string
	Escapes                   []schema.Escape

	// How it was planned, for OnHosts.
	row   *matrix.Row
	opts  PlanOptions
	ports []int
}

// LocalWorker is one engine of a LocalMultiNode.
type LocalWorker struct {
	// Name is the role and index ("prefill0", "decode1"): the process's
	// name, its log (<Name>.log) and command file (<Name>_command.txt).
	Name    string
	Role    Role
	Command Command
	// Host is the address the worker listens at ("127.0.0.1" on one host).
	Host string
	// HealthURL and MetricsURL are on the worker's own host and port.
	HealthURL, MetricsURL string
}

// CommandFile is where the worker's command is recorded.
func (w LocalWorker) CommandFile() string { return w.Name + "_command.txt" }
