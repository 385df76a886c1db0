package simengine

import (
	"encoding/json"
	"hash/maphash"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/internal/simproto"
	"sweep/recipes/schema"
)

type recipeArgv struct {
	ConfigKey string            `json:"config_key"`
	Row       map[string]any    `json:"row"`
	Argv      []string          `json:"server_argv"`
	Env       map[string]string `json:"server_env"`
}

func loadRecipes(t *testing.T) []recipeArgv {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "simengine", "recipe-argv.json"))
	require.NoError(t, err)
	var out []recipeArgv
	require.NoError(t, json.Unmarshal(raw, &out))
	require.NotEmpty(t, out)
	return out
}

func TestConfigFromRecipeArgv(t *testing.T) {
	type want struct {
		engine              configs.Engine
		tp, ep, dp, running int
		dpAttn              bool
		mem                 float64
		page, port          int
		steps, drafts       int
		al                  float64
		noCache             bool
	}
	wants := map[string]want{
		"sglang tp2 ep2":  {configs.SGLang, 2, 2, 1, 2, false, 0.95, 16, 8888, 3, 4, 3.39, false},
		"sglang tp4 ep1":  {configs.SGLang, 4, 1, 1, 2, false, 0.80, 16, 8888, 3, 4, 3.39, false},
		"sglang tp4 ep4":  {configs.SGLang, 4, 4, 1, 8, false, 0.80, 16, 8888, 3, 4, 3.39, false},
		"sglang tp8 ep1":  {configs.SGLang, 8, 1, 1, 2, false, 0.80, 16, 8888, 3, 4, 3.39, false},
		"sglang tp8 ep8":  {configs.SGLang, 8, 8, 1, 8, false, 0.80, 16, 8888, 3, 4, 3.39, false},
		"vllm tp8 ep1":    {configs.VLLM, 8, 1, 1, 2, false, 0.86, 16, 8888, 3, 4, 2.49, false},
		"vllm tp1 ep1 dp": {configs.VLLM, 1, 1, 8, 64, false, 0.86, 16, 8889, 3, 4, 2.49, false},
	}
	seen := 0
	for _, r := range loadRecipes(t) {
		cmd, err := ParseCommand(r.Argv, ParseOptions{})
		require.NoError(t, err, r.ConfigKey)
		engine := cmd.Engine
		cfg, err := ConfigFromArgs(engine, cmd.Flags, r.Env)
		require.NoError(t, err, r.ConfigKey)
		name := string(engine) + " tp" + strconv.Itoa(cfg.TP) + " ep" + strconv.Itoa(cfg.EP)
		if cfg.DP > 1 {
			name += " dp"
		}
		w, ok := wants[name]
		if !assert.True(t, ok, "unexpected layout %s", name) {
			continue
		}
		seen++
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, w.engine, cfg.Engine)
			assert.Equal(t, []int{w.tp, w.ep, w.dp}, []int{cfg.TP, cfg.EP, cfg.DP})
			assert.Equal(t, w.dpAttn, cfg.DPAttention)
			assert.Equal(t, w.running, cfg.MaxRunningRequests, "max running requests")
			assert.Equal(t, w.mem, cfg.MemFraction)
			assert.Equal(t, w.page, cfg.PageSize)
			assert.Equal(t, w.port, cfg.Port)
			assert.Equal(t, "0.0.0.0", cfg.Host)
			assert.Equal(t, w.steps, cfg.Spec.NumSteps)
			assert.Equal(t, w.drafts, cfg.Spec.NumDraftTokens)
			assert.Equal(t, w.al, cfg.Spec.AcceptLength)
			assert.Equal(t, w.noCache, cfg.NoPrefixCache)
			assert.NotEmpty(t, cfg.ServedModelName)
			if engine == configs.SGLang {
				assert.True(t, cfg.EnableMetrics)
				assert.True(t, cfg.EnableCacheReport)
				assert.Equal(t, 50, cfg.StreamInterval)
				assert.Equal(t, 32768, cfg.ChunkSize)
			}
		})
	}
	assert.Equal(t, len(wants), seen)
}

func TestParseCommand(t *testing.T) {
	for _, tc := range []struct {
		name   string
		argv   []string
		opts   ParseOptions
		engine configs.Engine
		check  func(t *testing.T, c *Command)
		err    string
	}{
		{
			name: "sglang aliases and inline values", engine: configs.SGLang,
			argv: []string{"python3", "-m", "sglang.launch_server", "--model", "m", "--tp=8", "--dp", "2", "--ep", "8", "--enable-dp-attention"},
			check: func(t *testing.T, c *Command) {
				tp, _ := c.Flags.Int("--tp-size")
				dp, _ := c.Flags.Int("--dp-size")
				ep, _ := c.Flags.Int("--ep-size")
				m, _ := c.Flags.String("--model-path")
				on, ok := c.Flags.Bool("--enable-dp-attention")
				assert.Equal(t, []int{8, 2, 8}, []int{tp, dp, ep})
				assert.Equal(t, "m", m)
				assert.True(t, on && ok)
			},
		},
		{
			name: "flags the simulator does not read are accepted with their values", engine: configs.SGLang,
			argv: []string{"sglang", "serve", "--model-path", "m", "--cuda-graph-bs", "1", "2", "4", "--trust-remote-code", "--port", "9"},
			check: func(t *testing.T, c *Command) {
				p, ok := c.Flags.Int("--port")
				assert.True(t, ok)
				assert.Equal(t, 9, p)
				assert.Empty(t, c.Ignored)
			},
		},
		{
			name: "vllm positional model, underscores, negated bools, short aliases, JSON as text", engine: configs.VLLM,
			argv: []string{"vllm", "serve", "org/model", "--max_num_seqs", "64", "--no-enable-prefix-caching", "-tp", "4", "-ep",
				"--speculative-config", `{"method": "mtp", "num_speculative_tokens": 2}`},
			check: func(t *testing.T, c *Command) {
				m, _ := c.Flags.String("--model")
				n, _ := c.Flags.Int("--max-num-seqs")
				tp, _ := c.Flags.Int("--tensor-parallel-size")
				pc, pcOK := c.Flags.Bool("--enable-prefix-caching")
				ep, _ := c.Flags.Bool("--enable-expert-parallel")
				sc, _ := c.Flags.String("--speculative-config")
				assert.Equal(t, "org/model", m)
				assert.Equal(t, []int{64, 4}, []int{n, tp})
				assert.True(t, pcOK)
				assert.False(t, pc)
				assert.True(t, ep)
				assert.JSONEq(t, `{"method":"mtp","num_speculative_tokens":2}`, sc)
			},
		},
		{
			name: "vllm module form", engine: configs.VLLM,
			argv: []string{"/usr/bin/python3.12", "-m", "vllm.entrypoints.openai.api_server", "--model", "x"},
			check: func(t *testing.T, c *Command) {
				m, _ := c.Flags.String("--model")
				assert.Equal(t, "x", m)
			},
		},
		{
			name: "flags only with the engine named", engine: configs.VLLM, opts: ParseOptions{Engine: configs.VLLM},
			argv: []string{"--model", "m", "-tp", "2"},
			check: func(t *testing.T, c *Command) {
				tp, _ := c.Flags.Int("--tensor-parallel-size")
				assert.Equal(t, 2, tp)
			},
		},
		{
			name: "lenient drops what the simulator does not read", engine: configs.SGLang, opts: ParseOptions{Lenient: true},
			argv: []string{"python3", "-m", "sglang.launch_server", "--model-path", "m", "--flag-from-2027", "1", "2", "--tp", "4", "--dp", "2", "--page-size", "32"},
			check: func(t *testing.T, c *Command) {
				tp, _ := c.Flags.Int("--tp-size")
				page, _ := c.Flags.Int("--page-size")
				assert.Equal(t, []int{4, 32}, []int{tp, page})
				kinds := []schema.Kind{}
				for _, e := range c.Ignored {
					kinds = append(kinds, e.Kind)
				}
				assert.Equal(t, []schema.Kind{schema.UnknownFlag, schema.StrayToken}, kinds)
			},
		},
		{name: "schema rejects a typo", argv: []string{"python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp-sizee", "8"}, err: "rejected by sglang@"},
		{name: "lenient still checks honoured values", argv: []string{"vllm", "serve", "m", "--max-num-seqs", "many", "--flag-from-2027"}, opts: ParseOptions{Lenient: true}, err: "--max-num-seqs"},
		{name: "missing value", argv: []string{"python3", "-m", "sglang.launch_server", "--port"}, err: "--port: requires an argument"},
		{name: "bool with value", argv: []string{"vllm", "serve", "m", "--enable-prefix-caching=true"}, err: "takes no value"},
		{name: "stray positional", argv: []string{"python3", "-m", "sglang.launch_server", "model"}, err: "unrecognized arguments: model"},
		{name: "unknown program", argv: []string{"tgi", "--port", "1"}, err: "want python3 -m sglang.launch_server"},
		{name: "unknown module", argv: []string{"python3", "-m", "sglang.bench_serving"}, err: "unknown module"},
		{name: "empty", argv: nil, err: "empty engine command"},
		{name: "flags only without the engine", argv: []string{"--model-path", "m"}, err: ErrNoProgram.Error()},
		{name: "unknown schema", argv: []string{"vllm", "serve", "m"}, opts: ParseOptions{Schema: "vllm@v0.0.1"}, err: `flag schema "vllm@v0.0.1"`},
		{name: "schema of the other engine", argv: []string{"vllm", "serve", "m"}, opts: ParseOptions{Schema: "sglang"}, err: "is not a vllm schema"},
		{name: "engine help", argv: []string{"vllm", "serve", "--help"}, err: "not a server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseCommand(tc.argv, tc.opts)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.engine, c.Engine)
			tc.check(t, c)
		})
	}
}

// recordingLookup records the names ConfigFromArgs asks for; every flag
// but the absent ones reads as given, so flags read only when another is
// set (or not set) are reached.
type recordingLookup struct{ read, absent map[string]bool }

func (r recordingLookup) String(n string) (string, bool) { r.read[n] = true; return "x", !r.absent[n] }
func (r recordingLookup) Int(n string) (int, bool)       { r.read[n] = true; return 1, !r.absent[n] }
func (r recordingLookup) Float(n string) (float64, bool) { r.read[n] = true; return 0.5, !r.absent[n] }
func (r recordingLookup) Bool(n string) (bool, bool)     { r.read[n] = true; return true, !r.absent[n] }

// TestHonouredFlags: the honoured list is exactly what ConfigFromArgs
// reads, and every name is canonical in the engine's default schema (so
// lenient parsing matches problems to them and lookups hit).
func TestHonouredFlags(t *testing.T) {
	cat, err := schema.Embedded()
	require.NoError(t, err)
	for _, e := range []configs.Engine{configs.SGLang, configs.VLLM} {
		read := map[string]bool{}
		_, _ = ConfigFromArgs(e, recordingLookup{read, nil}, nil)
		_, _ = ConfigFromArgs(e, recordingLookup{read, map[string]bool{"--speculative-config": true}}, nil) // vLLM's --spec-* shorthands
		got := slices.Sorted(maps.Keys(read))
		assert.Equal(t, HonouredFlags(e), got, "%s", e)
		s, err := cat.Resolve(string(e))
		require.NoError(t, err)
		for _, name := range HonouredFlags(e) {
			f, ok := s.Lookup(name)
			if assert.True(t, ok, "%s has %s", s.ID(), name) {
				assert.Equal(t, name, f.Name, "%s: canonical", s.ID())
			}
		}
	}
}

func TestSplitProgram(t *testing.T) {
	for _, tc := range []struct {
		argv   []string
		engine configs.Engine
		rest   []string
	}{
		{[]string{"python3", "-m", "sglang.launch_server", "--tp", "8"}, configs.SGLang, []string{"--tp", "8"}},
		{[]string{"sglang", "serve", "--tp", "8"}, configs.SGLang, []string{"--tp", "8"}},
		{[]string{"vllm", "serve", "m", "-tp", "8"}, configs.VLLM, []string{"serve", "m", "-tp", "8"}},
		{[]string{"python", "-m", "vllm.entrypoints.openai.api_server", "--model", "m"}, configs.VLLM, []string{"serve", "--model", "m"}},
		{[]string{"/opt/venv/bin/vllm", "serve", "m"}, configs.VLLM, []string{"serve", "m"}},
		{[]string{"python3", "-m", "vllm.entrypoints.grpc_server", "--model", "m", "--port", "9"}, configs.VLLM, []string{"serve", "--model", "m", "--port", "9"}},
	} {
		e, rest, err := SplitProgram(tc.argv)
		require.NoError(t, err, tc.argv)
		assert.Equal(t, tc.engine, e)
		assert.Equal(t, tc.rest, rest)
	}
}

// mapLookup is a Lookup over typed values, as a schema-parsed argv
// adapter provides.
type mapLookup map[string]any

func (m mapLookup) String(n string) (string, bool) { v, ok := m[n].(string); return v, ok }
func (m mapLookup) Int(n string) (int, bool)       { v, ok := m[n].(int); return v, ok }
func (m mapLookup) Float(n string) (float64, bool) { v, ok := m[n].(float64); return v, ok }
func (m mapLookup) Bool(n string) (bool, bool)     { v, ok := m[n].(bool); return v, ok }

func TestConfigFromArgs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		engine configs.Engine
		flags  mapLookup
		env    map[string]string
		check  func(t *testing.T, c Config)
		err    string
	}{
		{
			name: "sglang dp attention and sim env", engine: configs.SGLang,
			flags: mapLookup{"--model-path": "deepseek-ai/DeepSeek-R1", "--tp-size": 8, "--dp-size": 8, "--enable-dp-attention": true, "--ep-size": 8},
			env:   map[string]string{simproto.EnvTimeScale: "60", simproto.EnvGPU: "MI355X", simproto.EnvSeed: "42", simproto.EnvLoadTime: "0", simproto.EnvFault: "crash:3,slow-metrics:2s"},
			check: func(t *testing.T, c Config) {
				assert.Equal(t, 8, c.GPUs(), "dp attention does not multiply GPUs")
				assert.Equal(t, 8, c.Ranks())
				assert.Equal(t, 60.0, c.TimeScale)
				assert.Equal(t, "mi355x", c.GPU)
				assert.Equal(t, uint64(42), c.Seed)
				assert.Negative(t, c.LoadTime, "explicit 0 means no load time")
				assert.Equal(t, []Fault{{Kind: FaultCrash, After: 3}, {Kind: FaultSlowMetrics, Delay: 2 * time.Second}}, c.Faults)
				assert.False(t, c.Spec.Enabled())
			},
		},
		{
			name: "sglang SIMULATE_ACC_LEN -1 is off", engine: configs.SGLang,
			flags: mapLookup{"--model-path": "m", "--speculative-algorithm": "NEXTN", "--speculative-num-steps": 3},
			env:   map[string]string{"SGLANG_SIMULATE_ACC_LEN": "-1", "RUNNER_TYPE": "b300-nv_0"},
			check: func(t *testing.T, c Config) {
				assert.True(t, c.Spec.Enabled())
				assert.Zero(t, c.Spec.AcceptLength)
				assert.Equal(t, 4, c.Spec.NumDraftTokens, "topk 1: steps + 1")
				assert.Equal(t, "b300", c.GPU, "GPU from RUNNER_TYPE")
			},
		},
		{
			name: "vllm synthetic rates and expert parallel", engine: configs.VLLM,
			flags: mapLookup{"--model": "m", "--tensor-parallel-size": 4, "--data-parallel-size": 2, "--enable-expert-parallel": true,
				"--speculative-config": `{"method":"eagle3","model":"d","num_speculative_tokens":2,"rejection_sample_method":"synthetic","synthetic_acceptance_rates":[0.9,0.5]}`},
			check: func(t *testing.T, c Config) {
				assert.Equal(t, 8, c.EP, "EP = TP x DP")
				assert.Equal(t, 8, c.GPUs())
				assert.Equal(t, []float64{0.9, 0.5}, c.Spec.AcceptRates)
				assert.InDelta(t, 1+0.9+0.5, newAcceptor(c.Spec).expectedLength(), 1e-12, "unconditional rates: 1 + their sum")
			},
		},
		{
			name: "vllm spec shorthand", engine: configs.VLLM,
			flags: mapLookup{"--model": "m", "--spec-method": "mtp", "--spec-tokens": 2},
			check: func(t *testing.T, c Config) {
				assert.Equal(t, 2, c.Spec.MaxDrafts())
				assert.Equal(t, 8000, c.Port)
			},
		},
		{name: "AL above k+1", engine: configs.VLLM, flags: mapLookup{"--model": "m", "--speculative-config": `{"method":"mtp","num_speculative_tokens":2,"rejection_sample_method":"synthetic","synthetic_acceptance_length":3.5}`}, err: "want a value in [1, 3]"},
		{name: "synthetic without a length", engine: configs.VLLM, flags: mapLookup{"--model": "m", "--speculative-config": `{"method":"mtp","num_speculative_tokens":2,"rejection_sample_method":"synthetic"}`}, err: "needs synthetic_acceptance_length"},
		{name: "bad spec json", engine: configs.VLLM, flags: mapLookup{"--model": "m", "--speculative-config": `{"method":`}, err: "--speculative-config"},
		{
			name: "sglang simulated acceptance, match-expected by default", engine: configs.SGLang,
			flags: mapLookup{"--model-path": "m", "--speculative-algorithm": "EAGLE", "--speculative-num-steps": 3},
			env:   map[string]string{"SGLANG_SIMULATE_ACC_LEN": "3.61"},
			check: func(t *testing.T, c Config) {
				assert.Equal(t, 3.61, c.Spec.AcceptLength)
				assert.Equal(t, AcceptMatchExpected, c.Spec.AcceptMethod)
			},
		},
		{
			name: "sglang simulated acceptance, multinomial", engine: configs.SGLang,
			flags: mapLookup{"--model-path": "m", "--speculative-algorithm": "EAGLE", "--speculative-num-steps": 3},
			env:   map[string]string{"SGLANG_SIMULATE_ACC_LEN": "3.39", "SGLANG_SIMULATE_ACC_METHOD": "multinomial"},
			check: func(t *testing.T, c Config) { assert.Equal(t, AcceptMultinomial, c.Spec.AcceptMethod) },
		},
		{
			name: "sglang acceptance method without a length is off", engine: configs.SGLang,
			flags: mapLookup{"--model-path": "m", "--speculative-algorithm": "EAGLE", "--speculative-num-steps": 3},
			env:   map[string]string{"SGLANG_SIMULATE_ACC_LEN": "-1", "SGLANG_SIMULATE_ACC_METHOD": "match-expected"},
			check: func(t *testing.T, c Config) { assert.Empty(t, c.Spec.AcceptMethod, "real drafts, drawn per request") },
		},
		{name: "vllm rates increasing", engine: configs.VLLM, flags: mapLookup{"--model": "m", "--speculative-config": `{"method":"mtp","num_speculative_tokens":2,"rejection_sample_method":"synthetic","synthetic_acceptance_rates":[0.5,0.9]}`}, err: "want them non-increasing"},
		{name: "vllm rates one per draft", engine: configs.VLLM, flags: mapLookup{"--model": "m", "--speculative-config": `{"method":"mtp","num_speculative_tokens":3,"rejection_sample_method":"synthetic","synthetic_acceptance_rates":[0.9,0.5]}`}, err: "want one per draft token (3)"},
		{name: "bad acc method", engine: configs.SGLang, flags: mapLookup{"--model-path": "m", "--speculative-algorithm": "EAGLE"}, env: map[string]string{"SGLANG_SIMULATE_ACC_LEN": "3", "SGLANG_SIMULATE_ACC_METHOD": "fixed"}, err: "SGLANG_SIMULATE_ACC_METHOD=\"fixed\": want match-expected or multinomial"},
		{name: "bad acc len", engine: configs.SGLang, flags: mapLookup{"--model-path": "m", "--speculative-algorithm": "EAGLE"}, env: map[string]string{"SGLANG_SIMULATE_ACC_LEN": "x"}, err: "SGLANG_SIMULATE_ACC_LEN"},
		{name: "no model", engine: configs.SGLang, flags: mapLookup{}, err: "model path is required"},
		{name: "dp attention needs tp multiple of dp", engine: configs.SGLang, flags: mapLookup{"--model-path": "m", "--tp-size": 4, "--dp-size": 3, "--enable-dp-attention": true}, err: "not a multiple"},
		{name: "unknown gpu", engine: configs.SGLang, flags: mapLookup{"--model-path": "m"}, env: map[string]string{simproto.EnvGPU: "tpu"}, err: `gpu "tpu"`},
		{name: "bad fault", engine: configs.SGLang, flags: mapLookup{"--model-path": "m"}, env: map[string]string{simproto.EnvFault: "explode"}, err: "unknown kind"},
		{name: "bad time scale", engine: configs.SGLang, flags: mapLookup{"--model-path": "m"}, env: map[string]string{simproto.EnvTimeScale: "-2"}, err: simproto.EnvTimeScale},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ConfigFromArgs(tc.engine, tc.flags, tc.env)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			tc.check(t, c)
		})
	}
}

func TestParseFaults(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Fault
		err  string
	}{
		{"", nil, ""},
		{"never-ready", []Fault{{Kind: FaultNeverReady}}, ""},
		{" crash:0 , hang:12 ", []Fault{{Kind: FaultCrash}, {Kind: FaultHang, After: 12}}, ""},
		{"slow-metrics:1m,malformed-metrics,ignore-sigterm", []Fault{{Kind: FaultSlowMetrics, Delay: time.Minute}, {Kind: FaultMalformedMetrics}, {Kind: FaultIgnoreSIGTERM}}, ""},
		{"slow-steps:10", []Fault{{Kind: FaultSlowSteps, Percent: 10}}, ""},
		{"slow-steps:-100", nil, "slow-steps:PERCENT"},
		{"slow-steps", nil, "slow-steps:PERCENT"},
		{"crash", nil, "want crash:N"},
		{"hang:-1", nil, "want hang:N"},
		{"slow-metrics:soon", nil, "slow-metrics:DURATION"},
		{"never-ready:1", nil, "takes no argument"},
		{"boom", nil, "unknown kind"},
	} {
		got, err := ParseFaults(tc.in)
		if tc.err != "" {
			require.Error(t, err, tc.in)
			assert.Contains(t, err.Error(), tc.err)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
		for _, f := range got {
			back, err := ParseFaults(f.String())
			require.NoError(t, err)
			assert.Equal(t, []Fault{f}, back, "String round trip")
		}
	}
}

func TestCountTokens(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", 0}, {"   ", 0}, {"hello", 1}, {"hello world", 2}, {" a b c", 3},
		{"abcdefgh", 1}, {"abcdefghi", 2}, {strings.Repeat("x", 20), 3}, {"a\n\tb", 2},
	} {
		assert.Equal(t, tc.want, CountTokens(tc.in), "%q", tc.in)
	}
}

func TestBlockHashesSharePrefixes(t *testing.T) {
	seed := maphash.MakeSeed()
	base := strings.Repeat("token ", 200)
	n1, h1 := blockHashes(seed, base, 64)
	n2, h2 := blockHashes(seed, base+" more words here", 64)
	_, h3 := blockHashes(seed, "different "+base, 64)
	assert.Equal(t, 200, n1)
	assert.Equal(t, 203, n2)
	assert.Len(t, h1, 3)
	assert.Equal(t, h1, h2[:3], "a longer text with the same prefix has the same leading blocks")
	assert.NotEqual(t, h1[0], h3[0])
	n4, h4 := blockHashes(seed, strings.Repeat("token ", 128), 64)
	assert.Equal(t, 128, n4)
	assert.Equal(t, h1[:2], h4, "a text ending on a block boundary (trailing space ignored)")
}

func TestShapeOf(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		total, active, wbytes float64
	}{
		{"Qwen/Qwen3.5-397B-A17B-FP8", 397, 17, 1},
		// Only its routed experts are 4-bit (expertB): 226 GB in MXFP4,
		// 238 GB in NVFP4.
		{"amd/Qwen3.5-397B-A17B-MXFP4", 397, 17, (386.5*4.25/8 + 10.5*2) / 397},
		{"nvidia/Qwen3.5-397B-A17B-NVFP4", 397, 17, (386.5*4.5/8 + 10.5*2) / 397},
		{"meta-llama/Llama-3.1-70B-Instruct", 70, 70, 2},
		{"deepseek-ai/DeepSeek-R1-0528", 671, 37, 1},
		{"some/unknown-model", 397, 17, 1},
		// The family's facts give a size the name does not.
		{"MiniMaxAI/MiniMax-M3-MXFP8", 428, 23, 1},
		{"/scratch/models/MiniMax-M3-NVFP4", 428, 23, 0.5},
		{"/mnt/hf_hub_cache/models--MiniMaxAI--MiniMax-M3-MXFP8/snapshots/${HF_SNAPSHOT_REVISION}", 428, 23, 1},
	} {
		s := shapeOf(tc.name)
		assert.Equal(t, []float64{tc.total, tc.active}, []float64{s.totalB, s.activeB}, tc.name)
		assert.InDelta(t, tc.wbytes, s.weightBytes, 1e-3, tc.name)
	}
}
