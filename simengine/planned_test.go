package simengine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs/matrix"
	"sweep/internal/redact"
	"sweep/internal/simproto"
	"sweep/recipes"
	"sweep/recipes/schema"
)

// TestPlannedCommandLine: a planned point's engine as a simulated run
// starts it: the snapshot revision a simulated engine's (it loads
// none), its escapes' --unchecked specs, a copy of its environment with
// its sidecars' commands (secrets redacted), the runner's GPU.
func TestPlannedCommandLine(t *testing.T) {
	env := map[string]string{"SGLANG_SIMULATE_ACC_LEN": "3.39"}
	p := &recipes.Point{
		Row: matrix.Row{Runner: "cluster:mi300x-amds"},
		Engine: recipes.Command{Argv: []string{"vllm", "serve", "/hub/models--org--m/snapshots/" + recipes.HFSnapshotPlaceholder, "--numa-bind"},
			Env: env, Placeholders: []string{recipes.HFSnapshotPlaceholder}},
		Escapes:  []schema.Escape{{Flag: "--numa-bind", Reason: "r"}},
		Sidecars: []recipes.Sidecar{{Name: "lmcache-0", Command: recipes.Command{Argv: []string{"lmcache", "server", "--port", "5555", "--api-key", "s3cret"}}}},
	}
	cl, err := PlannedCommandLine(p)
	require.NoError(t, err)
	assert.Equal(t, []string{"vllm", "serve", "/hub/models--org--m/snapshots/" + SimulatedSnapshot, "--numa-bind"}, cl.Argv)
	assert.Equal(t, []string{"--numa-bind:0"}, cl.Unchecked)
	assert.Equal(t, "mi300x", cl.GPU)
	sidecars, err := simproto.ParseSidecars(cl.Env[simproto.EnvSidecars])
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"lmcache", "server", "--port", "5555", "--api-key", redact.Marker}}, sidecars)
	assert.Equal(t, "3.39", cl.Env["SGLANG_SIMULATE_ACC_LEN"])
	assert.Len(t, cl.Env, 2)
	cl.Env["X"] = "1"
	assert.NotContains(t, p.Engine.Env, "X", "the plan's environment is copied")
	assert.Contains(t, p.Engine.Argv[2], recipes.HFSnapshotPlaceholder, "the plan's argv is copied")

	p.Sidecars = nil
	cl, err = PlannedCommandLine(p)
	require.NoError(t, err)
	assert.NotContains(t, cl.Env, simproto.EnvSidecars, "a point without sidecars adds nothing")
	assert.Empty(t, cl.Files)
}

// TestPlannedCommandLineCarriesItsSidecarFiles: a Mooncake point's engine
// reads the store's config its sidecar writes before the engine starts.
// The planned command line carries that file (Files), so it is read as it
// will run before anything is written (sweep sim calibrate's planned
// commands had MOONCAKE_CONFIG_PATH name /workspace/results, never
// written: the arms were fitted with no host tier); a file neither
// planned nor on the disk fails the engine's start.
func TestPlannedCommandLineCarriesItsSidecarFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mooncake_config.json")
	cfgFile := recipes.File{Path: path, Content: `{"global_segment_size": "87GB", "master_server_address": "127.0.0.1:20000"}`}
	p := &recipes.Point{
		Row: matrix.Row{Runner: "h200-dgxc-slurm"},
		Engine: recipes.Command{Argv: []string{"vllm", "serve", "MiniMaxAI/MiniMax-M3-MXFP8", "--tensor-parallel-size", "8",
			"--kv-transfer-config", `{"kv_connector":"MooncakeStoreConnector","kv_role":"kv_both"}`},
			Env: map[string]string{"MOONCAKE_CONFIG_PATH": path}},
		Sidecars: []recipes.Sidecar{{Name: "mooncake-master", Command: recipes.Command{Argv: []string{"mooncake_master"}}, Files: []recipes.File{cfgFile}}},
	}
	cl, err := PlannedCommandLine(p)
	require.NoError(t, err)
	assert.Equal(t, []recipes.File{cfgFile}, cl.Files)
	cfg, err := cl.Config(nil)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(cfg.HostKV.Source, "Mooncake store ("+path+"): global_segment_size 87 GiB per worker (the file's)"), cfg.HostKV.Source)
	cfg.HostKV.Source = "" // TestHostTierLog
	assert.Equal(t, HostKV{BytesPerWorker: 87 << 30, Shared: true}, cfg.HostKV, "read from the plan")
	_, err = os.Stat(path)
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing written")

	cl.Files = nil
	_, err = cl.Config(nil)
	assert.ErrorContains(t, err, "MOONCAKE_CONFIG_PATH="+path+": no such file", "nor planned nor on the disk: the engine does not start")
}

// TestUncheckedSpecs: the specs name each escaped flag of the engine's
// argv once, given as FLAG VALUE or FLAG=VALUE (before, only FLAG VALUE
// was found, so the simulated engine refused the plan's flag as
// unknown); escapes that are no flag of the argv are left out.
func TestUncheckedSpecs(t *testing.T) {
	escapes := []schema.Escape{
		{Flag: "--numa-bind", Reason: "r"},
		{Flag: "--attention-config", Values: []string{"{}"}, Reason: "r"},
		{Flag: "--numa-bind", Reason: "r"},
		{Flag: "lm_eval", Reason: "not an engine flag"},
		{Flag: "--client-only", Reason: "not in the engine argv"},
	}
	assert.Equal(t, []string{"--numa-bind:0", "--attention-config:1"}, UncheckedSpecs(escapes, []string{"vllm", "serve", "m", "--numa-bind", "--attention-config", "{}"}))
	assert.Equal(t, []string{"--attention-config:1"}, UncheckedSpecs(escapes[1:2], []string{"vllm", "serve", "m", "--attention-config={}"}))
}
