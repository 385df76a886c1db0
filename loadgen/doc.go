// Package loadgen is sweep's built-in load generator: it replays
// multi-turn agentic coding sessions (WEKA cc-traces format) against an
// OpenAI-compatible chat server at a fixed concurrency and writes the
// artifacts aiperf 0.12 writes, so the same aggregation code reads both
// clients.
//
// Call sequence:
//
//	flags, warnings, err := loadgen.ParseCommand(argv, loadgen.DefaultSchema) // "profile", then aiperf flags
//	opts, err := loadgen.OptionsFromFlags(flags)
//	res, err := loadgen.Run(ctx, opts, os.Stderr) // progress lines on stderr
//
// ParseCommand reads the argv with the aiperf flag schema
// (recipes/schema), so it is accepted or rejected exactly as aiperf
// would, then rejects the flags aiperf has but the load generator does
// not implement (SupportedFlags lists the ones it does).
//
// Run resolves the traces (--input-file; the --public-dataset repo in the
// local Hugging Face cache, TraceSet; else the built-in synthetic set from
// AgenticTraces, unless Options.RequireTraces makes a named set that is
// not cached a *TraceSetError), then:
//
//  1. scrapes every metrics endpoint once (baseline) and keeps polling;
//  2. warm-up: each of the --concurrency lanes takes the next trace in
//     trace order, draws an instant t* in [min ratio, max ratio] of the
//     trace's span exactly as aiperf 0.12.0 does (NumPy's PCG64 seeded
//     from --random-seed, the trace id and the lane; see startPoint) and
//     sends, for each stream with a turn before t* (the main agent and
//     the subagents in flight), the --warmup-requests-per-lane turns
//     ending at its last one (k) with max_tokens=1 and the full history
//     as context (benchmark_phase "warmup"); a failed root warm-up
//     request aborts the run as aiperf does. Profiling starts when every
//     primer has returned: aiperf 0.12.0's agentic warm-up barrier has no
//     timeout (its --warmup-grace-period bounds only an accelerated cache
//     warm-up), so a --warmup-request-count command waits for them all;
//     the SemiAnalysis fork's --warmup-requests-per-lane command cancels
//     what is still in flight at --warmup-grace-period, without a record;
//  3. profiling: each lane continues at k+1, waiting each turn's
//     recorded idle gap (end-to-start, capped per gap by
//     --trace-idle-gap-cap-seconds; when every lane is idle, all waits
//     shift so the next request starts within
//     --system-idle-gap-cap-seconds); the subagents spawned before a
//     parent turn run in parallel and the parent waits for all of them
//     (concurrency is per session tree, as in aiperf); a finished
//     session recycles the lane to the next trace from turn 0. Requests
//     stop being issued at --benchmark-duration (or --request-count /
//     --conversation-num), in-flight requests get
//     --benchmark-grace-period and are then cancelled, leaving no
//     record (as in aiperf 0.12.0: neither a success nor an error, so
//     not in the error rate; the same for warm-up requests the fork's
//     warm-up grace period cuts); the live --failed-request-threshold
//     cancels the run;
//  4. writes profile_export.jsonl, and when at least one profiling
//     request succeeded, profile_export_aiperf.json and
//     server_metrics_export.json, each atomically.
//
// Every prompt is the growing conversation (recorded assistant responses
// replayed into the history), so an engine's prefix cache sees the
// trace's reuse. Text is synthetic: one word per token, derived from the
// trace's KV block hash ids, so equal blocks give equal text.
//
// Differences from aiperf, by design: no tokenizer (tokens come from the
// server's usage with --use-server-token-count, else are counted as
// words); no flattened-agent (hash-id LCP) detection, so fan-outs nested
// inside a subagent stay in its chain; a lane pauses 100ms after a
// transport error; no CSV, inputs.json or logs are written; the
// summary's metadata names the generator and is never a valid
// submission. With Options.TimeScale every wait is divided and every
// reported time multiplied by the scale, for engines on a compressed
// clock.
package loadgen
