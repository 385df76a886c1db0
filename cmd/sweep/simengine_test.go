package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sweep/configs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewSimEngineCmdFlags(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		check func(t *testing.T, o *simEngineOptions)
		err   string
	}{
		{
			name: "argv after --", args: []string{"--time-scale", "60", "--gpu", "mi355x", "--fault", "crash:3", "--", "vllm", "serve", "m", "--port", "9"},
			check: func(t *testing.T, o *simEngineOptions) {
				assert.Equal(t, []string{"vllm", "serve", "m", "--port", "9"}, o.Argv)
				assert.Equal(t, "60", o.TimeScale)
				assert.Equal(t, "mi355x", o.GPU)
				assert.Equal(t, "crash:3", o.Fault)
				assert.NotNil(t, o.Env)
			},
		},
		{name: "missing command", args: []string{"--time-scale", "2"}, err: "missing engine command"},
		{name: "command without --", args: []string{"vllm", "serve", "m"}, err: "put the engine command after --"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *simEngineOptions
			var errOut bytes.Buffer
			ios := &IOStreams{Out: &bytes.Buffer{}, ErrOut: &errOut}
			cmd := newSimEngineCmd(ios, func(_ context.Context, o *simEngineOptions) error { got = o; return nil })
			err := dispatch(t.Context(), ios, cmd, []string{"sweep", "sim-engine"}, tc.args)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				_, isFlag := errors.AsType[*FlagError](err)
				assert.True(t, isFlag, "usage errors exit 2")
				return
			}
			require.NoError(t, err)
			tc.check(t, got)
		})
	}
}

// TestSimEngineConfigFromRecipes reads every recipe argv of the testdata
// sample with the real flag schemas, as the point runner will.
func TestSimEngineConfigFromRecipes(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "simengine", "recipe-argv.json"))
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
			o := &simEngineOptions{Argv: r.Argv, Env: r.Env, Lenient: lenient, GPU: "mi355x"}
			cfg, err := simEngineConfig(o)
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

func TestSimEngineConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    simEngineOptions
		err  string
	}{
		{"schema rejects a typo", simEngineOptions{Argv: []string{"python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp-sizee", "8"}}, "rejected by sglang@"},
		{"schema rejects a bad type", simEngineOptions{Argv: []string{"vllm", "serve", "m", "--max-num-seqs", "many"}}, "rejected by vllm@"},
		{"unknown schema", simEngineOptions{Argv: []string{"vllm", "serve", "m"}, Schema: "vllm@v0.0.1"}, `flag schema "vllm@v0.0.1"`},
		{"schema of the other engine", simEngineOptions{Argv: []string{"vllm", "serve", "m"}, Schema: "sglang"}, "is not a vllm schema"},
		{"flags only need --engine", simEngineOptions{Argv: []string{"--model-path", "m"}}, "--engine is required"},
		{"unknown program", simEngineOptions{Argv: []string{"tgi-launcher", "--port", "1"}}, "want python3 -m sglang.launch_server"},
		{"bad simulator setting", simEngineOptions{Argv: []string{"vllm", "serve", "m"}, Fault: "explode"}, "unknown kind"},
		{"lenient still checks honoured values", simEngineOptions{Argv: []string{"vllm", "serve", "m", "--max-num-seqs", "many", "--flag-from-2027"}, Lenient: true}, "rejected by vllm@"},
		{"strict rejection names --lenient", simEngineOptions{Argv: []string{"vllm", "serve", "m", "--flag-from-2027"}}, "--lenient ignores"},
		{"unchecked needs a value count", simEngineOptions{Argv: []string{"vllm", "serve", "m"}, Unchecked: []string{"--flag-from-2027"}}, "want FLAG:N"},
		{"unchecked covers only the named flag", simEngineOptions{Argv: []string{"vllm", "serve", "m", "--flag-from-2027", "--other-2027"}, Unchecked: []string{"--flag-from-2027:0"}}, "--other-2027"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := simEngineConfig(&tc.o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
			_, isFlag := errors.AsType[*FlagError](err)
			assert.True(t, isFlag, "a bad engine argv exits 2 like argparse")
		})
	}
	cfg, err := simEngineConfig(&simEngineOptions{Argv: []string{"--model", "m", "-tp", "2"}, Engine: "vllm"})
	require.NoError(t, err)
	assert.Equal(t, configs.VLLM, cfg.Engine)
	assert.Equal(t, 2, cfg.TP)
	// A plan's unchecked flags (with their values) are accepted; honoured flags still count.
	cfg, err = simEngineConfig(&simEngineOptions{Argv: []string{"vllm", "serve", "m", "--attention-config", `{"backend":"X"}`, "--numa-bind", "-tp", "4"},
		Unchecked: []string{"--attention-config:1", "--numa-bind:0"}})
	require.NoError(t, err)
	assert.Equal(t, 4, cfg.TP)
}

func freePort(t *testing.T) string {
	t.Helper()
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	return strconv.Itoa(port)
}

func TestSimEngineExitCodes(t *testing.T) {
	t.Run("crash fault exits 1", func(t *testing.T) {
		code, _, errOut := runCLI(t, "sim-engine", "--time-scale", "1000", "--load-time", "0", "--warmup-time", "0", "--fault", "crash:0",
			"--", "python3", "-m", "sglang.launch_server", "--model-path", "m", "--host", "127.0.0.1", "--port", freePort(t))
		assert.Equal(t, exitError, code, errOut)
		assert.Contains(t, errOut, "simulated engine crash after 0 finished requests")
		assert.Contains(t, errOut, "The server is fired up and ready to roll!", "the engine log goes to stderr")
	})
	t.Run("stopped while loading exits 0", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		var out, errOut bytes.Buffer
		code := mainRun(ctx, &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
			[]string{"sim-engine", "--", "vllm", "serve", "m", "--host", "127.0.0.1", "--port", freePort(t)})
		assert.Equal(t, exitOK, code, errOut.String())
	})
}
