package schema

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuilderArgv(t *testing.T) {
	tests := []struct {
		name  string
		tool  string
		build func(b *Builder)
		want  string
	}{
		{name: "aiperf scalars and bools", tool: "aiperf@0.12.0", build: func(b *Builder) {
			b.List("--model", "Qwen/Qwen3.5").Int("--concurrency", 32).Bool("--streaming", true).
				Float("--request-timeout-seconds", 600.5).String("--endpoint-type", "chat")
		}, want: "profile --model-names Qwen/Qwen3.5 --concurrency 32 --streaming --request-timeout-seconds 600.5 --endpoint-type chat"},
		{name: "aiperf false without a negative form", tool: "aiperf", build: func(b *Builder) {
			b.String("--model", "m").Bool("--streaming", false)
		}, want: "profile --model-names m --streaming=false"},
		{name: "aiperf false with a negative form", tool: "aiperf", build: func(b *Builder) {
			b.String("--model", "m").Bool("--auto-plot", false).Bool("--accuracy-enable-cot", false).String("--accuracy-benchmark", "aime25")
		}, want: "profile --model-names m --no-auto-plot --accuracy-no-enable-cot --accuracy-benchmark aime25"},
		{name: "aiperf lists one token per occurrence", tool: "aiperf", build: func(b *Builder) {
			b.List("--model", "a", "b").List("--server-metrics", "http://a/metrics", "http://b/metrics")
		}, want: "profile --model-names a --model-names b --server-metrics http://a/metrics http://b/metrics"},
		{name: "aiperf sweep", tool: "aiperf", build: func(b *Builder) {
			b.String("--model", "m").Sweep("--concurrency", 1, 2, 4)
		}, want: "profile --model-names m --concurrency 1,2,4"},
		{name: "sglang store_true false is omitted", tool: "sglang@v0.5.16", build: func(b *Builder) {
			b.String("--model-path", "m").Int("--tp-size", 8).Bool("--enable-metrics", true).Bool("--disable-radix-cache", false).
				JSON("--model-loader-extra-config", map[string]any{"enable_multithread_load": true}).Int("--chunked-prefill-size", -1)
		}, want: `--model-path m --tp-size 8 --enable-metrics --model-loader-extra-config {"enable_multithread_load":true} --chunked-prefill-size -1`},
		{name: "vllm bool-optional and positional model", tool: "vllm", build: func(b *Builder) {
			b.Int("-tp", 8).String("--model", "deepseek-ai/DeepSeek-V4-Pro").Bool("--enable-prefix-caching", false).Bool("--async-scheduling", true).
				JSON("--speculative-config", json.RawMessage(`{"method":"mtp","num_speculative_tokens":3}`)).List("--served-model-name", "a", "b")
		}, want: `serve deepseek-ai/DeepSeek-V4-Pro --tensor-parallel-size 8 --no-enable-prefix-caching --async-scheduling --speculative-config {"method":"mtp","num_speculative_tokens":3} --served-model-name a b`},
		{name: "vllm bool named by its false form", tool: "vllm", build: func(b *Builder) {
			b.String("--model", "m").Bool("--no-enable-flashinfer-autotune", true).Bool("--no-enable-prefix-caching", false)
		}, want: `serve m --no-enable-flashinfer-autotune --enable-prefix-caching`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Embedded()
			require.NoError(t, err)
			s, err := c.Resolve(tc.tool)
			require.NoError(t, err)
			b := s.NewBuilder()
			tc.build(b)
			argv, err := b.Argv()
			require.NoError(t, err)
			assert.Equal(t, tc.want, strings.Join(argv, " "))
			// What the builder emits parses back to the same command.
			p, err := s.Parse(argv)
			require.NoError(t, err)
			assert.Equal(t, argv, p.Args())
		})
	}
}

func TestBuilderErrors(t *testing.T) {
	tests := []struct {
		name  string
		tool  string
		build func(b *Builder)
		want  []problem
		msg   string // substring of the first error
	}{
		{name: "unknown flag with suggestion", tool: "aiperf", build: func(b *Builder) {
			b.String("--model", "m").Bool("--use-chat-template", true)
		}, want: []problem{{UnknownFlag, "--use-chat-template"}}, msg: "aiperf 0.12.0 has no flag --use-chat-template (did you mean --apply-chat-template?)"},
		{name: "wrong setter type", tool: "aiperf", build: func(b *Builder) {
			b.String("--model", "m").String("--concurrency", "32")
		}, want: []problem{{BadValue, "--concurrency"}}, msg: "is a int flag, not string"},
		{name: "float for an int flag", tool: "aiperf", build: func(b *Builder) {
			b.String("--model", "m").Float("--concurrency", 1.5)
		}, want: []problem{{BadValue, "--concurrency"}}},
		{name: "set twice", tool: "aiperf", build: func(b *Builder) {
			b.String("--model", "m").Int("--concurrency", 8).Int("--concurrency", 16)
		}, want: []problem{{Repeated, "--concurrency"}}},
		{name: "set twice under an alias", tool: "aiperf", build: func(b *Builder) {
			b.String("--model", "m").Int("--request-count", 8).Int("--num-requests", 16)
		}, want: []problem{{Repeated, "--num-requests"}}},
		{name: "bad choice", tool: "aiperf", build: func(b *Builder) {
			b.String("--model", "m").String("--endpoint-type", "openai")
		}, want: []problem{{BadChoice, "--endpoint-type"}}},
		{name: "bound", tool: "aiperf", build: func(b *Builder) {
			b.String("--model", "m").Float("--failed-request-threshold", 2)
		}, want: []problem{{OutOfBounds, "--failed-request-threshold"}}},
		{name: "rule", tool: "aiperf", build: func(b *Builder) {
			b.String("--model", "m").Bool("--streaming", true).Int("--concurrency", 4).Int("--prefill-concurrency", 8)
		}, want: []problem{{RuleBroken, "--prefill-concurrency"}}, msg: "--prefill-concurrency must be <= --concurrency (8 > 4)"},
		{name: "scenario lock", tool: "aiperf", build: func(b *Builder) {
			b.String("--model", "m").String("--scenario", "inferencex-agentx-mvp").String("--public-dataset", "semianalysis_cc_traces_weka_062126").Float("--trace-idle-gap-cap-seconds", 300)
		}, want: []problem{{ScenarioLock, "--trace-idle-gap-cap-seconds"}}},
		{name: "sweep on a scalar", tool: "aiperf", build: func(b *Builder) {
			b.String("--model", "m").Sweep("--num-dataset-entries", 1, 2)
		}, want: []problem{{BadValue, "--num-dataset-entries"}}},
		{name: "list setter on a scalar", tool: "aiperf", build: func(b *Builder) {
			b.String("--model", "m").List("--tokenizer", "a")
		}, want: []problem{{BadValue, "--tokenizer"}}},
		{name: "every problem at once", tool: "aiperf", build: func(b *Builder) {
			b.Bool("--use-chat-template", true).Int("--concurrency", 0).Int("--concurrency", 2)
		}, want: []problem{{UnknownFlag, "--use-chat-template"}, {Repeated, "--concurrency"}, {OutOfBounds, "--concurrency"}, {RuleBroken, "--model-names"}}},
		{name: "removed engine flag", tool: "sglang@v0.5.16", build: func(b *Builder) {
			b.String("--model-path", "m").Bool("--enable-ep-moe", true)
		}, want: []problem{{RemovedFlag, "--enable-ep-moe"}}},
		{name: "engine json", tool: "vllm", build: func(b *Builder) {
			b.String("--model", "m").JSON("--speculative-config", "mtp")
		}, want: []problem{{BadValue, "--speculative-config"}}},
		{name: "escape without reason", tool: "aiperf", build: func(b *Builder) {
			b.String("--model", "m").Unchecked("--x", nil, " ")
		}, want: []problem{{Unchecked, "--x"}}},
		{name: "escape of a known flag", tool: "aiperf", build: func(b *Builder) {
			b.String("--model", "m").Unchecked("--concurrency", []string{"8"}, "why not")
		}, want: []problem{{Unchecked, "--concurrency"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := Embedded()
			s, err := c.Resolve(tc.tool)
			require.NoError(t, err)
			b := s.NewBuilder()
			tc.build(b)
			argv, err := b.Argv()
			assert.Nil(t, argv)
			assert.Equal(t, tc.want, problemsOf(err), "%v", err)
			if tc.msg != "" {
				require.NotEmpty(t, Problems(err))
				assert.Contains(t, Problems(err)[0].Error(), tc.msg)
			}
		})
	}
}

// The escape hatch passes an unknown flag through, records why, and the parse marks it.
func TestBuilderUnchecked(t *testing.T) {
	s := MustLoad("aiperf", "0.12.0")
	b := s.NewBuilder().String("--model", "m").Unchecked("--warmup-requests-per-lane", []string{"10"}, "fork-only flag, InferenceX pin").Int("--concurrency", 8)
	argv, err := b.Argv()
	require.NoError(t, err)
	assert.Equal(t, "profile --model-names m --warmup-requests-per-lane 10 --concurrency 8", strings.Join(argv, " "))
	assert.Equal(t, []Escape{{Flag: "--warmup-requests-per-lane", Values: []string{"10"}, Reason: "fork-only flag, InferenceX pin"}}, b.Escapes())
	p, err := b.Parsed()
	require.NoError(t, err)
	assert.Equal(t, []problem{{Unchecked, "--warmup-requests-per-lane"}}, warningsOf(p))
	assert.Len(t, p.Escapes, 1)
	// Without the escape the same argv is rejected.
	_, err = s.Parse(argv)
	assert.Equal(t, []problem{{UnknownFlag, "--warmup-requests-per-lane"}}, problemsOf(err))
}

// The InferenceX replay command built with the typed builder against the pinned fork.
func TestBuilderInferenceXReplay(t *testing.T) {
	b := MustLoad("aiperf", "sa-754356e9").NewBuilder()
	b.String("--scenario", "inferencex-agentx-mvp").
		List("--url", "http://localhost:8888").String("--endpoint", "/v1/chat/completions").String("--endpoint-type", "chat").Bool("--streaming", true).
		List("--model", "Qwen/Qwen3.5-397B-A17B-FP8").String("--tokenizer", "Qwen/Qwen3.5-397B-A17B-FP8").Int("--concurrency", 32).
		Float("--benchmark-duration", 3600).Float("--stats-interval", 30).Int("--random-seed", 42).Float("--failed-request-threshold", 0.1).
		Float("--trajectory-start-min-ratio", 0.25).Float("--trajectory-start-max-ratio", 0.75).Int("--warmup-requests-per-lane", 10).
		Float("--trace-idle-gap-cap-seconds", 300).Float("--warmup-grace-period", 1800).Bool("--use-server-token-count", true).
		Bool("--no-gpu-telemetry", true).Bool("--tokenizer-trust-remote-code", true).Int("--num-dataset-entries", 393).Float("--slice-duration", 1).
		List("--server-metrics", "http://localhost:8888/metrics").String("--output-artifact-dir", "/results/aiperf_artifacts").
		String("--public-dataset", "semianalysis_cc_traces_weka_062126_256k").Bool("--apply-chat-template", true)
	argv, err := b.Argv()
	require.NoError(t, err)
	assert.Equal(t, "profile", argv[0])
	assert.Contains(t, strings.Join(argv, " "), "--warmup-requests-per-lane 10 --trace-idle-gap-cap-seconds 300")
}

// TestHelpTokenIsNeverAValue: a config value "--help" (model: "--help") made
// the parser treat the whole command as a help request, so Argv returned
// the bare command with every flag dropped and plan exited 0.
func TestHelpTokenIsNeverAValue(t *testing.T) {
	cat, err := Embedded()
	require.NoError(t, err)
	for _, tc := range []struct{ tool, flag string }{
		{"sglang@v0.5.16", "--model-path"},
		{"aiperf@0.12.0", "--model"},
		{"vllm@v0.27.1", "--served-model-name"},
	} {
		for _, v := range []string{"--help", "-h"} {
			s, err := cat.Resolve(tc.tool)
			require.NoError(t, err)
			argv, err := s.NewBuilder().String(tc.flag, v).Argv()
			if err == nil {
				assert.Contains(t, argv, v, "%s %s %s: the value is kept as a value", tc.tool, tc.flag, v)
				assert.Greater(t, len(argv), 1, "%s: flags are not dropped", tc.tool)
				continue
			}
			assert.NotContains(t, err.Error(), "unknown", "%s %s %s: %v", tc.tool, tc.flag, v, err)
		}
	}
	// Parsing a real help request still works.
	s, err := cat.Resolve("aiperf@0.12.0")
	require.NoError(t, err)
	p, err := s.Parse([]string{"profile", "--model", "m", "--help"})
	require.NoError(t, err)
	assert.True(t, p.Help)
}
