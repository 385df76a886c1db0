package recipes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The client environment's steps are benchmark_lib.sh's install_agentic_deps
// and resolve_trace_source (InferenceX 843c6254f) as argv: uv venv, uv pip
// install from the checkout, hf download of the loader's dataset.
func TestClientEnvSteps(t *testing.T) {
	ce := ClientEnv{Checkout: "/opt/inferencex", RuntimeDir: "/tmp/inferencex-agentic-77", UV: "/opt/sweep-tools/uv", HubCache: "/mnt/hf_hub_cache/", Loader: Loader062126256k}
	steps, err := ce.Steps()
	require.NoError(t, err)
	require.Len(t, steps, 3)
	cache := map[string]string{"UV_CACHE_DIR": "/tmp/inferencex-agentic-77/uv-cache"}
	done := []string{"/tmp/inferencex-agentic-77/venv/bin/aiperf", "/tmp/inferencex-agentic-77/venv/bin/hf"}
	assert.Equal(t, SetupStep{Name: "aiperf-venv", Argv: []string{"/opt/sweep-tools/uv", "venv", "--python", "3.11", "/tmp/inferencex-agentic-77/venv"},
		Env: cache, Present: done, Network: true}, steps[0])
	assert.Equal(t, SetupStep{Name: "aiperf-install", Argv: []string{"/opt/sweep-tools/uv", "pip", "install", "--python", "/tmp/inferencex-agentic-77/venv/bin/python",
		"-r", "/opt/inferencex/utils/agentic-benchmark/requirements.txt", "-e", "/opt/inferencex/utils/aiperf",
		"datasets>=4.7.0", "huggingface_hub[cli]>=0.25.0", "urllib3", "requests"}, Env: cache, Present: done, Creates: done, Network: true}, steps[1])
	assert.Equal(t, SetupStep{Name: "trace-download", Argv: []string{"/tmp/inferencex-agentic-77/venv/bin/hf", "download", "--repo-type", "dataset", "semianalysisai/cc-traces-weka-062126-256k"},
		Env: map[string]string{"HF_HUB_CACHE": "/mnt/hf_hub_cache/"}, Present: []string{"/mnt/hf_hub_cache/datasets--semianalysisai--cc-traces-weka-062126-256k/snapshots/*/*"}, Network: true}, steps[2])
	assert.Equal(t, "/tmp/inferencex-agentic-77/venv/bin/aiperf", ce.AiperfProgram())

	// An installed aiperf: no venv, the trace download with the hf beside it.
	inst := ClientEnv{Aiperf: "/usr/local/venv/bin/aiperf", HubCache: "/hub", Loader: Loader062126}
	steps, err = inst.Steps()
	require.NoError(t, err)
	require.Len(t, steps, 1)
	assert.Equal(t, []string{"/usr/local/venv/bin/hf", "download", "--repo-type", "dataset", "semianalysisai/cc-traces-weka-062126"}, steps[0].Argv)
	assert.Equal(t, "/usr/local/venv/bin/aiperf", inst.AiperfProgram())

	_, err = ClientEnv{HubCache: "/hub", Loader: "weka_999", Aiperf: "aiperf"}.Steps()
	assert.ErrorContains(t, err, `trace loader "weka_999" has no dataset`)
	_, err = ClientEnv{HubCache: "/hub", Loader: Loader062126}.Steps()
	assert.ErrorContains(t, err, "needs the checkout")
}
