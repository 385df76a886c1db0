package run

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/metrics/result"
	"sweep/recipes"
	"sweep/recipes/models"
	"sweep/simengine"
)

// TestSimulatedRunKeepsTheSidecarFiles: a Mooncake row's store is sized
// in a config file its sidecar carries (global_segment_size), which the
// engine reads through MOONCAKE_CONFIG_PATH. A simulated run started no
// sidecar and so wrote no file: the simulated engine ran with no tier and
// minimaxm3-fp8-h200's Mooncake points failed at 11 % errors. The spec
// now carries the files in both modes, only inside the point's result
// directory.
func TestSimulatedRunKeepsTheSidecarFiles(t *testing.T) {
	dir := t.TempDir()
	cfg := recipes.File{Path: filepath.Join(dir, "mooncake_config.json"), Content: `{"global_segment_size": "87GB"}`}
	p := &recipes.Point{
		ResultFilename: "p",
		ResultDir:      dir,
		Engine:         recipes.Command{Argv: []string{"vllm", "serve", "m"}},
		Client:         &recipes.Command{Argv: []string{"aiperf", "profile", "--model", "m", "--output-artifact-dir", dir + "/aiperf_artifacts"}},
		Sidecars: []recipes.Sidecar{{Name: "mooncake-master", Command: recipes.Command{Argv: []string{"mooncake_master"}},
			Files: []recipes.File{cfg}}},
	}
	setup := Setup{Simulate: true, Executable: "/bin/sweep", AiperfSchema: "aiperf@" + recipes.ForkAiperfVersion}
	spec, err := FromPlan(p, setup)
	require.NoError(t, err)
	assert.Empty(t, spec.Sidecars, "no sidecar process in a simulated run")
	assert.Equal(t, []recipes.File{cfg}, spec.Files)

	p.Sidecars[0].Files[0].Path = filepath.Join(filepath.Dir(dir), "elsewhere.json")
	_, err = FromPlan(p, setup)
	assert.ErrorContains(t, err, "outside the run's directory")

	// The runner writes them before the sidecars and the engine start.
	spec2, opts := testSpec(t, "", "")
	spec2.Files = []recipes.File{{Path: filepath.Join(opts.OutDir, "store", "mooncake_config.json"), Content: cfg.Content}}
	rec, err := Run(t.Context(), spec2, opts)
	require.NoError(t, err, "stages: %+v", rec.Stages)
	got, err := os.ReadFile(spec2.Files[0].Path)
	require.NoError(t, err)
	assert.Equal(t, cfg.Content, string(got))
}

// TestSimulatedLMCacheEngineGetsItsServers: vLLM's LMCacheMPConnector
// keeps the KV of each TP rank in an LMCache server, a sidecar whose
// --l1-size-gb sizes the host tier. A simulated run starts no sidecar,
// and the simulated engine had no tier for the MiniMax-M3 MI300X DRAM
// arm: it ran c16 GPU-resident. The plan's sidecar commands now reach the
// simulated engine (simproto.EnvSidecars), through FromPlan and
// PlannedEngineCommand alike, and it reads one server of 243 GB a rank
// (the DRAM budget over TP 8).
func TestSimulatedLMCacheEngineGetsItsServers(t *testing.T) {
	masters, err := configs.DefaultMasters()
	require.NoError(t, err)
	runners, err := configs.DefaultRunners()
	require.NoError(t, err)
	g := &matrix.Generator{Masters: masters, Runners: runners}
	rows, err := g.TestConfig(matrix.TestConfigOptions{ConfigKeys: []string{"minimaxm3-fp8-mi300x-vllm-agentic-mtp"}, ScenarioTypes: []string{"agentic-coding"}, EvalOptions: matrix.EvalOptions{NoEvals: true}})
	require.NoError(t, err)
	var lmcache matrix.Matrix
	for _, r := range rows {
		if r.KVOffloadBackend != nil && r.KVOffloadBackend.Name == "lmcache" {
			lmcache = append(lmcache, r)
		}
	}
	require.Len(t, lmcache, 1, "the key's one LMCache point (c16)")
	dir := t.TempDir()
	points, err := recipes.Plan(lmcache, recipes.PlanOptions{Catalog: models.Builtin(), Fast: true, ResultDir: dir})
	require.NoError(t, err)
	p := &points[0]
	require.Len(t, p.Sidecars, 8, "one LMCache server a TP rank")
	shard := p.Row.TotalCPUDRAMGB / 8

	spec, err := FromPlan(p, Setup{Simulate: true, Executable: "/bin/sweep", AiperfSchema: "aiperf@" + recipes.ForkAiperfVersion})
	require.NoError(t, err)
	assert.Empty(t, spec.Sidecars, "no sidecar process in a simulated run")
	engine, unchecked, ok := simEngineArgv(spec.Engine.Argv)
	require.True(t, ok, "%q", spec.Engine.Argv)
	planned, err := PlannedEngineCommand(p)
	require.NoError(t, err)
	for name, cmd := range map[string]RecordedCommand{
		"run":     {Argv: engine, Unchecked: unchecked, Env: spec.Engine.Env},
		"planned": planned,
	} {
		cfg, err := cmd.SimConfig(false)
		require.NoError(t, err, name)
		assert.True(t, strings.HasPrefix(cfg.HostKV.Source, "LMCache: "), cfg.HostKV.Source)
		cfg.HostKV.Source = "" // simengine's TestHostTierLog holds the source's words
		assert.Equal(t, simengine.HostKV{BytesPerWorker: float64(shard) * (1 << 30)}, cfg.HostKV, "%s: each rank's server's L1, write-through", name)
	}

	// Its record reads back the same: the command file keeps the
	// sidecars' commands in the engine's environment.
	path := filepath.Join(dir, "vllm_command.txt")
	require.NoError(t, os.WriteFile(path, []byte(commandText(spec.Engine.Argv, spec.Engine.Env, nil)), 0o644))
	rec, err := ReadCommandFile(path)
	require.NoError(t, err)
	cfg, err := rec.SimConfig(false)
	require.NoError(t, err)
	assert.Equal(t, float64(shard)*(1<<30), cfg.HostKV.BytesPerWorker)

	// A server missing from the plan fails the engine's start, as the
	// real connector fails to connect.
	p.Sidecars = p.Sidecars[:7]
	spec, err = FromPlan(p, Setup{Simulate: true, Executable: "/bin/sweep", AiperfSchema: "aiperf@" + recipes.ForkAiperfVersion})
	require.NoError(t, err)
	engine, unchecked, _ = simEngineArgv(spec.Engine.Argv)
	_, err = RecordedCommand{Argv: engine, Unchecked: unchecked, Env: spec.Engine.Env}.SimConfig(false)
	assert.ErrorContains(t, err, "no LMCache server for tcp://127.0.0.1:5562")
}

// TestCalibratedMooncakeRunReadsItsPlannedStore: a simulated run of a
// Mooncake point under a calibration records, at plan time, what the
// calibration sets for its engine, read as the engine will read it:
// with the store's config the point's sidecar writes before the engine
// starts (not written yet when the plan is read). Before, the engine
// took the missing file for no tier; now a missing file fails its start,
// and the plan-time read must take the planned file: the host-tier arm
// of the calibration is the one that matches.
func TestCalibratedMooncakeRunReadsItsPlannedStore(t *testing.T) {
	masters, err := configs.DefaultMasters()
	require.NoError(t, err)
	runners, err := configs.DefaultRunners()
	require.NoError(t, err)
	g := &matrix.Generator{Masters: masters, Runners: runners}
	rows, err := g.TestConfig(matrix.TestConfigOptions{ConfigKeys: []string{"minimaxm3-fp8-h200-vllm-agentic-mtp"}, ScenarioTypes: []string{"agentic-coding"}, EvalOptions: matrix.EvalOptions{NoEvals: true}})
	require.NoError(t, err)
	var mooncake matrix.Matrix
	for _, r := range rows {
		if r.KVOffloadBackend != nil && r.KVOffloadBackend.Name == "mooncake" && r.Conc == 12 {
			mooncake = append(mooncake, r)
		}
	}
	require.Len(t, mooncake, 1, "the key's Mooncake point at c12")
	dir := t.TempDir()
	points, err := recipes.Plan(mooncake, recipes.PlanOptions{Catalog: models.Builtin(), Fast: true, ResultDir: dir})
	require.NoError(t, err)
	p := &points[0]
	planned, err := PlannedEngineCommand(p)
	require.NoError(t, err)
	cfg, err := planned.SimConfig(false)
	require.NoError(t, err, "the planned store's config is read, not the disk's (nothing is written)")
	require.True(t, cfg.HostKV.Enabled())
	_, err = os.Stat(filepath.Join(dir, "mooncake_config.json"))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing written at plan time")

	cal := filepath.Join(t.TempDir(), "cal.json")
	arm := func(hostKV bool, scale float64) string {
		return fmt.Sprintf(`{"engine": "vllm", "model": %q, "gpu": "h200", "tp": %d, "ep": %d, "dp_attention": false, "host_kv": %t, "step_scale": %g, "pool_tokens": 0, "rms_error_pct": 0}`,
			cfg.ModelPath, cfg.TP, max(cfg.EP, 1), hostKV, scale)
	}
	require.NoError(t, os.WriteFile(cal, []byte(`{"version": 1, "arms": [`+arm(false, 1.1)+`, `+arm(true, 1.4)+`]}`), 0o644))
	spec, err := FromPlan(p, Setup{Simulate: true, Executable: "/bin/sweep", AiperfSchema: "aiperf@" + recipes.ForkAiperfVersion, SimCalibration: cal})
	require.NoError(t, err)
	require.NotNil(t, spec.Simulation.Calibration)
	assert.Equal(t, []result.CalibratedEngine{{Name: "engine", Calibrated: true, StepScale: 1.4}}, spec.Simulation.Calibration.Engines, "the host-tier arm")
}
