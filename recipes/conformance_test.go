package recipes_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sweep/recipes"
	"sweep/recipes/models"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs/matrix"
	"sweep/recipes/schema"
)

// sampleEntry is one point of testdata/recipes/recipe-argv-sample.json (AMD
// keys) or recipe-argv-nvidia-sample.json (NVIDIA keys): what InferenceX's
// launcher and Bash recipe ran for a matrix row, captured with stubbed
// programs.
type sampleEntry struct {
	ConfigKey      string            `json:"config_key"`
	Row            map[string]any    `json:"row"`
	ServerArgv     []string          `json:"server_argv"`
	ServerEnv      map[string]string `json:"server_env"`
	ServerEnvUnset []string          `json:"server_env_unset"`
	// ServerEnvExtra are more exported variables, recorded apart by name
	// (TORCH_CUDA_ARCH_LIST, SGL_*, MC_*, the Bash-only knobs).
	ServerEnvExtra map[string]string `json:"server_env_extra"`
	RouterArgv     []string          `json:"router_argv"`
	RouterEnv      map[string]string `json:"router_env"`
	ClientArgv     []string          `json:"client_argv"`
	ClientEnv      map[string]string `json:"client_env"`
	EvalArgv       []string          `json:"eval_argv"`
	EvalEnv        map[string]string `json:"eval_env"`
	// Calls are every program the recipe ran, in order, by role.
	Calls []struct {
		Role string   `json:"role"`
		Argv []string `json:"argv"`
	} `json:"calls"`
}

// siteEnv are launcher site paths (mounts and caches of the CI hosts) that
// sweep does not plan; see Command.
var siteEnv = []string{"AIPERF_MMAP_CACHE_HOST_PATH", "AIPERF_DATASET_MMAP_CACHE_DIR", "VLLM_CACHE_ROOT"}

// bashOnlyEnv are the Bash knobs sweep resolves at plan time (see Command).
var bashOnlyEnv = []string{"MODEL_PATH", "EVAL_FRAMEWORK", "WEKA_LOADER_OVERRIDE", "GPU_METRICS_CSV"}

// serverEnv is the engine environment a sample records, as Command.Env
// holds it: both recorded maps without site paths and Bash-only knobs, the
// recorder's ${RESULT_DIR} as the planned result directory.
func (e sampleEntry) serverEnv() map[string]string {
	out := withoutSite(e.ServerEnv)
	for k, v := range e.ServerEnvExtra {
		if !slices.Contains(bashOnlyEnv, k) {
			out[k] = strings.ReplaceAll(v, "${RESULT_DIR}", recipes.DefaultResultDir)
		}
	}
	return out
}

// sampleFiles are the recorded samples with their number of points.
var sampleFiles = []struct {
	name string
	n    int
}{
	{"recipe-argv-sample.json", 44},
	{"recipe-argv-nvidia-sample.json", 43},
}

func loadSampleFile(t *testing.T, name string) []sampleEntry {
	t.Helper()
	data, err := os.ReadFile("../testdata/recipes/" + name)
	require.NoError(t, err)
	var es []sampleEntry
	require.NoError(t, json.Unmarshal(data, &es))
	return es
}

// loadSample returns every recorded point of every sample file.
func loadSample(t *testing.T) []sampleEntry {
	t.Helper()
	var out []sampleEntry
	for _, f := range sampleFiles {
		out = append(out, loadSampleFile(t, f.name)...)
	}
	return out
}

// planKey plans every row of one config key (benchmark rows and the
// evals-only selection), keyed by the row's JSON decoded as a map.
func planKey(t *testing.T, key, aiperf string) map[string]recipes.Point {
	t.Helper()
	g, err := generator()
	require.NoError(t, err)
	out := map[string]recipes.Point{}
	for _, evals := range []bool{false, true} {
		rows, err := g.TestConfig(matrix.TestConfigOptions{ConfigKeys: []string{key}, EvalOptions: matrix.EvalOptions{EvalsOnly: evals, NoEvals: !evals}})
		require.NoError(t, err)
		pts, err := recipes.Plan(rows, recipes.PlanOptions{Catalog: models.Builtin(), AiperfVersion: aiperf})
		require.NoError(t, err)
		for _, p := range pts {
			out[rowID(t, &p.Row)] = p
		}
	}
	return out
}

func rowID(t *testing.T, r any) string {
	t.Helper()
	data, err := json.Marshal(r)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	data, err = json.Marshal(m) // map keys sorted
	require.NoError(t, err)
	return string(data)
}

// flagSet parses argv with s and renders every flag's value canonically,
// so two argvs compare equal when the tool reads them the same way.
func flagSet(t *testing.T, s *schema.Schema, argv []string, escapes []schema.Escape) map[string]string {
	t.Helper()
	p, err := s.Parse(argv, schema.AllowUnchecked(escapes...))
	require.NoError(t, err, "argv %q", argv)
	out := map[string]string{}
	for _, name := range p.Flags() {
		v, _ := p.Get(name)
		switch {
		case v.Flag.Type == schema.Bool || v.Flag.Type == schema.BoolOptional:
			out[name] = strconv.FormatBool(v.Bool)
		case v.Flag.Type == schema.JSON:
			data, err := json.Marshal(v.JSON)
			require.NoError(t, err)
			out[name] = string(data)
		case len(v.Floats) > 0:
			out[name] = fmt.Sprint(v.Floats)
		default:
			out[name] = strings.Join(v.Strs, "\x00")
		}
	}
	for _, e := range p.Escapes {
		out[e.Flag] = strings.Join(e.Values, "\x00")
	}
	return out
}

func withoutSite(env map[string]string) map[string]string {
	out := maps.Clone(env)
	for _, k := range siteEnv {
		delete(out, k)
	}
	return out
}

func aiperfOnly(env map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range env {
		if strings.HasPrefix(k, "AIPERF_") {
			out[k] = v
		}
	}
	return out
}

// sampleClientArgv turns the recorded client argv into what sweep runs: the
// aiperf on PATH, the planned result directory and, for upstream aiperf
// 0.12.0, the documented deviations (package doc).
func sampleClientArgv(argv []string, upstream bool, conc int) []string {
	out := []string{"profile"}
	for i := 2; i < len(argv); i++ {
		tok := strings.ReplaceAll(argv[i], "${RESULT_DIR}", recipes.DefaultResultDir)
		if upstream {
			switch tok {
			case "--trace-idle-gap-cap-seconds":
				i++
				continue
			case "--warmup-requests-per-lane":
				n, _ := strconv.Atoi(argv[i+1])
				out = append(out, "--warmup-request-count", strconv.Itoa(n*conc))
				i++
				continue
			}
		}
		out = append(out, tok)
	}
	return out
}

// TestConformance checks every point of the two recorded examples: engine
// argv/env and router argv/env equal what InferenceX runs (flags compared as
// the engine parses them), the client carries the same settings (the fork
// exactly; 0.12.0 with the documented deviations only), and the eval command
// and env are equal.
func TestConformance(t *testing.T) {
	for _, f := range sampleFiles {
		t.Run(f.name, func(t *testing.T) {
			samples := loadSampleFile(t, f.name)
			require.Len(t, samples, f.n)
			checkSamples(t, samples)
		})
	}
}

func checkSamples(t *testing.T, samples []sampleEntry) {
	for _, aiperf := range []string{"sa-754356e9", recipes.DefaultAiperfVersion} {
		t.Run("aiperf@"+aiperf, func(t *testing.T) {
			plans := map[string]map[string]recipes.Point{}
			for i, e := range samples {
				if plans[e.ConfigKey] == nil {
					plans[e.ConfigKey] = planKey(t, e.ConfigKey, aiperf)
				}
				id := rowID(t, e.Row)
				p, ok := plans[e.ConfigKey][id]
				require.True(t, ok, "entry %d: the matrix has no row %s", i, id)
				name := fmt.Sprintf("%d_%s_tp%d_ep%d_dpa%t_conc%d", i, e.ConfigKey, p.Row.TP, p.Row.EP, p.Row.DPAttn, p.Row.Conc)
				if p.Eval != nil {
					name += "_eval"
				}
				t.Run(name, func(t *testing.T) { checkPoint(t, e, p, aiperf) })
			}
			planned := 0
			for _, ps := range plans {
				planned += len(ps)
			}
			assert.Equal(t, len(samples), planned, "every planned point has a recorded counterpart")
		})
	}
}

func checkPoint(t *testing.T, e sampleEntry, p recipes.Point, aiperf string) {
	rc, ok := models.Builtin().Recipe(p.Recipe)
	require.True(t, ok)
	es := schema.MustLoad(string(rc.Engine), rc.EngineVersion)

	// Engine: the program as InferenceX runs it, then the same flags.
	prog := len(strings.Fields(es.Program))
	assert.Equal(t, e.ServerArgv[:prog], p.Engine.Argv[:prog], "program")
	assert.Equal(t, flagSet(t, es, es.TrimProgram(e.ServerArgv), nil), flagSet(t, es, es.TrimProgram(p.Engine.Argv), p.Escapes), "engine flags")
	assert.Equal(t, e.serverEnv(), p.Engine.Env, "engine env")
	assert.Equal(t, e.ServerEnvUnset, p.Engine.Unset, "engine unset")

	// KV services (the Mooncake master) are the point's sidecars.
	var services, sidecars [][]string
	for _, c := range e.Calls {
		if c.Role == "kv-service" {
			services = append(services, c.Argv)
		}
	}
	for _, sc := range p.Sidecars {
		sidecars = append(sidecars, sc.Command.Argv)
	}
	assert.Equal(t, services, sidecars, "kv services")

	// Router.
	if e.RouterArgv == nil {
		assert.Nil(t, p.Router)
	} else if assert.NotNil(t, p.Router) {
		assert.Equal(t, e.RouterArgv, p.Router.Argv, "router argv")
		assert.Equal(t, withoutSite(e.RouterEnv), p.Router.Env, "router env")
		assert.Equal(t, recipes.HealthURL(p.Port), p.RouterHealthURL)
	}

	// Client.
	if e.ClientArgv == nil {
		assert.Nil(t, p.Client)
	} else if assert.NotNil(t, p.Client) {
		as := schema.MustLoad("aiperf", aiperf)
		want := sampleClientArgv(e.ClientArgv, aiperf == recipes.DefaultAiperfVersion, p.Row.Conc)
		assert.Equal(t, []string{"aiperf", "profile"}, p.Client.Argv[:2])
		assert.Equal(t, flagSet(t, as, want, nil), flagSet(t, as, p.Client.Argv[1:], nil), "client flags")
		assert.Equal(t, withoutSite(e.ClientEnv), aiperfOnly(p.Client.Env), "client env")
		if urls := e.ServerEnv["AIPERF_SERVER_METRICS_URLS"]; urls != "" {
			assert.Contains(t, p.MetricsURLs, urls)
		}
		assert.Equal(t, e.ServerEnv["AIPERF_REQUIRED_SERVER_METRIC_PREFIX"], p.RequiredMetricPrefix)
		if al := e.ServerEnv["SGLANG_SIMULATE_ACC_LEN"]; al != "" && assert.NotNil(t, p.GoldenAL) {
			assert.Equal(t, al, strconv.FormatFloat(*p.GoldenAL, 'f', -1, 64))
		}
	}

	// Eval.
	if e.EvalArgv == nil {
		assert.Nil(t, p.Eval)
	} else if assert.NotNil(t, p.Eval) {
		want := slices.Clone(e.EvalArgv)
		for i := range want {
			want[i] = strings.ReplaceAll(want[i], "${EVAL_RESULT_DIR}", recipes.EvalResultDir(recipes.DefaultResultDir))
		}
		assert.Equal(t, want, p.Eval.Argv, "eval argv")
		// The eval env is recorded without the variables recorded apart
		// for the server (ServerEnvExtra); the engine env covers those.
		got := maps.Clone(p.Eval.Env)
		for k := range e.ServerEnvExtra {
			delete(got, k)
		}
		assert.Equal(t, withoutSite(e.EvalEnv), got, "eval env")
		assert.Nil(t, p.GoldenAL, "eval points run real acceptance")
	}
}

// TestProfileSiteEnvMatchesSample checks that the launcher variables the
// plan leaves out (siteEnv) are exactly what the runner's profile exports,
// for every recorded point.
func TestProfileSiteEnvMatchesSample(t *testing.T) {
	for _, e := range loadSample(t) {
		runner, _ := e.Row["runner"].(string)
		p, err := recipes.ProfileFor(runner)
		require.NoError(t, err, e.ConfigKey)
		want := map[string]string{}
		for _, k := range siteEnv {
			if v, ok := e.ServerEnv[k]; ok {
				want[k] = v
			}
		}
		got := map[string]string{}
		for _, k := range siteEnv {
			if v, ok := p.Env[k]; ok {
				got[k] = v
			}
		}
		assert.Equal(t, want, got, "%s on %s", e.ConfigKey, runner)
	}
}
