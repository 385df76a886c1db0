package run

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStageCause: a failed stage's detail quotes the log line that says
// why, the last one naming an error or failure, else the last line.
func TestStageCause(t *testing.T) {
	long := "RuntimeError: " + strings.Repeat("x", 600)
	for _, tc := range []struct {
		name, err string
		tail      []string
		want      string
	}{
		{name: "no tail", err: "client failed (exit code 1)", want: "client failed (exit code 1)"},
		{name: "the built-in client's refusal, not the artifact path after it", err: "client failed (exit code 1)",
			tail: []string{"loadgen: warm-up done: 0 ok, 1 failed", `sweep: loadgen: warm-up request failed (Bad Request: the prompt needs 98468 tokens but the KV cache holds 4096); aborting run early`, "/out/TestFailed/aiperf_artifacts/profile_export.jsonl"},
			want: `client failed (exit code 1); from its log: sweep: loadgen: warm-up request failed (Bad Request: the prompt needs 98468 tokens but the KV cache holds 4096); aborting run early`},
		{name: "a Python traceback's exception", err: "client failed (exit code 1)",
			tail: []string{"Traceback (most recent call last):", `  File "aiperf/cli.py", line 12, in main`, "ValueError: --input-file: no such dataset", "  "},
			want: "client failed (exit code 1); from its log: ValueError: --input-file: no such dataset"},
		{name: "no failure named: the last line", err: "engine exited during the load (signal: killed)",
			tail: []string{"loading weights 50%", "loading weights 90%", ""},
			want: "engine exited during the load (signal: killed); from its log: loading weights 90%"},
		{name: "the error already quotes it", err: "engine: Address already in use",
			tail: []string{"Address already in use"}, want: "engine: Address already in use"},
		{name: "a long line is cut", err: "client failed (exit code 1)", tail: []string{long},
			want: "client failed (exit code 1); from its log: " + long[:maxCause] + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Stage{Error: tc.err, LogTail: tc.tail}
			assert.Equal(t, tc.want, s.Detail())
		})
	}
}
