// Package simengine is a simulated LLM inference engine that speaks the
// HTTP API of SGLang or vLLM, so a benchmark point runs end to end on a
// laptop: the real recipe argv starts it, readiness, load, /metrics
// scraping and acceptance-length checks behave as against a real server.
//
// Call sequence:
//
//	cmd, err := simengine.ParseCommand(argv, simengine.ParseOptions{}) // with the engine's flag schema
//	cfg, err := simengine.ConfigFromArgs(cmd.Engine, cmd.Flags, env)
//	cfg.TimeScale = 60 // a 20-minute point in 20 s
//	srv, err := simengine.New(cfg, simengine.Options{Log: serverLog})
//	err = srv.Run(ctx) // loads, listens, warms up, serves until ctx is done
//
// What it serves: POST /v1/chat/completions and /v1/completions (SSE
// streaming or not), GET /v1/models, /health (the port is closed while
// "loading"; SGLang answers 503 during warm-up), /metrics with the
// engines' own metric names, labels and update semantics, and the cache
// resets (SGLang /flush_cache, vLLM /reset_prefix_cache), plus SGLang's
// /get_server_info and vLLM's /ping and /version.
//
// The capacity model: each DP rank runs a step-based continuous-batching
// scheduler. A step's duration is a fixed part (weights, collectives;
// smaller with more TP, plus all-to-all with EP), a part per sequence and
// a part per context token (KV reads over the attention GPUs); prefill
// costs per uncached prompt token. The KV pool comes from GPU memory ×
// memory fraction − weights; a prefix cache over prompt blocks makes
// multi-turn sessions hit. Past the pool's capacity requests queue,
// usage sits at 1.0, cached prefixes are evicted and the hit rate
// collapses: the throughput cliff past the knee. Speculative decoding
// draws accepted drafts per verify step so that the mean tokens per step
// equals the synthetic acceptance length (SGLANG_SIMULATE_ACC_LEN, vLLM
// synthetic_acceptance_length), which the engines' counters then report.
//
// Time: every simulated duration is divided by Config.TimeScale on the
// wall clock; metrics (histograms, throughput gauges) report simulated
// seconds, and every response carries X-Sim-Time-Scale so clients can
// convert their wall-clock measurements.
//
// Faults for tests (Config.Faults, env SWEEP_SIM_FAULT): never-ready,
// crash:N, hang:N, slow-metrics:D, malformed-metrics, ignore-sigterm.
package simengine
