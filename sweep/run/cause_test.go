package run

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStageCause: a failed stage's detail quotes the log line that says
// why: the first Python exception line, else the last line naming a
// failure, else the last saying something failed (not "0 failed"); a
// tail with none of them is quoted not at all. The engine tails are
// shaped as SGLang's, vLLM's and NCCL's (a helper's audit found the
// first version quoting the line after the cause in each).
func TestStageCause(t *testing.T) {
	const crashed = "engine exited during the load (exit code 1)"
	long := "RuntimeError: " + strings.Repeat("x", 600)
	for _, tc := range []struct {
		name, err string
		tail      []string
		want      string // the quoted line, "" for none
	}{
		{name: "no tail", err: "client failed (exit code 1)"},
		{name: "the built-in client's refusal, not the artifact path after it", err: "client failed (exit code 1)",
			tail: []string{"loadgen: warm-up done: 0 ok, 1 failed", `sweep: loadgen: warm-up request failed (Bad Request: {"error":{"code":400,"message":"the prompt needs 98468 tokens but the KV cache holds 4096","type":"BadRequestError"}}); aborting run early`, "/out/TestFailed/aiperf_artifacts/profile_export.jsonl"},
			want: `sweep: loadgen: warm-up request failed (Bad Request: {"error":{"code":400,"message":"the prompt needs 98468 tokens but the KV cache holds 4096","type":"BadRequestError"}}); aborting run early`},
		// A disk filled by the point's own artifacts: the reason was only
		// in run.json's log tail, the point's error "client failed".
		{name: "the write that found the disk full, not the artifact list after it", err: "client failed (exit code 1)",
			tail: []string{"loadgen: warm-up 24 ok / 0 failed, profiling 2860 ok / 0 failed", "sweep: loadgen: write profile_export.jsonl: write /out/p/aiperf_artifacts/.profile_export.jsonl.sweep-1.tmp: no space left on device", "/out/p/aiperf_artifacts/profile_export_aiperf.json"},
			want: "sweep: loadgen: write profile_export.jsonl: write /out/p/aiperf_artifacts/.profile_export.jsonl.sweep-1.tmp: no space left on device"},
		{name: "a quota", err: "engine exited (exit code 1)",
			tail: []string{"Saving the compiled graph", "Disk quota exceeded", "INFO: shutting down"},
			want: "Disk quota exceeded"},
		{name: "a Python traceback's exception", err: "client failed (exit code 1)",
			tail: []string{"Traceback (most recent call last):", `  File "aiperf/cli.py", line 12, in main`, "ValueError: --input-file: no such dataset", "  "},
			want: "ValueError: --input-file: no such dataset"},
		{name: "SGLang out of memory, not the parent's sigquit after it", err: crashed,
			tail: []string{
				`[2026-12-07 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):`,
				`  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2960, in run_scheduler_process`,
				`torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.`,
				``,
				`[2026-12-07 10:00:00] Received sigquit from a child process. It usually means the child failed.`},
			want: `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.`},
		{name: "vLLM's root cause, not EngineDeadError", err: crashed,
			tail: []string{
				`ERROR 12-07 10:00:00 [core.py:700] EngineCore encountered a fatal error.`,
				`ERROR 12-07 10:00:00 [core.py:700] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB.`,
				`ERROR 12-07 10:00:00 [async_llm.py:420] AsyncLLM output_handler failed.`,
				`vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.`},
			want: `ERROR 12-07 10:00:00 [core.py:700] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB.`},
		{name: "an NCCL watchdog timeout, not the access log after it", err: "engine stopped answering",
			tail: []string{
				`[rank3]:[E1207 10:00:00 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out.`,
				`[2026-12-07 10:10:00] INFO:     127.0.0.1:41234 - "GET /health HTTP/1.1" 200 OK`},
			want: `[rank3]:[E1207 10:00:00 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out.`},
		{name: "a client killed mid-run: its progress lines say nothing of why", err: "client failed (killed by SIGKILL)",
			tail: []string{"loadgen: profiling: 400 requests done (0 failed), 4s elapsed", "loadgen: profiling: 477 requests done (0 failed), 5s elapsed, ETA 3s"}},
		{name: "some failed", err: "client failed (exit code 1)",
			tail: []string{"loadgen: warm-up 0 ok / 10 failed, profiling 0 ok / 0 failed", "loadgen: done"},
			want: "loadgen: warm-up 0 ok / 10 failed, profiling 0 ok / 0 failed"},
		{name: "the error already quotes it", err: "engine: Address already in use (error)",
			tail: []string{"Address already in use (error)"}},
		{name: "a long line is cut", err: "client failed (exit code 1)", tail: []string{long}, want: long[:maxCause] + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Stage{Error: tc.err, LogTail: tc.tail}
			want := tc.err
			if tc.want != "" {
				want += "; from its log: " + tc.want
			}
			assert.Equal(t, want, s.Detail())
		})
	}
}
