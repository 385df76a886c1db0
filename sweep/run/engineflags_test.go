package run

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/recipes"
	"sweep/recipes/schema"
)

// TestEngineCommand: the engine command recorded beside a result is read
// back as written (commandText), the simulated engine's wrapper left out
// with its --unchecked specs kept apart; the client's command is not the
// engine's; EngineFlags gives its flags.
func TestEngineCommand(t *testing.T) {
	dir := t.TempDir()
	result := filepath.Join(dir, "r.json")
	_, ok := EngineCommand(result)
	assert.False(t, ok, "no command file")

	write := func(name string, argv []string, env map[string]string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(commandText(argv, env, []string{"MAX_MODEL_LEN"})), 0o644))
	}
	write("benchmark_command.txt", []string{"aiperf", "profile", "--concurrency", "4"}, nil)
	_, ok = EngineCommand(result)
	assert.False(t, ok, "the client's command is not the engine's")

	engine := []string{"vllm", "serve", "m", "--tensor-parallel-size", "8", "--speculative-config", `{"method": "eagle3", "num_speculative_tokens": 3}`, "--enforce-eager"}
	write("server_command.txt", append([]string{"/opt/sweep", "sim-engine", "--unchecked", "--numa-bind:0", "--unchecked", "--attention-config:1", "--"}, engine...),
		map[string]string{"SWEEP_SIM_GPU": "mi325x", "VLLM_USE_V1": "1"})
	cmd, ok := EngineCommand(result)
	require.True(t, ok)
	assert.Equal(t, RecordedCommand{Argv: engine, Unchecked: []string{"--numa-bind:0", "--attention-config:1"},
		Env: map[string]string{"SWEEP_SIM_GPU": "mi325x", "VLLM_USE_V1": "1"}}, cmd)
	assert.Equal(t, map[string]string{"--tensor-parallel-size": "8", "--speculative-config": `{"method": "eagle3", "num_speculative_tokens": 3}`, "--enforce-eager": ""},
		EngineFlags(result))
}

// TestPlannedEngineCommand: a planned point's engine command as a
// simulated engine gets it: the snapshot revision resolved as a simulated
// engine's, its escapes' --unchecked specs, a copy of its environment.
func TestPlannedEngineCommand(t *testing.T) {
	env := map[string]string{"SGLANG_SIMULATE_ACC_LEN": "3.39"}
	p := &recipes.Point{
		Engine: recipes.Command{Argv: []string{"vllm", "serve", "/hub/models--org--m/snapshots/" + recipes.HFSnapshotPlaceholder, "--numa-bind"},
			Env: env, Placeholders: []string{recipes.HFSnapshotPlaceholder}},
		Escapes: []schema.Escape{{Flag: "--numa-bind", Reason: "r"}},
	}
	cmd, err := PlannedEngineCommand(p)
	require.NoError(t, err)
	assert.Equal(t, RecordedCommand{Argv: []string{"vllm", "serve", "/hub/models--org--m/snapshots/simulated", "--numa-bind"},
		Unchecked: []string{"--numa-bind:0"}, Env: env}, cmd)
	cmd.Env["X"] = "1"
	assert.NotContains(t, p.Engine.Env, "X", "the plan's environment is copied")
	assert.Contains(t, p.Engine.Argv[2], recipes.HFSnapshotPlaceholder, "the plan's argv is copied")
}

// TestFlagsWithNegativeValues: an engine flag's negative value
// (SGLang's --chunked-prefill-size -1, which turns chunked prefill off)
// is its value. Before, it was read as a bare flag followed by a flag
// "-1": sweep compare listed "-1" as a flag, and a rerun made with 4096
// was refused with "engine flag --chunked-prefill-size: set, now 4096;
// engine flag -1: set, now absent".
func TestFlagsWithNegativeValues(t *testing.T) {
	dir := t.TempDir()
	result := filepath.Join(dir, "r.json")
	engine := func(chunk string) []string {
		return []string{"python3", "-m", "sglang.launch_server", "--chunked-prefill-size", chunk, "--enable-dp-attention", "--port", "1"}
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sglang_command.txt"), []byte(commandText(engine("-1"), nil, nil)), 0o644))
	assert.Equal(t, map[string]string{"-m": "sglang.launch_server", "--chunked-prefill-size": "-1", "--enable-dp-attention": "", "--port": "1"},
		EngineFlags(result))

	rec := &Record{Processes: map[string]*ProcessOutcome{"engine": {Argv: engine("-1")}}}
	assert.Equal(t, []string{"engine flag --chunked-prefill-size: -1, now 4096"},
		MadeDiff(rec, Made{EngineName: "engine", Engine: engine("4096")}))
	assert.Empty(t, MadeDiff(rec, Made{EngineName: "engine", Engine: engine("-1")}))
}
