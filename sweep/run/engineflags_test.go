package run

import (
	"cmp"
	"maps"
	"os"
	"path/filepath"
	"slices"
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
	assert.Equal(t, map[string]string{"--chunked-prefill-size": "-1", "--enable-dp-attention": "", "--port": "1"},
		EngineFlags(result))

	rec := &Record{Processes: map[string]*ProcessOutcome{"engine": {Argv: engine("-1")}}}
	assert.Equal(t, []string{"engine flag --chunked-prefill-size: -1, now 4096"},
		MadeDiff(rec, Made{EngineName: "engine", Engine: engine("4096")}))
	assert.Empty(t, MadeDiff(rec, Made{EngineName: "engine", Engine: engine("-1")}))
}

// TestFlagsAsTheEngineReadsThem: a rerun's engine flags (MadeDiff), a
// recorded command's (EngineFlags) and two commands' (FlagDiff) are read
// as the engine reads them: spellings it reads alike (an argparse
// abbreviation where it takes them, FLAG=VALUE, an alias, vLLM's '_' for
// '-') are one flag, keyed by its canonical name. Before, a point made
// with "--max-running-req 8" was refused for "--max-running-requests=8"
// (engine flag --max-running-req: 8, now absent; engine flag
// --max-running-requests: absent, now 8).
func TestFlagsAsTheEngineReadsThem(t *testing.T) {
	sglang := func(flags ...string) []string {
		return append([]string{"python3", "-m", "sglang.launch_server", "--model-path", "m", "--port", "1"}, flags...)
	}
	vllm := func(flags ...string) []string { return append([]string{"vllm", "serve", "m", "--port", "1"}, flags...) }
	tests := []struct {
		name     string
		was, now []string
		want     []string // MadeDiff
	}{
		{"abbreviated, then attached", sglang("--max-running-req", "8"), sglang("--max-running-requests=8"), nil},
		{"abbreviated, then full with another value", sglang("--max-running-req", "8"), sglang("--max-running-requests", "32"),
			[]string{"engine flag --max-running-requests: 8, now 32"}},
		{"alias, then name", sglang("--tp", "8"), sglang("--tp-size", "8"), nil},
		{"abbreviated port is volatile", sglang("--max-running-requests", "8", "--por", "2"), sglang("--max-running-requests", "8"), nil},
		{"vLLM underscores, then dashes", vllm("--max_num_seqs", "8"), vllm("--max-num-seqs", "8"), nil},
		{"vLLM takes no abbreviation", vllm("--max-num-se", "8"), vllm("--max-num-seqs", "8"),
			[]string{"engine flag --max-num-se: 8, now absent", "engine flag --max-num-seqs: absent, now 8"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &Record{Processes: map[string]*ProcessOutcome{"engine": {Argv: tc.was}}}
			assert.Equal(t, tc.want, MadeDiff(rec, Made{EngineName: "engine", Engine: tc.now}))

			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "engine_command.txt"), []byte(commandText(tc.was, nil, nil)), 0o644))
			was := EngineFlags(filepath.Join(dir, "r.json"))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "engine_command.txt"), []byte(commandText(tc.now, nil, nil)), 0o644))
			now := EngineFlags(filepath.Join(dir, "r.json"))
			for _, name := range VolatileFlags {
				delete(was, name)
				delete(now, name)
			}
			assert.Equal(t, tc.want == nil, maps.Equal(was, now), "EngineFlags %v, then %v", was, now)
		})
	}
	// FlagDiff reads a router's argv as SMG reads it (its abbreviations).
	smg := []string{"python3", "-m", "smg.launch_router", "--port", "1"}
	assert.Empty(t, FlagDiff(append(slices.Clone(smg), "--model-path=M"), append(slices.Clone(smg), "--model-pa", "M")))
}

// TestEngineCommandFindsItsStoreConfigBesideTheResult: a recorded
// command's Mooncake store config (MOONCAKE_CONFIG_PATH) is read where it
// was recorded when it is there; else (results copied elsewhere, a real
// run's container path /workspace/results) the one beside the result,
// which the point runner writes there; with neither, the recorded path
// stands (and the simulated engine refuses it).
func TestEngineCommandFindsItsStoreConfigBesideTheResult(t *testing.T) {
	elsewhere := filepath.Join(t.TempDir(), "mooncake_config.json")
	require.NoError(t, os.WriteFile(elsewhere, []byte(`{}`), 0o644))
	for _, tc := range []struct {
		name, recorded string
		beside         bool
		want           string // "" for the one beside the result
	}{
		{"where it was recorded", elsewhere, true, elsewhere},
		{"gone: the one beside the result", "/workspace/results/mooncake_config.json", true, ""},
		{"neither", "/workspace/results/mooncake_config.json", false, "/workspace/results/mooncake_config.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			result := filepath.Join(dir, "r.json")
			require.NoError(t, os.WriteFile(filepath.Join(dir, "vllm_command.txt"), []byte(commandText([]string{"vllm", "serve", "m"}, map[string]string{"MOONCAKE_CONFIG_PATH": tc.recorded}, nil)), 0o644))
			if tc.beside {
				require.NoError(t, os.WriteFile(filepath.Join(dir, "mooncake_config.json"), []byte(`{}`), 0o644))
			}
			cmd, ok := EngineCommand(result)
			require.True(t, ok)
			assert.Equal(t, cmp.Or(tc.want, filepath.Join(dir, "mooncake_config.json")), cmd.Env["MOONCAKE_CONFIG_PATH"])
		})
	}
}
