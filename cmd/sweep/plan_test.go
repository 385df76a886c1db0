package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/recipes"
)

func TestNewPlanCmdFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want func(o *planOptions)
		err  string
	}{
		{name: "defaults", args: []string{"--config-keys", "k"}, want: func(o *planOptions) {
			assert.Equal(t, []string{"k"}, o.ConfigKeys)
			assert.Equal(t, "text", o.Format)
			assert.Equal(t, recipes.DefaultPort, o.Plan.Port)
			assert.Equal(t, recipes.DefaultResultDir, o.Plan.ResultDir)
			assert.Equal(t, recipes.DefaultAiperfVersion, o.Plan.AiperfVersion)
			assert.False(t, o.Eval || o.Plan.Fast)
		}},
		{name: "every flag", args: []string{"--config-keys", "a", "b", "--conc", "4", "8", "--eval", "--fast", "--format", "json", "--port", "9000",
			"--model-path", "/m", "--result-dir", "/r", "--aiperf-version", "sa-754356e9", "--duration", "1000", "--runner-config", "r.yaml"},
			want: func(o *planOptions) {
				assert.Equal(t, []string{"a", "b"}, o.ConfigKeys)
				assert.Equal(t, []int{4, 8}, o.Conc)
				assert.True(t, o.Eval && o.Plan.Fast)
				assert.Equal(t, "json", o.Format)
				assert.Equal(t, recipes.PlanOptions{Port: 9000, ModelPath: "/m", ResultDir: "/r", AiperfVersion: "sa-754356e9", Duration: 1000, Fast: true}, o.Plan)
				assert.Equal(t, "r.yaml", o.Inputs.RunnerConfig)
			}},
		{name: "filters", args: []string{"--config-keys", "k", "--tp", "4", "8", "--ep", "1", "--dp-attn=false"}, want: func(o *planOptions) {
			assert.Equal(t, []int{4, 8}, o.TP)
			assert.Equal(t, []int{1}, o.EP)
			require.NotNil(t, o.DPAttn)
			assert.False(t, *o.DPAttn)
		}},
		{name: "kv-offloading filter", args: []string{"--config-keys", "k", "--kv-offloading", "dram"}, want: func(o *planOptions) {
			assert.Equal(t, "dram", o.KVOffloading)
		}},
		{name: "kv-offloading that is no mode", args: []string{"--config-keys", "k", "--kv-offloading", "ssd"}, err: `--kv-offloading "ssd": want one of none, dram`},
		{name: "no dp-attn filter by default", args: []string{"--config-keys", "k"}, want: func(o *planOptions) { assert.Nil(t, o.DPAttn) }},
		{name: "keys required", args: nil, err: "--config-keys is required"},
		{name: "bad format", args: []string{"--config-keys", "k", "--format", "yaml"}, err: `--format "yaml": want text or json`},
		{name: "negative duration", args: []string{"--config-keys", "k", "--duration", "-5"}, err: "--duration -5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseOptions(t, newPlanCmd, tc.args...)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				var fe *FlagError
				require.ErrorAs(t, err, &fe, "usage errors exit 2")
				return
			}
			require.NoError(t, err)
			tc.want(got)
		})
	}
}

func TestPlanRun(t *testing.T) {
	t.Run("text, 32 points", func(t *testing.T) {
		var out bytes.Buffer
		err := planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &out}, ConfigKeys: []string{"qwen3.5-fp8-mi325x-sglang-agentic-mtp"},
			Format: "text", Plan: recipes.PlanOptions{Port: 8888}})
		require.NoError(t, err)
		assert.Equal(t, 32, strings.Count(out.String(), "=== point "))
		assert.Contains(t, out.String(), "=== point 1/32: qwen3.5-fp8-mi325x-sglang-agentic-mtp  tp=2 ep=2 dpa=false conc=1 kv=none  [benchmark]")
	})
	// The FP4 MI355X MiniMax-M3 key has a kv:none and a kv:dram point at
	// tp4 conc32: a plan of it held both, and run --plan refused it ("holds
	// 2 points") with no filter to plan one; --kv-offloading picks one, as
	// sweep run's does, and a mode the selection has no point of is
	// refused naming the modes it has.
	t.Run("kv-offloading picks one of a point's rows", func(t *testing.T) {
		const key = "minimaxm3-fp4-mi355x-vllm-agentic-mtp"
		for _, kv := range []string{"none", "dram"} {
			var out bytes.Buffer
			require.NoError(t, planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &out}, ConfigKeys: []string{key}, TP: []int{4}, Conc: []int{32}, KVOffloading: kv, Format: "json"}))
			var pts []recipes.Point
			require.NoError(t, json.Unmarshal(out.Bytes(), &pts))
			require.Len(t, pts, 1, kv)
			assert.Equal(t, kv, pts[0].Row.KVOffloading)
		}
		err := planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &bytes.Buffer{}}, ConfigKeys: []string{key}, TP: []int{4}, Conc: []int{28}, KVOffloading: "dram", Format: "json"})
		var fe *FlagError
		require.ErrorAs(t, err, &fe)
		assert.ErrorContains(t, err, "no point selected has --kv-offloading dram; theirs is none")
	})
	t.Run("json, eval rows of both h200 keys", func(t *testing.T) {
		var out bytes.Buffer
		err := planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &out}, ConfigKeys: []string{"qwen3.5-fp8-h200-*"}, Eval: true, Format: "json"})
		require.NoError(t, err)
		var pts []map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(out.Bytes(), &pts))
		require.Len(t, pts, 1, "InferenceX picks one eval row for the model/runner/framework group")
		assert.JSONEq(t, `"qwen3.5-fp8-h200-sglang-agentic-hicache-mtp"`, string(pts[0]["config_key"]))
		assert.JSONEq(t, "null", string(pts[0]["client"]))
		assert.JSONEq(t, "null", string(pts[0]["golden_al"]))
	})
	t.Run("fnmatch pattern resolves as in sweep matrix test-config", func(t *testing.T) {
		pattern := "qwen3.5-fp8-mi32?x-sglang-agentic-mtp"
		var planned, matrixOut bytes.Buffer
		require.NoError(t, planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &planned}, ConfigKeys: []string{pattern}, Conc: []int{4}, Format: "json"}))
		var pts []recipes.Point
		require.NoError(t, json.Unmarshal(planned.Bytes(), &pts))
		require.NoError(t, matrixTestConfigRun(t.Context(), &matrixTestConfigOptions{IO: &IOStreams{Out: &matrixOut}, ConfigKey: true,
			TestConfigOptions: matrix.TestConfigOptions{ConfigKeys: []string{pattern}, Conc: []int{4}, EvalOptions: matrix.EvalOptions{NoEvals: true}}}))
		var rows matrix.Matrix
		require.NoError(t, json.Unmarshal(matrixOut.Bytes(), &rows))
		require.Len(t, pts, len(rows))
		for i := range rows {
			// Stamped as sweep run stamps the row it runs: plan printed
			// a result name without the _recipe- suffix run writes.
			rows[i].StampFingerprint()
			assert.Equal(t, *rows[i], pts[i].Row, "point %d plans matrix row %d", i, i)
			assert.True(t, strings.HasSuffix(pts[i].ResultFilename, "_recipe-"+rows[i].RecipeFingerprint[:16]), "point %d names %s", i, pts[i].ResultFilename)
			assert.Equal(t, "qwen3.5-fp8-mi325x-sglang-agentic-mtp", pts[i].Row.ConfigKey)
		}
	})
	t.Run("mistyped key names the closest keys", func(t *testing.T) {
		err := planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &bytes.Buffer{}}, ConfigKeys: []string{"qwen3.5-fp8-mi325x-sglang-agentic-mpt"}, Format: "text"})
		var fe *FlagError
		require.ErrorAs(t, err, &fe)
		assert.ErrorContains(t, err, "closest: qwen3.5-fp8-mi325x-sglang-agentic-mtp")
	})
	t.Run("unknown key is a usage error", func(t *testing.T) {
		err := planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &bytes.Buffer{}}, ConfigKeys: []string{"nope"}, Format: "text"})
		var fe *FlagError
		require.ErrorAs(t, err, &fe)
	})
	t.Run("unknown aiperf version is a usage error", func(t *testing.T) {
		err := planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &bytes.Buffer{}}, ConfigKeys: []string{"qwen3.5-fp8-mi325x-sglang-agentic-mtp"},
			Format: "text", Plan: recipes.PlanOptions{AiperfVersion: "0.11"}})
		var fe *FlagError
		require.ErrorAs(t, err, &fe)
		assert.ErrorContains(t, err, "known versions: 0.12.0")
	})
	t.Run("filters select points as run does", func(t *testing.T) {
		yes, no := true, false
		for _, tc := range []struct {
			name   string
			o      planOptions
			points int
		}{
			{"tp and ep", planOptions{TP: []int{4}, EP: []int{4}}, 5},
			{"two tp values", planOptions{TP: []int{2, 4}}, 14},
			{"tp and conc", planOptions{TP: []int{8}, Conc: []int{64}}, 2},
			{"not dp-attn", planOptions{DPAttn: &no}, 32},
		} {
			var out bytes.Buffer
			tc.o.IO, tc.o.ConfigKeys, tc.o.Format = &IOStreams{Out: &out}, []string{"qwen3.5-fp8-mi325x-sglang-agentic-mtp"}, "text"
			require.NoError(t, planRun(t.Context(), &tc.o), tc.name)
			assert.Equal(t, tc.points, strings.Count(out.String(), "=== point "), tc.name)
		}
		var out bytes.Buffer
		require.NoError(t, planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &out}, ConfigKeys: []string{"dsv4-fp4-mi355x-vllm-agentic-mtp"}, DPAttn: &yes, Conc: []int{64}, Format: "text"}))
		assert.Contains(t, out.String(), "# === point 1/1: dsv4-fp4-mi355x-vllm-agentic-mtp  tp=8 ep=1 dpa=true conc=64")

		err := planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &bytes.Buffer{}}, ConfigKeys: []string{"qwen3.5-fp8-mi325x-sglang-agentic-mtp"}, TP: []int{3}, Format: "text"})
		var fe *FlagError
		require.ErrorAs(t, err, &fe)
		assert.ErrorContains(t, err, "no point matches the --tp/--ep/--dp-attn filters; the selected points have:\n  --tp 2 --ep 2\n  --tp 4 --ep 1\n")

		// A multi-node key's arms are selected by their prefill layout, as
		// sweep run and discover select them (it said "the selected points
		// have: --tp 0 --ep 0").
		const disagg = "dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp"
		out.Reset()
		require.NoError(t, planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &out}, ConfigKeys: []string{disagg}, TP: []int{8}, EP: []int{8}, Conc: []int{64}, Format: "text"}))
		assert.Equal(t, 1, strings.Count(out.String(), "# [1/1] "+disagg+" "), out.String())
		assert.Contains(t, out.String(), "conc [64]")
		err = planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &bytes.Buffer{}}, ConfigKeys: []string{disagg}, TP: []int{4}, Format: "text"})
		require.ErrorAs(t, err, &fe)
		assert.ErrorContains(t, err, "the selected points have:\n  --tp 8 --ep 1 (prefill)\n  --tp 8 --ep 8 --dp-attn (prefill)")
	})
	t.Run("the help's examples plan", func(t *testing.T) {
		for _, line := range strings.Split(helpText("plan"), "\n") {
			args, ok := strings.CutPrefix(strings.TrimSpace(line), "sweep plan ")
			if !ok || strings.Contains(args, "--coverage") {
				continue
			}
			args, _, _ = strings.Cut(args, "#")
			fields := strings.Fields(strings.ReplaceAll(args, "'", ""))
			code, _, stderr := runCLI(t, append([]string{"plan"}, fields...)...)
			assert.Equal(t, 0, code, "sweep plan %s: %s", args, stderr)
		}
	})
	t.Run("a topology that does not fit its runner is refused", func(t *testing.T) {
		err := planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &bytes.Buffer{}}, ConfigKeys: []string{"k"}, Format: "text",
			Inputs: matrixInputs{Load: loadPlanted(t, "{tp: 16, ep: 1, kv-offloading: none, conc-list: [1]}")}})
		require.ErrorContains(t, err, "m.yaml:13:13: k.scenarios.agentic-coding[0].search-space[0].tp: tp*pp*pcp-size = 16*1*1 = 16 GPUs does not fit one node")
		assert.ErrorContains(t, err, `runner: "cluster:mi325x-amds" at m.yaml:5:11`)
	})
	t.Run("key of another engine fails with one line", func(t *testing.T) {
		err := planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &bytes.Buffer{}}, ConfigKeys: []string{"kimik3-fp4-mi355x-atom-agentic-mtp"}, Format: "text"})
		require.ErrorIs(t, err, recipes.ErrNotSupported)
		assert.EqualError(t, err, "plan rejected: kimik3-fp4-mi355x-atom-agentic-mtp (4 point(s)): recipe: not supported yet: engine ATOM (framework atom); sweep has SGLang and vLLM recipes only")
	})
}

// loadPlanted is a matrixInputs loader of one agentic master entry "k" on
// the shipped cluster:mi325x-amds runner with search-space entry ss (line
// 13), and the shipped runners.yaml.
func loadPlanted(t *testing.T, ss string) func([]string, string) (*configs.Masters, *configs.Runners, error) {
	t.Helper()
	doc := `k:
  image: img
  model: Qwen/Qwen3.5-397B-A17B-FP8
  model-prefix: qwen3.5
  runner: cluster:mi325x-amds
  precision: fp8
  framework: sglang
  multinode: false
  scenarios:
    agentic-coding:
      - dram-utilization: 0.5
        search-space:
          - ` + ss + "\n"
	return func([]string, string) (*configs.Masters, *configs.Runners, error) {
		m, err := configs.ParseMasters(configs.Source{Name: "m.yaml", Data: []byte(doc)})
		if err != nil {
			return nil, nil, err
		}
		r, err := configs.DefaultRunners()
		return m, r, err
	}
}

// TestPlanLaunch: --runner-name gives each point its launch on that runner
// in --format json ("launch": [{"role", "argv", "env"}]) and in text.
func TestPlanLaunch(t *testing.T) {
	var out bytes.Buffer
	o := &planOptions{IO: &IOStreams{Out: &out}, ConfigKeys: []string{"qwen3.5-fp8-mi325x-sglang-agentic-mtp"}, TP: []int{2}, Conc: []int{1},
		Format: "json", Plan: recipes.PlanOptions{Port: 8888, RunnerName: "mi325x-amds_00"}, Site: []string{"squash-dir=/data/sq"}, Workspace: "/ws"}
	require.NoError(t, planRun(t.Context(), o))
	var pts []struct {
		Launch []struct {
			Role string            `json:"role"`
			Argv []string          `json:"argv"`
			Env  map[string]string `json:"env"`
		} `json:"launch"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &pts))
	require.Len(t, pts, 1)
	l := pts[0].Launch
	require.Len(t, l, 4)
	assert.Equal(t, []string{"allocate", "import", "run", "release"}, []string{l[0].Role, l[1].Role, l[2].Role, l[3].Role})
	assert.Equal(t, []string{"salloc", "--partition=compute", "--gres=gpu:2", "--cpus-per-task=256", "--time=480", "--no-shell", "--job-name=mi325x-amds_00"}, l[0].Argv)
	assert.Contains(t, l[2].Argv, "--container-image=/data/sq/lmsysorg_sglang_v0.5.16-rocm720-mi30x.sqsh")
	assert.Equal(t, "${PORT}", l[2].Env["PORT"])
	assert.Contains(t, strings.Join(l[2].Argv, " "), "--container-mounts=/ws:/workspace/,")
	assert.Contains(t, strings.Join(l[2].Argv, " "), "/opt/sweep/")
	assert.Equal(t, []string{"scancel", "${JOB_ID}"}, l[3].Argv)

	out.Reset()
	o.Format = "text"
	require.NoError(t, planRun(t.Context(), o))
	assert.Contains(t, out.String(), "# launch 1/4 on the runner host: allocate:")
	assert.Contains(t, out.String(), "# launch 4/4 on the runner host: release:")
	// Planned as the launch runs it: the result in the container's
	// workspace; the port, known once allocated, is said to be ${PORT}.
	assert.Contains(t, out.String(), "# result:   /workspace/qwen3.5_tp2_")
	assert.Contains(t, out.String(), "# launch note: the engine's port is the launcher's ${PORT} (40000 + JOB_ID % 10000), known once allocated")

	o.Site = []string{"colour=blue"}
	var fe *FlagError
	require.ErrorAs(t, planRun(t.Context(), o), &fe)
}
