package simengine

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/internal/usage"
)

// TestCommandLineConfigFromRecipes reads every recipe argv of the testdata
// sample with the real flag schemas, as the point runner will.
func TestCommandLineConfigFromRecipes(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "simengine", "recipe-argv.json"))
	require.NoError(t, err)
	var recipes []struct {
		ConfigKey string            `json:"config_key"`
		Row       map[string]any    `json:"row"`
		Argv      []string          `json:"server_argv"`
		Env       map[string]string `json:"server_env"`
	}
	require.NoError(t, json.Unmarshal(raw, &recipes))
	for _, r := range recipes {
		for _, lenient := range []bool{false, true} {
			c := &CommandLine{Argv: r.Argv, Env: r.Env, Lenient: lenient, GPU: "mi355x"}
			cfg, err := c.Config(nil)
			require.NoError(t, err, "%s lenient=%t", r.ConfigKey, lenient)
			tp := int(r.Row["tp"].(float64))
			if cfg.DP > 1 { // vLLM dp-attn arm: -tp 1 -dp TP
				assert.Equal(t, tp, cfg.DP*cfg.TP, r.ConfigKey)
			} else {
				assert.Equal(t, tp, cfg.TP, r.ConfigKey)
			}
			assert.True(t, cfg.Spec.Enabled(), r.ConfigKey)
			assert.Greater(t, cfg.Spec.AcceptLength, 1.0, "synthetic AL of %s", r.ConfigKey)
			assert.Equal(t, "mi355x", cfg.GPU, "--gpu overrides the environment")
		}
	}
}

func TestCommandLineConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    CommandLine
		err  string
	}{
		{"schema rejects a typo", CommandLine{Argv: []string{"python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp-sizee", "8"}}, "rejected by sglang@"},
		{"schema rejects a bad type", CommandLine{Argv: []string{"vllm", "serve", "m", "--max-num-seqs", "many"}}, "rejected by vllm@"},
		{"unknown schema", CommandLine{Argv: []string{"vllm", "serve", "m"}, Schema: "vllm@v0.0.1"}, `flag schema "vllm@v0.0.1"`},
		{"schema of the other engine", CommandLine{Argv: []string{"vllm", "serve", "m"}, Schema: "sglang"}, "is not a vllm schema"},
		{"flags only need --engine", CommandLine{Argv: []string{"--model-path", "m"}}, "--engine is required"},
		{"unknown program", CommandLine{Argv: []string{"tgi-launcher", "--port", "1"}}, "want python3 -m sglang.launch_server"},
		{"bad simulator setting", CommandLine{Argv: []string{"vllm", "serve", "m"}, Fault: "explode"}, "unknown kind"},
		{"lenient still checks honoured values", CommandLine{Argv: []string{"vllm", "serve", "m", "--max-num-seqs", "many", "--flag-from-2027"}, Lenient: true}, "rejected by vllm@"},
		{"strict rejection names --lenient", CommandLine{Argv: []string{"vllm", "serve", "m", "--flag-from-2027"}}, "--lenient ignores"},
		{"unchecked needs a value count", CommandLine{Argv: []string{"vllm", "serve", "m"}, Unchecked: []string{"--flag-from-2027"}}, "want FLAG:N"},
		{"unchecked covers only the named flag", CommandLine{Argv: []string{"vllm", "serve", "m", "--flag-from-2027", "--other-2027"}, Unchecked: []string{"--flag-from-2027:0"}}, "--other-2027"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.o.Config(nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
			_, isUsage := errors.AsType[*usage.Error](err)
			assert.True(t, isUsage, "a bad engine argv exits 2 like argparse")
		})
	}
	cfg, err := (&CommandLine{Argv: []string{"--model", "m", "-tp", "2"}, Engine: "vllm"}).Config(nil)
	require.NoError(t, err)
	assert.Equal(t, configs.VLLM, cfg.Engine)
	assert.Equal(t, 2, cfg.TP)
	// A plan's unchecked flags (with their values) are accepted; honoured flags still count.
	cfg, err = (&CommandLine{Argv: []string{"vllm", "serve", "m", "--attention-config", `{"backend":"X"}`, "--numa-bind", "-tp", "4"},
		Unchecked: []string{"--attention-config:1", "--numa-bind:0"}}).Config(nil)
	require.NoError(t, err)
	assert.Equal(t, 4, cfg.TP)
}

// TestCommandLineNoProgramSaysWhy: an argv of flags alone with no or a bad
// --engine said "--engine is required: <nil>" (the joined error has no
// single Unwrap); it names the engine and the choices.
func TestCommandLineNoProgramSaysWhy(t *testing.T) {
	for engine, want := range map[string]string{"": `--engine is required: engine "": want one of sglang, vllm`, "tgi": `--engine is required: engine "tgi": want one of sglang, vllm`} {
		_, err := (&CommandLine{Argv: []string{"--model", "m"}, Engine: engine}).Config(nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), want)
		assert.NotContains(t, err.Error(), "<nil>")
	}
}
