package recipes_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"sweep/recipes"
	"sweep/recipes/models"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/recipes/schema"
)

var update = flag.Bool("update", false, "rewrite testdata/recipes/*.golden")

const mi325xKey = "qwen3.5-fp8-mi325x-sglang-agentic-mtp"

// shippedKeys are the config keys the built-in recipes serve.
var shippedKeys = []string{
	"qwen3.5-fp8-mi325x-sglang-agentic-mtp", "qwen3.5-fp4-mi355x-sglang-agentic-mtp",
	"qwen3.5-fp8-mi300x-sglang-agentic-mtp", "kimik3-fp4-mi355x-vllm-agentic-mtp",
	"dsv4-fp4-mi355x-vllm-agentic-mtp", "minimaxm3-fp8-mi300x-vllm-agentic-mtp",
	"glm5.2-fp8-mi325x-sglang-agentic-mtp", "minimaxm3-fp8-mi325x-vllm-agentic-mtp",
	"minimaxm3-fp4-mi355x-vllm-agentic-mtp", "glm5.2-fp4-mi355x-sglang-agentic-mtp",
	"dsv4-fp4-mi355x-sglang-agentic-mtp", "qwen3.5-fp8-b300-sglang-agentic-mtp",
	"qwen3.5-fp8-h200-sglang-agentic-mtp", "qwen3.5-fp8-h200-sglang-agentic-hicache-mtp",
	"qwen3.5-fp8-b300-sglang-agentic-power-ab", "qwen3.5-fp8-b200-sglang-agentic-mtp",
	"qwen3.5-fp4-b300-sglang-agentic-mtp", "qwen3.5-fp4-b300-sglang-agentic-power-ab",
	"qwen3.5-fp4-b200-sglang-agentic-mtp", "minimaxm3-fp8-h200-vllm-agentic-mtp", "minimaxm3-fp8-h100-vllm-agentic-mtp",
	"qwen3.5-fp8-h100-sglang-agentic-mtp", "glm5.2-fp4-b300-sglang-agentic-mtp", "glm5.2-fp4-b200-sglang-agentic-mtp",
	"minimaxm3-fp4-b300-vllm-agentic-mtp", "minimaxm3-fp4-b200-vllm-agentic-mtp",
	"dsv4-fp4-b300-sglang-agentic-hicache-mtp", "dsv4-fp4-b200-sglang-agentic-hicache-mtp",
	"dsv4-fp4-b300-vllm-agentic-mtp", "dsv4-fp4-b200-vllm-agentic-mtp", "kimik3-fp4-b300-vllm-agentic-dspark",
}

// generator parses the embedded configs once for all tests (read-only).
var generator = sync.OnceValues(func() (*matrix.Generator, error) {
	m, err := configs.DefaultMasters()
	if err != nil {
		return nil, err
	}
	r, err := configs.DefaultRunners()
	if err != nil {
		return nil, err
	}
	return &matrix.Generator{Masters: m, Runners: r}, nil
})

func rows(t testing.TB, o matrix.TestConfigOptions) matrix.Matrix {
	t.Helper()
	g, err := generator()
	require.NoError(t, err)
	if !o.EvalsOnly && !o.AllEvals {
		o.NoEvals = true
	}
	o.ScenarioTypes = []string{configs.ScenarioAgenticCoding}
	ms, err := g.TestConfig(o)
	require.NoError(t, err)
	return ms
}

func keyRows(t testing.TB, keys ...string) matrix.Matrix {
	return rows(t, matrix.TestConfigOptions{ConfigKeys: keys})
}

func TestPlanEveryShippedKey(t *testing.T) {
	checked := 0 // sidecars checked against their schema
	defer func() { assert.Positive(t, checked, "the shipped LMCache servers' commands were parsed") }()
	for _, version := range []string{recipes.DefaultAiperfVersion, "sa-754356e9"} {
		for _, key := range shippedKeys {
			t.Run(version+"/"+key, func(t *testing.T) {
				rs := keyRows(t, key)
				require.NotEmpty(t, rs)
				pts, err := recipes.Plan(rs, recipes.PlanOptions{Catalog: models.Builtin(), AiperfVersion: version})
				require.NoError(t, err)
				require.Len(t, pts, len(rs))
				rc, ok := models.Builtin().Recipe(pts[0].Recipe)
				require.True(t, ok)
				assert.Contains(t, rc.Keys, key, "the recipe lists the keys it serves")
				for _, p := range pts {
					require.NotNil(t, p.Client)
					if rc.SpecFor == nil || rc.SpecFor(&p.Row).Enabled() {
						require.NotNil(t, p.GoldenAL)
					} else {
						assert.Nil(t, p.GoldenAL, "a row the recipe runs without speculation has no golden AL")
					}
					// Every command parses with the schema it was built from.
					as := schema.MustLoad("aiperf", version)
					_, err := as.Parse(p.Client.Argv[1:])
					assert.NoError(t, err)
					es := schema.MustLoad(string(rc.Engine), rc.EngineVersion)
					_, err = es.Parse(es.TrimProgram(p.Engine.Argv), schema.AllowUnchecked(p.Escapes...))
					assert.NoError(t, err)
					// So does every sidecar whose program has a schema
					// (LMCache's servers; mooncake_master has none).
					for _, sc := range p.Sidecars {
						ss, err := recipes.CheckSidecar(sc)
						assert.NoError(t, err, "%s sidecar %s", p.ResultFilename, sc.Name)
						if ss != nil {
							checked++
						}
					}
				}
			})
		}
	}
}

func TestPlanMI325XHas32ValidPoints(t *testing.T) {
	pts, err := recipes.Plan(keyRows(t, mi325xKey), recipes.PlanOptions{Catalog: models.Builtin()})
	require.NoError(t, err)
	assert.Len(t, pts, 32)
	for _, p := range pts {
		assert.Equal(t, "qwen3.5_fp8_mi325x_mtp", p.Recipe)
		assert.Empty(t, p.Escapes)
		assert.Equal(t, 3.39, *p.GoldenAL)
	}
}

// TestPlanRejectsBadClientFlag: a recipe whose client passes a flag aiperf
// does not have fails planning, naming the recipe, the flag and the
// closest real flag, for every point.
func TestPlanRejectsBadClientFlag(t *testing.T) {
	rc, ok := models.Builtin().Recipe("qwen3.5_fp8_mi325x_mtp")
	require.True(t, ok)
	bad := rc.Clone()
	bad.Client.Extra = append(bad.Client.Extra, recipes.Flag("--use-chat-template", nil))
	cat, err := recipes.NewCatalog(bad)
	require.NoError(t, err)

	_, err = recipes.Plan(keyRows(t, mi325xKey), recipes.PlanOptions{Catalog: cat})
	require.Error(t, err)
	pe, ok := errors.AsType[*recipes.PlanError](err)
	require.True(t, ok)
	require.Len(t, pe.Problems, 32, "every point is listed")
	for _, p := range pe.Problems {
		assert.Equal(t, "qwen3.5_fp8_mi325x_mtp", p.Recipe)
		assert.Equal(t, "client", p.Role)
		se, ok := errors.AsType[*schema.Error](p)
		require.True(t, ok)
		assert.Equal(t, schema.UnknownFlag, se.Kind)
		assert.Equal(t, "--use-chat-template", se.Spelling)
		assert.Equal(t, "--apply-chat-template", se.Suggestion)
	}
	assert.Contains(t, err.Error(), "recipe qwen3.5_fp8_mi325x_mtp: "+mi325xKey+" tp8 c80: client: ")
	assert.Contains(t, err.Error(), "aiperf 0.12.0 has no flag --use-chat-template (did you mean --apply-chat-template?)")
	assert.Contains(t, err.Error(), "32 problem(s) in 32 point(s)")
}

// TestPlanRejectsBadSidecarFlag: a sidecar's command is checked against
// its program's flag schema at plan time, as the engine's and the
// client's are: an LMCache server flag the schema does not have fails
// the plan, naming the recipe, the point, the sidecar, the flag, the
// closest real flag and the fix. Before, only the simulated engine read
// the servers' commands, at its start, and a real run would have started
// the server with the flag.
func TestPlanRejectsBadSidecarFlag(t *testing.T) {
	const key = "minimaxm3-fp8-mi300x-vllm-agentic-mtp"
	rc, ok := models.Builtin().Recipe("minimaxm3_fp8_mi300x_mtp")
	require.True(t, ok)
	bad := rc.Clone()
	lm := recipes.LMCache()
	servers := lm.Sidecars
	lm.Sidecars = func(c *recipes.Ctx) []recipes.Sidecar {
		out := servers(c)
		out[1].Command.Argv = append(out[1].Command.Argv, "--l1-size", "10")
		return out
	}
	bad.Offload = []recipes.Offload{lm}
	cat, err := recipes.NewCatalog(bad)
	require.NoError(t, err)

	rs := slices.DeleteFunc(keyRows(t, key), func(r *matrix.Row) bool { return r.KVOffloadBackend == nil || r.KVOffloadBackend.Name != "lmcache" })
	require.Len(t, rs, 1, "the key's one LMCache point")
	_, err = recipes.Plan(rs, recipes.PlanOptions{Catalog: cat})
	pe, ok := errors.AsType[*recipes.PlanError](err)
	require.True(t, ok, "%v", err)
	require.Len(t, pe.Problems, 1)
	p := pe.Problems[0]
	assert.Equal(t, "sidecar lmcache-1", p.Role)
	se, ok := errors.AsType[*schema.Error](p)
	require.True(t, ok)
	assert.Equal(t, schema.UnknownFlag, se.Kind)
	assert.Equal(t, "--l1-size", se.Spelling)
	assert.Equal(t, "recipe minimaxm3_fp8_mi300x_mtp: "+key+" tp8 kv:dram c16: sidecar lmcache-1: lmcache 0.5.3 has no flag --l1-size (did you mean --l1-size-gb?); "+
		"fix the sidecar's command (the recipe's offload, recipes/offload.go), or add a flag the program takes to its partial schema, recipes/schema/data/lmcache@0.5.3.yaml", err.Error())
}

// TestCheckSidecar: a sidecar is checked with its program's schema; a
// program with none (the Mooncake master) is not checked.
func TestCheckSidecar(t *testing.T) {
	side := func(argv ...string) recipes.Sidecar {
		return recipes.Sidecar{Name: "s", Command: recipes.Command{Argv: argv}}
	}
	s, err := recipes.CheckSidecar(side("mooncake_master", "--port", "20088", "--no-such-flag"))
	assert.Nil(t, s)
	assert.NoError(t, err)
	s, err = recipes.CheckSidecar(side("lmcache", "server", "--port", "5555", "--l1-size-gb", "10", "--eviction-policy", "LRU"))
	require.NotNil(t, s)
	assert.Equal(t, "lmcache@0.5.3", s.ID())
	assert.NoError(t, err)
	_, err = recipes.CheckSidecar(side("lmcache", "server", "--port", "5555", "--l1-size-gb", "10", "--eviction-policy", "FIFO"))
	pe := schema.Problems(err)
	require.Len(t, pe, 1)
	assert.Equal(t, schema.BadChoice, pe[0].Kind)
}

func TestPlanOptions(t *testing.T) {
	tp8conc4 := func(t *testing.T) matrix.Matrix {
		rs := rows(t, matrix.TestConfigOptions{ConfigKeys: []string{mi325xKey}, Conc: []int{4}})
		return slices.DeleteFunc(rs, func(r *matrix.Row) bool { return r.TP != 8 || r.EP != 1 })
	}
	tests := []struct {
		name          string
		opts          recipes.PlanOptions
		wantFlags     map[string]string // client flag -> value ("" for a bare flag)
		wantAbsent    []string
		wantEngineArg []string
		wantFast      string
	}{
		{
			name:       "official 0.12.0",
			opts:       recipes.PlanOptions{Catalog: models.Builtin()},
			wantFlags:  map[string]string{"--benchmark-duration": "3600", "--warmup-request-count": "40", "--url": "http://localhost:8888"},
			wantAbsent: []string{"--unsafe-override", "--warmup-requests-per-lane", "--trace-idle-gap-cap-seconds"},
			wantFast:   "0",
		},
		{
			name:       "fast fork",
			opts:       recipes.PlanOptions{Catalog: models.Builtin(), Fast: true, AiperfVersion: "fork"},
			wantFlags:  map[string]string{"--benchmark-duration": "1200", "--warmup-requests-per-lane": "1", "--trace-idle-gap-cap-seconds": "300"},
			wantAbsent: []string{"--unsafe-override"},
			wantFast:   "1",
		},
		{
			name:      "fast ignores duration",
			opts:      recipes.PlanOptions{Catalog: models.Builtin(), Fast: true, Duration: 300},
			wantFlags: map[string]string{"--benchmark-duration": "1200", "--warmup-request-count": "4"},
			wantFast:  "1",
		},
		{
			name:      "short duration needs unsafe override",
			opts:      recipes.PlanOptions{Catalog: models.Builtin(), Duration: 600},
			wantFlags: map[string]string{"--benchmark-duration": "600", "--unsafe-override": ""},
			wantFast:  "0",
		},
		{
			name:      "fast probe: its duration, fast warm-up, unsafe override below 900 s",
			opts:      recipes.PlanOptions{Catalog: models.Builtin(), Fast: true, ProbeDuration: 300},
			wantFlags: map[string]string{"--benchmark-duration": "300", "--warmup-request-count": "4", "--unsafe-override": ""},
			wantFast:  "1",
		},
		{
			name:       "probe of 900 s or more needs no override",
			opts:       recipes.PlanOptions{Catalog: models.Builtin(), Fast: true, ProbeDuration: 900},
			wantFlags:  map[string]string{"--benchmark-duration": "900"},
			wantAbsent: []string{"--unsafe-override"},
			wantFast:   "1",
		},
		{
			name:          "port, model path and result dir",
			opts:          recipes.PlanOptions{Catalog: models.Builtin(), Port: 9000, ModelPath: "/models/qwen", ResultDir: "/tmp/r"},
			wantFlags:     map[string]string{"--url": "http://localhost:9000", "--output-artifact-dir": "/tmp/r/aiperf_artifacts", "--server-metrics": "http://localhost:9000/metrics"},
			wantEngineArg: []string{"--model-path", "/models/qwen", "--port", "9000", "--tokenizer-path", "Qwen/Qwen3.5-397B-A17B-FP8"},
			wantFast:      "0",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pts, err := recipes.Plan(tp8conc4(t), tc.opts)
			require.NoError(t, err)
			require.Len(t, pts, 1)
			p := pts[0]
			argv := p.Client.Argv
			for f, v := range tc.wantFlags {
				i := slices.Index(argv, f)
				require.GreaterOrEqual(t, i, 0, "%s missing from %q", f, argv)
				if v != "" {
					assert.Equal(t, v, argv[i+1], f)
				}
			}
			for _, f := range tc.wantAbsent {
				assert.NotContains(t, argv, f)
			}
			for i := 0; i+1 < len(tc.wantEngineArg); i += 2 {
				j := slices.Index(p.Engine.Argv, tc.wantEngineArg[i])
				require.GreaterOrEqual(t, j, 0)
				assert.Equal(t, tc.wantEngineArg[i+1], p.Engine.Argv[j+1])
			}
			assert.Equal(t, tc.wantFast, p.Engine.Env["AIPERF_EXPERIMENTAL_FAST"])
			assert.Equal(t, tc.opts.ProbeDuration, p.ProbeDuration)
		})
	}
}

func TestPlanEvalOption(t *testing.T) {
	pts, err := recipes.Plan(keyRows(t, "dsv4-fp4-mi355x-vllm-agentic-mtp"), recipes.PlanOptions{Catalog: models.Builtin(), Eval: true, Fast: true})
	require.NoError(t, err)
	for _, p := range pts {
		require.NotNil(t, p.Eval)
		assert.Nil(t, p.Client)
		assert.Nil(t, p.GoldenAL)
		assert.False(t, p.Fast, "eval jobs never run fast")
		assert.NotContains(t, strings.Join(p.Engine.Argv, " "), "synthetic")
		assert.Contains(t, p.Eval.Argv[12], "base_url=http://0.0.0.0:8888/v1/chat/completions", "eval goes through the public (router) port")
	}
}

func TestDPAttentionRouter(t *testing.T) {
	rs := slices.DeleteFunc(keyRows(t, "dsv4-fp4-mi355x-vllm-agentic-mtp"), func(r *matrix.Row) bool { return !r.DPAttn })
	require.Len(t, rs, 1)
	pts, err := recipes.Plan(rs, recipes.PlanOptions{Catalog: models.Builtin(), Port: 7000})
	require.NoError(t, err)
	p := pts[0]
	require.NotNil(t, p.Router)
	assert.Equal(t, 7001, p.EnginePort)
	assert.Equal(t, "http://localhost:7001/health", p.HealthURL)
	assert.Equal(t, "http://localhost:7000/health", p.RouterHealthURL)
	assert.Equal(t, []string{"http://localhost:7000/metrics", "http://localhost:7001/metrics"}, p.MetricsURLs)
	assert.Contains(t, strings.Join(p.Router.Argv, " "), "--worker-urls http://localhost:7001 --policy consistent_hash --intra-node-data-parallel-size 8 --host 0.0.0.0 --port 7000 --prometheus-host 127.0.0.1 --prometheus-port 17000")
	assert.Contains(t, p.Escapes, schema.Escape{Flag: "vllm-router", Reason: "no flag schema for the router yet; its argv is not validated"})
}

func TestOffloadSizing(t *testing.T) {
	find := func(t *testing.T, key string, keep func(*matrix.Row) bool) recipes.Point {
		t.Helper()
		rs := slices.DeleteFunc(keyRows(t, key), func(r *matrix.Row) bool { return !keep(r) })
		require.NotEmpty(t, rs)
		pts, err := recipes.Plan(rs[:1], recipes.PlanOptions{Catalog: models.Builtin()})
		require.NoError(t, err)
		return pts[0]
	}
	dram := func(r *matrix.Row) bool { return r.KVOffloading == "dram" }
	value := func(argv []string, flag string) string {
		i := slices.Index(argv, flag)
		if i < 0 || i+1 >= len(argv) {
			return ""
		}
		return argv[i+1]
	}
	t.Run("b300 hicache reserves 1GB/rank", func(t *testing.T) {
		p := find(t, "qwen3.5-fp8-b300-sglang-agentic-mtp", dram)
		assert.Equal(t, 599, p.Row.TotalCPUDRAMGB)
		assert.Equal(t, "144", value(p.Engine.Argv, "--hicache-size"))
		assert.Equal(t, "64", value(p.Engine.Argv, "--page-size"))
	})
	t.Run("h200 hicache two pools", func(t *testing.T) {
		p := find(t, "qwen3.5-fp8-h200-sglang-agentic-hicache-mtp", dram)
		assert.Equal(t, "77", value(p.Engine.Argv, "--hicache-size"))
	})
	t.Run("kimi simple CPU offload", func(t *testing.T) {
		p := find(t, "kimik3-fp4-mi355x-vllm-agentic-mtp", dram)
		assert.JSONEq(t, `{"kv_connector":"SimpleCPUOffloadConnector","kv_role":"kv_both","kv_connector_extra_config":{"cpu_bytes_to_use_per_rank":187375000000,"lazy_offload":false}}`, value(p.Engine.Argv, "--kv-transfer-config"))
		assert.Equal(t, "42", p.Engine.Env["PYTHONHASHSEED"])
		assert.JSONEq(t, `{"model":"Inferact/Kimi-K3-DSpark","num_speculative_tokens":2,"method":"dspark","attention_backend":"TRITON_MLA","kv_cache_dtype":"auto","draft_sample_method":"probabilistic","rejection_sample_method":"synthetic","synthetic_acceptance_length":2.51}`, value(p.Engine.Argv, "--speculative-config"))
	})
	t.Run("minimax lmcache shards", func(t *testing.T) {
		p := find(t, "minimaxm3-fp4-mi355x-vllm-agentic-mtp", dram)
		require.Len(t, p.Sidecars, 4)
		assert.Equal(t, "74", value(p.Sidecars[3].Command.Argv, "--l1-size-gb"))
		assert.Equal(t, "5558", value(p.Sidecars[3].Command.Argv, "--port"))
		assert.Equal(t, "http://127.0.0.1:8083/healthcheck", p.Sidecars[3].HealthURL)
		assert.Contains(t, value(p.Engine.Argv, "--kv-transfer-config"), `"lmcache.mp.server_urls":"tcp://127.0.0.1:5555,tcp://127.0.0.1:5556,tcp://127.0.0.1:5557,tcp://127.0.0.1:5558"`)
		// LMCache's flag schema, which the simulated engine reads the
		// servers with, accepts every server's command.
		s := schema.MustLoad("lmcache", "")
		for _, sc := range p.Sidecars {
			_, err := s.Parse(s.TrimProgram(sc.Command.Argv))
			assert.NoError(t, err, "%q", sc.Command.Argv)
		}
	})
	t.Run("glm fp4 ratio hicache and k=5 golden AL", func(t *testing.T) {
		p := find(t, "glm5.2-fp4-mi355x-sglang-agentic-mtp", dram)
		assert.Equal(t, "1.5", value(p.Engine.Argv, "--hicache-ratio"))
		assert.Equal(t, 3.61, *p.GoldenAL)
		assert.Equal(t, "3.61", p.Engine.Env["SGLANG_SIMULATE_ACC_LEN"])
	})
}

func TestLookup(t *testing.T) {
	runners, err := configs.DefaultRunners()
	require.NoError(t, err)
	cat := models.Builtin()
	row := func(runner, prefix, framework string) *matrix.Row {
		return &matrix.Row{Kind: matrix.AgenticSingleNode, Runner: runner, ModelPrefix: prefix, Precision: "fp8", Framework: configs.Engine(framework), SpecDecoding: "mtp"}
	}
	tests := []struct {
		name, want, wantErr string
		row                 *matrix.Row
	}{
		{name: "mi325x omits the framework", row: row("cluster:mi325x-amds", "qwen3.5", "sglang"), want: "qwen3.5_fp8_mi325x_mtp"},
		{name: "mi355x framework name first", row: &matrix.Row{Runner: "cluster:mi355x-amds", ModelPrefix: "qwen3.5", Precision: "fp4", Framework: "sglang", SpecDecoding: "mtp"}, want: "qwen3.5_fp4_mi355x_sglang_mtp"},
		{name: "mi355x falls back", row: &matrix.Row{Runner: "cluster:mi355x-amds", ModelPrefix: "kimik3", Precision: "fp4", Framework: "vllm", SpecDecoding: "mtp"}, want: "kimik3_fp4_mi355x_mtp"},
		{name: "h200 falls back", row: row("cluster:h200-dgxc", "qwen3.5", "sglang"), want: "qwen3.5_fp8_h200_mtp"},
		{name: "runner name routes too", row: row("mi325x-amds_07", "qwen3.5", "sglang"), want: "qwen3.5_fp8_mi325x_mtp"},
		{name: "no recipe", row: row("cluster:mi325x-amds", "llama9", "sglang"), wantErr: "no recipe: launch_mi325x-amds.sh would run benchmarks/single_node/agentic/llama9_fp8_mi325x_mtp.sh"},
		{name: "atom key without recipe", row: &matrix.Row{Runner: "cluster:mi355x-amds", ModelPrefix: "qwen3.5", Precision: "fp8", Framework: "atom", SpecDecoding: "mtp"}, wantErr: "would run benchmarks/single_node/agentic/qwen3.5_fp8_mi355x_atom_mtp.sh, and sweep has no recipe"},
		{name: "unknown launcher", row: row("gb200-nv", "qwen3.5", "sglang"), wantErr: "runner gb200-nv: no launcher launch_gb200-nv.sh"},
		{name: "b200 framework name first", row: row("cluster:b200-dgxc", "qwen3.5", "sglang"), want: "qwen3.5_fp8_b200_sglang_mtp"},
		{name: "b200 falls back", row: &matrix.Row{Runner: "cluster:b200-dgxc", ModelPrefix: "minimaxm3", Precision: "fp4", Framework: "vllm", SpecDecoding: "mtp"}, want: "minimaxm3_fp4_b200_mtp"},
		{name: "h100 never names the framework", row: row("cluster:h100-dgxc", "minimaxm3", "vllm"), want: "minimaxm3_fp8_h100_mtp"},
		{name: "script InferenceX removed", row: &matrix.Row{Runner: "cluster:h100-dgxc", ModelPrefix: "qwen3.5", Precision: "fp8", Framework: "sglang"}, wantErr: "not supported yet: launch_h100-dgxc-slurm.sh would run benchmarks/single_node/agentic/qwen3.5_fp8_h100.sh, which InferenceX removed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc, err := cat.Lookup(tc.row, runners)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, rc.Name)
		})
	}
}

func TestPlanReportsEveryBadRow(t *testing.T) {
	good := keyRows(t, mi325xKey)[:2]
	noRecipe := good[0].Clone()
	noRecipe.ModelPrefix = "llama9"
	dpa := good[1].Clone()
	dpa.DPAttn = true
	_, err := recipes.Plan(matrix.Matrix{good[0], noRecipe, dpa, good[1]}, recipes.PlanOptions{Catalog: models.Builtin()})
	pe, ok := errors.AsType[*recipes.PlanError](err)
	require.True(t, ok)
	require.Len(t, pe.Problems, 2)
	assert.Equal(t, 1, pe.Problems[0].Index)
	assert.Contains(t, pe.Problems[0].Error(), mi325xKey+" tp2 ep2 c1: recipe: no recipe")
	assert.Equal(t, 2, pe.Problems[1].Index)
	assert.Contains(t, pe.Problems[1].Error(), "recipe qwen3.5_fp8_mi325x_mtp: "+mi325xKey+" tp2 ep2 dpa c4: recipe: dp-attn rows are not supported")
}

func TestPointJSONShape(t *testing.T) {
	pts, err := recipes.Plan(keyRows(t, mi325xKey)[:1], recipes.PlanOptions{Catalog: models.Builtin()})
	require.NoError(t, err)
	data, err := json.Marshal(pts[0]) // a value, not addressable: MarshalJSON has a value receiver
	require.NoError(t, err)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &m))
	for _, k := range []string{"row", "engine", "router", "client", "eval", "metrics_urls", "required_metric_prefix", "golden_al"} {
		assert.Contains(t, m, k)
	}
	assert.JSONEq(t, "null", string(m["router"]))
	assert.JSONEq(t, "null", string(m["eval"]))
	assert.JSONEq(t, `"sglang:"`, string(m["required_metric_prefix"]))
	assert.JSONEq(t, "3.39", string(m["golden_al"]))
	assert.JSONEq(t, `["http://localhost:8888/metrics"]`, string(m["metrics_urls"]))
	var row map[string]any
	require.NoError(t, json.Unmarshal(m["row"], &row))
	assert.Equal(t, "qwen3.5_tp2_conc1_kvnone_spec-mtp", row["exp-name"])
	var engine struct {
		Argv []string          `json:"argv"`
		Env  map[string]string `json:"env"`
	}
	require.NoError(t, json.Unmarshal(m["engine"], &engine))
	assert.Equal(t, []string{"python3", "-m", "sglang.launch_server"}, engine.Argv[:3])
	assert.Equal(t, "3.39", engine.Env["SGLANG_SIMULATE_ACC_LEN"])
}

func TestPlanTextGolden(t *testing.T) {
	pts, err := recipes.Plan(keyRows(t, mi325xKey), recipes.PlanOptions{Catalog: models.Builtin()})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, recipes.WriteText(&buf, pts))
	golden := "../testdata/recipes/plan-" + mi325xKey + ".golden"
	if *update {
		require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), buf.String(), "run go test ./recipes -run TestPlanTextGolden -update and review the diff")
}

func TestBuiltinCatalog(t *testing.T) {
	a, b := models.Builtin(), models.Builtin()
	ra, _ := a.Recipe("minimaxm3_fp4_mi355x_mtp")
	rb, _ := b.Recipe("minimaxm3_fp4_mi355x_mtp")
	ra.Spec.VLLM.NumSpeculativeTokens = 99
	assert.Equal(t, 3, rb.Spec.VLLM.NumSpeculativeTokens, "Builtin returns fresh values")
	assert.Len(t, a.Recipes(), 28)
	_, err := recipes.NewCatalog(ra, rb)
	assert.ErrorContains(t, err, "recipe minimaxm3_fp4_mi355x_mtp defined twice")
}

func BenchmarkPlanAllShippedKeys(b *testing.B) {
	rs := keyRows(b, shippedKeys...)
	for b.Loop() {
		if _, err := recipes.Plan(rs, recipes.PlanOptions{Catalog: models.Builtin()}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDeviationTable keeps the package doc's 0.12.0 table in step with what
// the client builder does: every flag the fork command has and the 0.12.0
// command lacks is named in doc.go.
func TestDeviationTable(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	rs := rows(t, matrix.TestConfigOptions{ConfigKeys: []string{mi325xKey}, Conc: []int{4}})[:1]
	fork, err := recipes.Plan(rs, recipes.PlanOptions{Catalog: models.Builtin(), AiperfVersion: "sa-754356e9"})
	require.NoError(t, err)
	up, err := recipes.Plan(rs, recipes.PlanOptions{Catalog: models.Builtin()})
	require.NoError(t, err)
	for _, tok := range fork[0].Client.Argv {
		if strings.HasPrefix(tok, "--") && !slices.Contains(up[0].Client.Argv, tok) {
			assert.Contains(t, string(doc), tok, "deviation not documented")
		}
	}
	for _, tok := range up[0].Client.Argv {
		if strings.HasPrefix(tok, "--") && !slices.Contains(fork[0].Client.Argv, tok) {
			assert.Contains(t, string(doc), tok, "deviation not documented")
		}
	}
}

// TestPlanArmsGolden writes the first point of every arm (tp, ep, dp-attn,
// offload) of every shipped key, plus the eval rows, so a review sees every
// recipe variation in one file.
func TestPlanArmsGolden(t *testing.T) {
	var all matrix.Matrix
	for _, key := range shippedKeys {
		seen := map[string]bool{}
		for _, r := range keyRows(t, key) {
			arm := fmt.Sprintf("tp%d ep%d dpa%t %s", r.TP, r.EP, r.DPAttn, recipes.KVName(r))
			if !seen[arm] {
				seen[arm] = true
				all = append(all, r)
			}
		}
	}
	all = append(all, rows(t, matrix.TestConfigOptions{ConfigKeys: shippedKeys, EvalOptions: matrix.EvalOptions{EvalsOnly: true}})...)
	pts, err := recipes.Plan(all, recipes.PlanOptions{Catalog: models.Builtin()})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, recipes.WriteText(&buf, pts))
	golden := "../testdata/recipes/plan-arms.golden"
	if *update {
		require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), buf.String(), "run go test ./recipes -run TestPlanArmsGolden -update and review the diff")
}

// TestPointJSONRoundTrip reads back every planned point of the shipped
// keys (benchmark and eval rows) from its JSON: the same point, row key
// included, and the same bytes.
func TestPointJSONRoundTrip(t *testing.T) {
	all := rows(t, matrix.TestConfigOptions{ConfigKeys: shippedKeys, EvalOptions: matrix.EvalOptions{NoEvals: true}})
	all = append(all, rows(t, matrix.TestConfigOptions{ConfigKeys: shippedKeys, EvalOptions: matrix.EvalOptions{EvalsOnly: true}})...)
	for _, opts := range []recipes.PlanOptions{{Catalog: models.Builtin()}, {Catalog: models.Builtin(), Fast: true, AiperfVersion: "fork", Port: 9000}} {
		pts, err := recipes.Plan(all, opts)
		require.NoError(t, err)
		data, err := json.Marshal(pts)
		require.NoError(t, err)
		var back []recipes.Point
		require.NoError(t, json.Unmarshal(data, &back))
		require.Len(t, back, len(pts))
		for i := range pts {
			require.Equal(t, pts[i], back[i], "point %d %s", i, pts[i].ResultFilename)
			require.NotEmpty(t, back[i].Row.ConfigKey)
		}
		again, err := json.Marshal(back)
		require.NoError(t, err)
		assert.Equal(t, string(data), string(again))
	}
	var p recipes.Point
	assert.ErrorContains(t, json.Unmarshal([]byte(`{"row": {"tp": 8}, "engin": {}}`), &p), `unknown field "engin"`)
	assert.ErrorContains(t, json.Unmarshal([]byte(`{"engine": {"argv": ["x"]}}`), &p), `no "row"`)
}

// TestServerKey: two points share a key exactly when they plan the same
// server (engine command and environment, sidecars, router), whatever
// their load.
func TestServerKey(t *testing.T) {
	pts, err := recipes.Plan(rows(t, matrix.TestConfigOptions{ConfigKeys: shippedKeys, EvalOptions: matrix.EvalOptions{NoEvals: true}}), recipes.PlanOptions{Catalog: models.Builtin()})
	require.NoError(t, err)
	type server struct {
		Engine      recipes.Command
		CommandFile string
		Sidecars    []recipes.Sidecar
		Router      *recipes.Command
		Health      [2]string
	}
	serverOf := func(p recipes.Point) server {
		return server{p.Engine, p.CommandFile, p.Sidecars, p.Router, [2]string{p.HealthURL, p.RouterHealthURL}}
	}
	shared := 0
	for i := range pts {
		for j := i + 1; j < len(pts); j++ {
			same := reflect.DeepEqual(serverOf(pts[i]), serverOf(pts[j]))
			assert.Equal(t, same, recipes.ServerKey(pts[i]) == recipes.ServerKey(pts[j]), "%s vs %s", pts[i].ResultFilename, pts[j].ResultFilename)
			if same {
				shared++
			}
		}
	}
	t.Logf("%d points, %d pairs share a server", len(pts), shared)

	p := pts[0]
	c := *p.Client
	c.Argv = append(slices.Clone(c.Argv), "--concurrency", "999")
	p.Client, p.Row.Conc, p.ResultDir = &c, 999, "/elsewhere"
	assert.Equal(t, recipes.ServerKey(pts[0]), recipes.ServerKey(p), "the load is not part of the server")
	r := p.Engine
	p.Router = &r
	assert.NotEqual(t, recipes.ServerKey(pts[0]), recipes.ServerKey(p), "the router is part of the server")
	p = pts[0]
	p.Engine.Env = map[string]string{"X": "1"}
	assert.NotEqual(t, recipes.ServerKey(pts[0]), recipes.ServerKey(p), "the environment is part of the server")
}

// TestPlanEveryPointGolden holds the whole planned point (argv, escapes,
// environment, result name) of every benchmark and eval row of the
// shipped keys, at every concurrency, to a digest per point, so a change
// to any recipe or argument group that moves one byte of one point names
// that point. TestPlanArmsGolden shows the first point of each arm in full.
func TestPlanEveryPointGolden(t *testing.T) {
	all := rows(t, matrix.TestConfigOptions{ConfigKeys: shippedKeys, EvalOptions: matrix.EvalOptions{NoEvals: true}})
	all = append(all, rows(t, matrix.TestConfigOptions{ConfigKeys: shippedKeys, EvalOptions: matrix.EvalOptions{EvalsOnly: true}})...)
	pts, err := recipes.Plan(all, recipes.PlanOptions{Catalog: models.Builtin()})
	require.NoError(t, err)
	var buf bytes.Buffer
	for _, p := range pts {
		data, err := json.Marshal(p)
		require.NoError(t, err)
		fmt.Fprintf(&buf, "%x %s %s\n", sha256.Sum256(data), p.Row.ConfigKey, p.ResultFilename)
	}
	golden := "../testdata/recipes/plan-points.golden"
	if *update {
		require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), buf.String(), "a planned point changed: run go test ./recipes -run TestPlanEveryPointGolden -update, and sweep plan the named point to review it")
}

// TestPlanNeedsCatalog: the machinery ships no recipes of its own; a plan
// without a catalog is an options error naming where the shipped ones are.
func TestPlanNeedsCatalog(t *testing.T) {
	_, err := recipes.Plan(nil, recipes.PlanOptions{})
	require.ErrorIs(t, err, recipes.ErrInvalidOptions)
	assert.ErrorContains(t, err, "models.Builtin()")
}

// TestPointJSONRefusesPaths: a planned point's result_filename and
// command_file name files in its result directory; "../victim/x" in a
// plan file made `sweep run --plan` write outside --out.
func TestPointJSONRefusesPaths(t *testing.T) {
	pts, err := recipes.Plan(keyRows(t, mi325xKey)[:1], recipes.PlanOptions{Catalog: models.Builtin()})
	require.NoError(t, err)
	for _, tc := range []struct{ key, value, err string }{
		{"result_filename", "../victim/existing", `planned point: result_filename "../victim/existing" must be a file name, not a path`},
		{"command_file", "../victim/existing.txt", `planned point: command_file "../victim/existing.txt" must be a file name, not a path`},
		{"result_filename", "", "planned point: result_filename is empty: want a file name"},
	} {
		data, err := json.Marshal(pts[0])
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(data, &m))
		m[tc.key] = tc.value
		data, err = json.Marshal(m)
		require.NoError(t, err)
		var p recipes.Point
		assert.EqualError(t, json.Unmarshal(data, &p), tc.err, tc.key)
	}
	data, err := json.Marshal(pts[0])
	require.NoError(t, err)
	var p recipes.Point
	require.NoError(t, json.Unmarshal(data, &p), "a planned point reads back")
}

// TestSpeculativeConfigFloatText: the golden AL inside vLLM's
// --speculative-config is written as Python writes a float, so an AL of
// exactly 3 is "3.0" as in InferenceX's argv (the B300 Kimi-K3 point at
// conc 16, 3 speculative tokens), not "3".
func TestSpeculativeConfigFloatText(t *testing.T) {
	rs := slices.DeleteFunc(keyRows(t, "kimik3-fp4-b300-vllm-agentic-dspark"), func(r *matrix.Row) bool {
		return r.Conc != 16 || r.EvalOnly != nil && *r.EvalOnly
	})
	require.NotEmpty(t, rs)
	pts, err := recipes.Plan(rs[:1], recipes.PlanOptions{Catalog: models.Builtin()})
	require.NoError(t, err)
	argv := pts[0].Engine.Argv
	i := slices.Index(argv, "--speculative-config")
	require.GreaterOrEqual(t, i, 0)
	assert.Contains(t, argv[i+1], `"num_speculative_tokens":3,`)
	assert.Contains(t, argv[i+1], `"synthetic_acceptance_length":3.0}`)
}

// TestSubmissionProblemReadsAnAttachedDuration: the duration a
// submission problem names is the client's --benchmark-duration in
// either form. Before, --benchmark-duration=300 was "its duration".
func TestSubmissionProblemReadsAnAttachedDuration(t *testing.T) {
	p := recipes.Point{Client: &recipes.Command{Argv: []string{"aiperf", "profile", "--benchmark-duration=300", "--unsafe-override"}}}
	assert.True(t, strings.HasPrefix(p.SubmissionProblem(), "300 s is below the "), "got %q", p.SubmissionProblem())
}
