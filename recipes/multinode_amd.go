package recipes

import (
	"fmt"
	"strconv"
	"strings"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/recipes/schema"
)

// AMD disaggregated points follow launch_mi355x-amds.sh's multi-node branch
// at LauncherCommit: the agentic recipe
// benchmarks/multi_node/agentic/<model>_<precision>_mi355x_<framework>.sh
// calls amd_utils/submit.sh, which submits amd_utils/job.slurm with sbatch
// on PREFILL_NODES+DECODE_NODES nodes; job.slurm starts one container per
// node, server_sglang.sh starts the prefill and decode workers (port 8000)
// and the sglang_router (port 30000) on the first prefill node, and the
// trace-replay client runs on node 0 against the router.
const (
	amdWorkerPort = 8000
	amdRouterPort = 30000
	// amdModelDir is the launcher's MODEL_PATH (weights under
	// <dir>/<model name>).
	amdModelDir  = "/it-share/data"
	amdIBDevices = "rdma0,rdma1,rdma2,rdma3,rdma4,rdma5,rdma6,rdma7"
	amdJobScript = "benchmarks/multi_node/amd_utils/job.slurm"
)

// amdDisaggModel is the agentic entry (<model>-AgentX) of amd_utils/models.yaml:
// the flags server_sglang.sh gives both workers, and the per-role ones.
type amdDisaggModel struct {
	base         func(b *schema.Builder)
	dp, ep       func(b *schema.Builder)
	mtp          func(b *schema.Builder)
	memFraction  float64
	contextLen   int64
	hicacheRatio float64
}

var amdDisaggModels = map[string]amdDisaggModel{
	"deepseek-ai/DeepSeek-V4-Pro": {
		base: func(b *schema.Builder) {
			b.Int("--watchdog-timeout", 3600).String("--load-balance-method", "round_robin").
				String("--kv-cache-dtype", "fp8_e4m3").String("--attention-backend", "dsv4").Int("--page-size", 256).
				Float("--swa-full-tokens-ratio", 0.1).Bool("--disable-shared-experts-fusion", true).
				String("--tool-call-parser", "deepseekv4").String("--reasoning-parser", "deepseek-v4").
				String("--log-level", "info").String("--log-level-http", "error")
		},
		dp: func(b *schema.Builder) { b.Bool("--enable-dp-attention", true).Bool("--enable-prefill-delayer", true) },
		ep: func(b *schema.Builder) { b.String("--moe-a2a-backend", "mori").String("--deepep-mode", "normal") },
		mtp: func(b *schema.Builder) {
			b.String("--speculative-algorithm", "EAGLE").Int("--speculative-eagle-topk", 1)
		},
		// models.yaml prefill/decode mem_fraction_static and context_length;
		// the agentic recipe's HICACHE_RATIO.
		memFraction: 0.85, contextLen: 1048576, hicacheRatio: 3,
	},
}

// sglangVersion reads the SGLang version from an image tag
// ("lmsysorg/sglang-rocm:v0.5.17-rocm720-mi35x-20260817" → "v0.5.17").
func sglangVersion(image string) string {
	_, tag, ok := strings.Cut(image, ":")
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(tag, "-")
	return v
}

func (o *planConfig) planAMDDisagg(p *MultiNodePoint, runner string) error {
	r := &p.Row
	if p.Launcher != "mi355x-amds" {
		return notSupported("framework %s runs through launch_mi355x-amds.sh's multi-node branch; runner %s has no such branch", r.Framework, runner)
	}
	if r.Framework.Facts().Workers == "" {
		return notSupported("framework %s: sweep builds the SGLang disaggregated workers only (server_sglang.sh), not server_%s.sh", r.Framework, strings.TrimSuffix(string(r.Framework), "-disagg"))
	}
	model, ok := amdDisaggModels[r.Model]
	if !ok {
		return notSupported("model %s has no <model>-AgentX entry sweep knows from amd_utils/models.yaml", r.Model)
	}
	prof, err := ProfileFor(runner)
	if err != nil {
		return err
	}
	pre, dec := settings(r.Prefill), settings(r.Decode)
	preNodes, err := intSetting(pre, "PREFILL_NODES")
	if err != nil {
		return fmt.Errorf("prefill: %w", err)
	}
	decNodes, err := intSetting(dec, "DECODE_NODES")
	if err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	mtp := 0
	if v, ok := dec["DECODE_MTP_SIZE"]; ok {
		if mtp, err = strconv.Atoi(v); err != nil || mtp < 0 {
			return fmt.Errorf("decode: additional-settings DECODE_MTP_SIZE=%q: want an integer >= 0", v)
		}
	}
	ver := sglangVersion(r.Image)
	s, err := schema.Load(string(r.Framework.Facts().Workers), ver)
	if err != nil {
		return fmt.Errorf("image %s: %w", r.Image, err)
	}
	modelName := r.Model[strings.LastIndex(r.Model, "/")+1:]
	gpn := prof.GPUsPerNode
	worker := func(role Role, w *configs.Parallelism, workers, nodes int) (RolePlan, error) {
		if nodes%workers != 0 {
			return RolePlan{}, fmt.Errorf("%s: %d node(s) do not split into %d worker(s)", role, nodes, workers)
		}
		// submit.sh: <ROLE>_TP_SIZE = nodes × tp / workers.
		tp := nodes * w.TP / workers
		b := s.NewBuilder()
		b.String("--model-path", amdModelDir+"/"+modelName).String("--disaggregation-mode", string(role)).
			String("--disaggregation-ib-device", amdIBDevices).String("--host", "0.0.0.0").Int("--port", amdWorkerPort).
			Int("--tp-size", int64(tp))
		if w.EP > 1 {
			b.Int("--ep-size", int64(tp))
		}
		if w.DPAttn {
			b.Int("--dp-size", int64(tp))
		}
		model.base(b)
		b.String("--disaggregation-transfer-backend", r.KVP2PTransfer)
		if w.DPAttn {
			model.dp(b)
		}
		if w.EP > 1 {
			model.ep(b)
		}
		b.Float("--mem-fraction-static", model.memFraction)
		if role == RolePrefill {
			b.Bool("--disable-cuda-graph", true).Int("--context-length", model.contextLen)
		}
		if role == RoleDecode && mtp > 0 {
			model.mtp(b)
			b.Int("--speculative-num-steps", int64(mtp)).Int("--speculative-num-draft-tokens", int64(mtp+1))
		}
		if r.KVOffloading != "none" && r.KVOffloadBackend != nil && r.KVOffloadBackend.Name == "hicache" {
			// server_sglang.sh's HiCache flags with the agentic recipe's
			// values; its --page-size equals the model's (256) already set.
			b.Bool("--enable-hierarchical-cache", true).Float("--hicache-ratio", model.hicacheRatio).
				String("--hicache-io-backend", "direct").String("--hicache-mem-layout", "page_first").
				String("--hicache-write-policy", "write_through").String("--hicache-storage-prefetch-policy", "best_effort")
		}
		// The agentic recipe exports ENABLE_METRICS=1 (its default), so
		// server_sglang.sh appends --enable-metrics for the client to scrape
		// every worker.
		b.Bool("--enable-metrics", true)
		perWorker := nodes / workers
		if perWorker > 1 {
			b.String("--dist-init-addr", "${"+strings.ToUpper(string(role))+"_HEAD_ADDR}").Int("--nnodes", int64(perWorker)).
				String("--node-rank", "${NODE_RANK}")
		}
		argv, err := b.Argv()
		if err != nil {
			return RolePlan{}, fmt.Errorf("%s worker: %w", role, err)
		}
		p.Escapes = append(p.Escapes, b.Escapes()...)
		par := *w
		par.TP = tp
		return RolePlan{
			Role: role, Workers: workers, NodesPerWorker: perWorker, Nodes: nodes, GPUsPerNode: gpn, GPUs: nodes * gpn, Parallelism: &par,
			Command: &Command{Argv: append(strings.Fields(s.Program), argv...), Env: map[string]string{
				"MORI_IO_SQ_BACKOFF_TIMEOUT_US": "500000", "MORI_IO_QP_MAX_SEND_WR": "32768"}},
		}, nil
	}
	prefill, err := worker(RolePrefill, &r.Prefill.Parallelism, r.Prefill.NumWorker, preNodes)
	if err != nil {
		return err
	}
	decode, err := worker(RoleDecode, &r.Decode.Parallelism, r.Decode.NumWorker, decNodes)
	if err != nil {
		return err
	}
	routerArgv := []string{"python", "-m", "sglang_router.launch_router", "--pd-disaggregation", "--port", strconv.Itoa(amdRouterPort),
		// server_sglang.sh's agentic router: the recipe's PREFILL_ROUTER_POLICY,
		// DP-aware, cache thresholds, and a relaxed health check instead of
		// the circuit breaker.
		"--policy", "consistent_hashing", "--dp-aware", "--cache-threshold", "0.3",
		"--balance-abs-threshold", "2", "--balance-rel-threshold", "1.1",
		"--disable-circuit-breaker", "--health-failure-threshold", "100",
		"--health-check-timeout-secs", "600", "--health-check-interval-secs", "30"}
	for i := range prefill.Workers {
		routerArgv = append(routerArgv, "--prefill", fmt.Sprintf("http://${PREFILL_%d_ADDR}:%d", i, amdWorkerPort))
	}
	for i := range decode.Workers {
		routerArgv = append(routerArgv, "--decode", fmt.Sprintf("http://${DECODE_%d_ADDR}:%d", i, amdWorkerPort))
	}
	p.Escapes = append(p.Escapes, schema.Escape{Flag: "sglang_router.launch_router", Values: routerArgv[3:], Reason: "no sglang_router schema yet"})
	client := amdClient(r, pre)
	p.Roles = []RolePlan{prefill, decode,
		{Role: RoleRouter, Workers: 1, Placement: "node 0 (first prefill node)", Command: &Command{Argv: routerArgv}},
		client}
	p.Submitter = "sbatch"
	p.Submit = amdSbatch(p, runner, preNodes+decNodes)
	p.Files = map[string]string{amdJobScript: "InferenceX's per-node job script (one container per node; roles by node rank)"}
	return nil
}

// amdClient is the AMD client role: the trace replay in CLIENT_IMAGE (the
// prefill worker's setting) on node 0, against the router.
func amdClient(r *matrix.Row, pre map[string]string) RolePlan {
	img := pre["CLIENT_IMAGE"]
	if img == "" {
		img = r.Image
	}
	return RolePlan{Role: RoleClient, Workers: 1, Placement: "node 0, image " + img, RenderedBy: "amd_utils/trace_replay.sh: aiperf against http://${NODE0_ADDR}:" + strconv.Itoa(amdRouterPort)}
}

// amdSbatch is submit.sh's sbatch command and the environment it exports
// into job.slurm (sbatch --export=ALL carries it). Node excludes come from
// amd_utils/node_excludes.yaml, whose only rule (vllm-disagg, Kimi-K2.5)
// matches no agentic key.
func amdSbatch(p *MultiNodePoint, runner string, nodes int) *HostCommand {
	r := &p.Row
	n := strconv.Itoa(nodes)
	logs := "${BENCHMARK_LOGS_DIR}"
	concs := make([]string, len(r.Concs))
	for i, c := range r.Concs {
		concs[i] = strconv.Itoa(c)
	}
	pre, dec := p.Roles[0], p.Roles[1]
	env := map[string]string{
		"ENGINE": string(r.Framework), "FRAMEWORK": string(r.Framework), "MODEL_DIR": amdModelDir, "MODEL_NAME": r.Model[strings.LastIndex(r.Model, "/")+1:],
		"DOCKER_IMAGE_NAME": r.Image, "NUM_NODES": n, "GPUS_PER_NODE": strconv.Itoa(pre.GPUsPerNode),
		"xP": strconv.Itoa(pre.Workers), "yD": strconv.Itoa(dec.Workers),
		"PREFILL_TP_SIZE": strconv.Itoa(pre.Parallelism.TP), "DECODE_TP_SIZE": strconv.Itoa(dec.Parallelism.TP),
		"PREFILL_ENABLE_EP": strconv.FormatBool(r.Prefill.EP > 1), "PREFILL_ENABLE_DP": strconv.FormatBool(r.Prefill.DPAttn),
		"DECODE_ENABLE_EP": strconv.FormatBool(r.Decode.EP > 1), "DECODE_ENABLE_DP": strconv.FormatBool(r.Decode.DPAttn),
		"BENCH_MAX_CONCURRENCY": strings.Join(concs, "x"), "IS_AGENTIC": "1", "IS_MULTINODE": "true",
		"KV_OFFLOADING": r.KVOffloading, "KV_P2P_TRANSFER": r.KVP2PTransfer, "DURATION": strconv.Itoa(r.Duration),
		"TOTAL_CPU_DRAM_GB": strconv.Itoa(r.TotalCPUDRAMGB), "RESULT_FILENAME": p.ResultFilename, "SPEC_DECODING": r.SpecDecoding,
	}
	return &HostCommand{Role: "submit", Env: env, Argv: []string{"sbatch", "--parsable", "--exclusive", "-N", n, "-n", n,
		"--time", "08:00:00", "--partition", "compute", "--account", "${USER}", "--job-name", runner,
		"--output", logs + "/slurm_job-%j.out", "--error", logs + "/slurm_job-%j.err", amdJobScript}}
}
