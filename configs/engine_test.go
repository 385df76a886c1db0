package configs

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

func TestEngineSet(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string
	}{
		{"sglang", ""},
		{"vllm", ""},
		{"atom", `engine "atom": want one of sglang, vllm`},
		{"dynamo-vllm", `engine "dynamo-vllm": want one of sglang, vllm`},
		{"", `engine "": want one of sglang, vllm`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			var e Engine
			err := e.Set(tc.in)
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr)
				assert.Equal(t, Engine(""), e, "a rejected name is not stored")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, Engine(tc.in), e)
		})
	}
}

func TestEngineUnmarshalYAML(t *testing.T) {
	var doc struct{ Engine Engine }
	require.NoError(t, yaml.Unmarshal([]byte("engine: vllm\n"), &doc))
	assert.Equal(t, VLLM, doc.Engine)

	err := yaml.Unmarshal([]byte("# comment\nengine: trt\n"), &doc)
	ce, ok := errors.AsType[*Error](err)
	require.True(t, ok, "got %v", err)
	assert.Equal(t, 2, ce.Line)
	assert.Equal(t, 9, ce.Col)
	assert.Contains(t, ce.Msg, "want one of sglang, vllm")
}

func TestEngineFacts(t *testing.T) {
	// Every engine sweep runs has every fact its commands and readers need.
	for _, name := range runnable() {
		f := Engine(name).Facts()
		assert.True(t, strings.HasPrefix(f.MetricPrefix, name), name)
		assert.Contains(t, f.DetectPrefixes, f.MetricPrefix, name)
		assert.NotEmpty(t, f.CacheFlush, name)
		assert.NotEmpty(t, f.ExportAdapter, name)
		assert.NotEmpty(t, f.ModelFlag, name)
		assert.NotEmpty(t, f.Parallel.TP, name)
		assert.NotNil(t, f.Router.Argv, name)
		assert.NotEqual(t, NoSpec, f.Spec, name)
		assert.True(t, f.AL.PerDraft() != f.AL.PerVerify(), "%s: one AL formula", name)
		for _, s := range append(f.Live.Required, f.Live.Families...) {
			assert.True(t, strings.HasPrefix(s, f.MetricPrefix), "%s: %s", name, s)
		}
	}
	// Every engine an export can be detected as names the adapter that
	// reads its export (metrics/result checks the names exist).
	for _, f := range engines {
		if len(f.DetectPrefixes) > 0 {
			assert.NotEmpty(t, f.ExportAdapter, f.Name)
		}
	}
	// An unknown framework is displayed by its name and does not run.
	f := Engine("llmd-vllm").Facts()
	assert.Equal(t, "llmd-vllm", f.Display)
	assert.False(t, f.Runs)
	assert.Equal(t, "TRT-LLM", Engine("trtllm").Facts().Display)
	assert.True(t, Engine("sglang-disagg").Disaggregated())
	assert.True(t, DynamoSGLang.Disaggregated())
	assert.False(t, SGLang.Disaggregated())
}

func TestDetectEngine(t *testing.T) {
	hasOf := func(names ...string) func(...string) bool {
		return func(prefixes ...string) bool {
			for _, n := range names {
				for _, p := range prefixes {
					if strings.HasPrefix(n, p) {
						return true
					}
				}
			}
			return false
		}
	}
	tests := []struct {
		name  string
		names []string
		fw    Engine
		want  Engine
	}{
		{"sglang metrics", []string{"sglang:num_running_reqs"}, "", SGLang},
		{"vllm metrics", []string{"vllm:num_requests_running"}, "", VLLM},
		{"dynamo metrics before vllm", []string{"vllm:x", "dynamo_frontend_requests"}, "", DynamoVLLM},
		{"a dynamo framework whatever the metrics", []string{"sglang:x"}, DynamoSGLang, DynamoVLLM},
		{"atom before sglang", []string{"sglang:x", "atom_y"}, "", ATOM},
		{"no metrics: the framework", nil, SGLang, SGLang},
		{"no metrics: atom framework", nil, ATOM, ATOM},
		{"metrics win over the framework", []string{"vllm:x"}, SGLang, VLLM},
		{"unknown metrics", []string{"trtllm_x"}, TRT, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, DetectEngine(hasOf(tc.names...), len(tc.names) == 0, tc.fw))
		})
	}
	e, ok := DetectServing(hasOf("dynamo_x", "vllm:y"))
	assert.True(t, ok)
	assert.Equal(t, VLLM, e, "a live page is read by an engine sweep runs")
	_, ok = DetectServing(hasOf("atom:x"))
	assert.False(t, ok)
}

func TestServeKinds(t *testing.T) {
	assert.Equal(t, []string{"vllm", "vllm-grpc", "sglang"}, ServeKindNames())
	for _, tc := range []struct {
		name   string
		engine Engine
		grpc   bool
		argv   string
	}{
		{"vllm", VLLM, false, "vllm serve /m --served-model-name m --host 127.0.0.1 --port 8001 --tensor-parallel-size 2 --max-model-len auto"},
		{"vllm-grpc", VLLM, true, "python3 -m vllm.entrypoints.grpc_server --model /m --served-model-name m --host 127.0.0.1 --port 8001 --tensor-parallel-size 2 --max-model-len auto"},
		{"sglang", SGLang, false, "python3 -m sglang.launch_server --model-path /m --served-model-name m --host 127.0.0.1 --port 8001 --tp-size 2"},
	} {
		k, ok := ServeKindFor(tc.name)
		require.True(t, ok, tc.name)
		assert.Equal(t, tc.engine, k.Engine, tc.name)
		assert.Equal(t, tc.grpc, k.GRPC, tc.name)
		assert.Equal(t, tc.argv, strings.Join(k.Argv("/m", "m", 8001, 2, "auto"), " "), tc.name)
	}
	k, _ := ServeKindFor("sglang")
	assert.Contains(t, strings.Join(k.Argv("/m", "m", 8001, 2, "32768"), " "), "--context-length 32768", "SGLang takes a set length as its context length")
	_, ok := ServeKindFor("atom")
	assert.False(t, ok)
}

// TestMI355XLaunchFacts: launch_mi355x-amds.sh mounts no home directory
// for ATOM and SGLang, and reads DeepSeek-V4-Pro from its NFS share on
// vLLM and ATOM only.
func TestMI355XLaunchFacts(t *testing.T) {
	for _, e := range []Engine{ATOM, SGLang} {
		assert.True(t, e.Facts().MI355X.NoHomeMount, e)
	}
	for _, e := range []Engine{VLLM, DynamoSGLang, SGLangDisagg, "unknown"} {
		assert.False(t, e.Facts().MI355X.NoHomeMount, e)
	}
	for _, e := range []Engine{VLLM, ATOM} {
		assert.Equal(t, []string{"deepseek-ai/DeepSeek-V4-Pro"}, e.Facts().MI355X.SharedHubModels, e)
	}
	assert.Empty(t, SGLang.Facts().MI355X.SharedHubModels)
	assert.Equal(t, SGLang, SGLangDisagg.Facts().Workers, "AMD's disaggregated workers run SGLang")
	assert.Empty(t, VLLM.Facts().Workers)
}
