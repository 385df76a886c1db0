// Package recipes turns matrix rows into the exact commands a benchmark
// point runs: the engine (SGLang or vLLM), the router in front of a
// DP-attention engine, helper processes (LMCache servers), and the client
// (aiperf trace replay, or lm-eval on eval-only rows). It replaces
// InferenceX's Bash recipes (benchmarks/single_node/agentic/*_mtp.sh with
// benchmark_lib.sh) by typed, declarative recipes whose every command is
// built through the versioned flag schemas of recipes/schema, so a flag the
// tool does not have is a plan-time error that names the recipe, the flag
// and the closest real flag. A sidecar's command (an LMCache server's) is
// checked against its program's schema at plan time the same way (role
// "sidecar NAME"; a program without one, mooncake_master, is not).
//
// Call sequence:
//
//	rows, err := (&sweep.Generator{Masters: m, Runners: r}).TestConfig(opts) // matrix rows
//	points, err := recipes.Plan(rows, recipes.PlanOptions{Catalog: models.Builtin()}) // defaults: port 8888, aiperf 0.12.0
//	if pe, ok := errors.AsType[*recipes.PlanError](err); ok {
//		for _, p := range pe.Problems { fmt.Println(p) } // every offending point
//	}
//	_ = recipes.WriteText(os.Stdout, points) // or json.Marshal(points)
//	// points[i].Engine.Argv, .Env, .Router, .Client, .Eval, .MetricsURLs, .GoldenAL, ...
//
// # Recipes
//
// A Recipe (one file per recipe in sweep/recipes/models, named after the
// InferenceX script it replaces) is a value: model-independent settings (engine and schema
// version, environment, parsers, flags in InferenceX order) and small sizing
// rules of the row (TwiceConc, ConcCapped(64), mem fraction by TP, ...).
// Behaviour shared by recipes lives once, expanded where a recipe places the
// group flags:
//
//   - ParallelArgs: TP/EP/TEP/DEP per engine (SGLang --tp-size/--dp-size/
//     --ep-size, DP attention with --enable-dp-attention; vLLM TP/DP and
//     --enable-expert-parallel). DP-attention rows move the engine to
//     PORT+1 behind a router on PORT (sglang_router or vllm-router, metrics
//     on PORT+10000) with the aiperf session-key header setting.
//   - SpecArgs and synthetic acceptance: SGLang gets SGLANG_SIMULATE_ACC_*
//     at the golden AL; vLLM gets rejection_sample_method "synthetic" and
//     synthetic_acceptance_length inside --speculative-config (a typed
//     struct). Eval-only rows run real acceptance. The golden AL is looked
//     up in configs/golden-al (file, model, thinking mode, number of
//     speculative tokens), never written into a recipe.
//   - OffloadArgs: KV offload sized from the row's total-cpu-dram-gb
//     (HiCache by ratio or by size, vLLM simple CPU offload, LMCache
//     shards). A backend a recipe does not list is a plan error.
//   - ArgGroup: a named run of flags sibling recipes pass in the same
//     order, expanded in place so argv is unchanged and each recipe lists
//     only what differs. Each family keeps its groups in a file named for
//     it: qwen35_sglang_args.go (parser/speculation/metrics tail, AMD
//     scheduler sizing, cache dtypes), minimaxm3_vllm_args.go (parsers,
//     ROCm serving), dsv4_vllm_args.go and dsv4_sglang_args.go (the
//     Blackwell pairs' shared runs), glm52_sglang_args.go (parsers, tail).
//     Recipes that pass the same flags in another order spell them out.
//   - The aiperf replay command (InferenceX's flag set: fast 1200 s / 1
//     warm-up per lane vs official duration / 10, --unsafe-override below
//     900 s, --server-metrics, required metric prefix) and the lm-eval
//     command of eval-only rows.
//   - Environment: the workflow's and benchmark_lib's exports, ROCm
//     HIP_VISIBLE_DEVICES from ROCR_VISIBLE_DEVICES (Command.EnvFrom), the
//     recipe's own (AITER switches and the like), MAX_MODEL_LEN unset.
//
// Routing follows InferenceX's launchers: the runner-name prefix picks the
// launcher, and <model-prefix>_<precision>_<gpu>[_<framework>][_mtp] picks
// the script. MI325X, MI300X and H100 omit the framework; MI355X, B300,
// H200 and B200 try the framework name first and fall back to the name
// without it. A row whose script name has no recipe fails at plan time. The
// runner's Profile adds what its launcher does beyond the recipe: the
// container and mounts, the Slurm allocation, site variables, how the
// launcher allocates, imports and runs the image (Profile.Launch, turned
// into host commands by sweep/launch), and the MODEL_PATH of pre-staged
// weights (B200 also sets MODEL to that path, so
// the served name, tokenizer and client model are the path; B300 keeps the
// id).
//
// Rows sweep does not plan fail with ErrNotSupported, one problem per key:
// other engines (ATOM, TRT-LLM) and keys routed to a script InferenceX
// removed. Plan takes single-node rows only; multi-node and disaggregated
// rows (IsMultiNodeRow: Dynamo, srt-slurm, *-disagg) are planned by
// PlanMultiNode as InferenceX's multi-node launchers submit them: the AMD
// sglang-disagg path (submit.sh's sbatch of job.slurm; prefill and decode
// workers built with the SGLang schema, the PD router) and the NVIDIA
// srt-slurm path (the srt-slurm ref and recipe each launcher selects, the
// srtctl apply argv; srtctl renders those workers' commands). Coverage
// reports every key's status.
//
// Other engines: a new engine (AMD's ATOM, TRT-LLM) needs an Engine
// constant, a schema, and a case in the three shared switches
// (parallelArgs, specArgs, routerCommand) plus its synthetic-acceptance
// mechanism (ATOM --spec-decode-acceptance-length AL; TRT-LLM
// TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS = AL-1). Routing already
// produces the ATOM names (<...>_mi355x_atom[_mtp]); nothing in Recipe is
// specific to SGLang or vLLM.
//
// # aiperf 0.12.0 deviations
//
// InferenceX drives a fork of aiperf (schema aiperf@sa-754356e9). Plans
// target upstream aiperf 0.12.0 unless PlanOptions.AiperfVersion names the
// fork, and every 0.12.0 client command parses with the 0.12.0 schema. The
// only differences from InferenceX's command:
//
//	InferenceX (fork)                  aiperf 0.12.0                      why
//	---------------------------------  ---------------------------------  -------------------------------------------
//	--warmup-requests-per-lane N       --warmup-request-count N×conc      fork-only flag; upstream counts warm-up
//	  (10; 1 with agentx-fast)                                            requests in total, so N per lane × conc
//	                                                                      lanes keeps the same amount of warm-up
//	--trace-idle-gap-cap-seconds 300   (dropped)                          0.12.0's inferencex-agentx-mvp scenario
//	                                                                      forbids it; upstream replays per-trace
//	                                                                      idle gaps in full and caps only globally
//	                                                                      idle time (10 s)
//
// Both are decided from the schema (the flag exists; the scenario forbids
// it), so a schema that gains the flags gets InferenceX's command back. The
// AIPERF_* environment InferenceX exports is passed unchanged; settings
// upstream does not read are ignored by it.
//
// # Not modelled
//
// In-container steps of some scripts are not planned: package installs
// (lm-eval, vllm-router, LMCache and Mooncake wheels), model and draft
// downloads and checkpoint-completeness checks, engine patches (Kimi K3
// container patches, the H100/H200 multi_tokenizer_mixin edit), the DSv4
// vLLM 180 s sleep, firmware and RDMA-rail probes (the Kimi-K3 B300
// Mooncake device_name is the placeholder ${MOONCAKE_RAIL}), TRITON_PTXAS_PATH
// discovery, and GPU-clean waits (the point runner has its own). The
// Mooncake master has no
// readiness endpoint, so real runs of Mooncake rows are refused (simulated
// runs skip sidecars).
// Launcher site paths (HF cache mounts, the MI355X aiperf mmap cache,
// VLLM_CACHE_ROOT) are not part of Command.Env: they reach the engine and
// the client through the launch (sweep/launch: the launcher's exports and
// srun --export=ALL,...), as in InferenceX. The client environment is
// ClientEnv: InferenceX's per-job aiperf venv made with uv from the
// checkout's utils/aiperf and the trace-set download with hf, as typed
// SetupSteps (Point.ClientSetup) that the launched point runs in the
// container and skips when their work is there; or an installed aiperf
// with the download only. Router and lm-eval argvs
// have no schema yet; plans list them as escapes, as they do engine flags
// a partial schema lacks (Arg.Unverified).
package recipes
