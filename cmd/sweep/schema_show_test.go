package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSchemaShow(t *testing.T) {
	code, out, errOut := runCLI(t, "schema", "show", "aiperf", "--concurrency", "-m")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "--concurrency  (aiperf@0.12.0)\n  type:      int or comma sweep\n")
	assert.Contains(t, out, "rule prefill-le-concurrency (le)")
	assert.Contains(t, out, "scenario inferencex-agentx-mvp (single)")
	assert.Contains(t, out, "--model-names  (aiperf@0.12.0)\n  spellings: --model-names, --model, -m\n  type:      list[string]\n")

	code, out, _ = runCLI(t, "schema", "show", "vllm")
	require.Equal(t, 0, code)
	assert.Regexp(t, `--enable-prefix-caching\s+bool-optional\s+-\s+--no-enable-prefix-caching`, out)

	code, out, errOut = runCLI(t, "schema", "show", "aiperf", "--use-chat-template")
	assert.Equal(t, 1, code)
	assert.Equal(t, "aiperf@0.12.0 has no flag --use-chat-template (did you mean --apply-chat-template?)\n", out)
	assert.Contains(t, errOut, "unknown flag(s) --use-chat-template")
}
