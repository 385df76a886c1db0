package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
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
