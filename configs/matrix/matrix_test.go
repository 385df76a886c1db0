package matrix

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
)

func TestStarMatch(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"dsr1-*", "dsr1-fp4-b200", true},
		{"*-mtp", "qwen-mtp", true},
		{"*-mtp", "qwen-mtp-x", false},
		{"a*b*c", "abbc", true},
		{"a*a", "a", false},
		{"*", "", true},
		{"dsr1-fp4-b200-sglan?*", "dsr1-fp4-b200-sglang", false}, // '?' is literal
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, starMatch(tc.pattern, tc.name), "starMatch(%q, %q)", tc.pattern, tc.name)
	}
}

func TestConcRange(t *testing.T) {
	tests := []struct {
		start, end, step int
		want             []int
	}{
		{4, 64, 2, []int{4, 8, 16, 32, 64}},
		{4, 48, 2, []int{4, 8, 16, 32, 48}},
		{1, 1, 2, []int{1}},
		{3, 100, 4, []int{3, 12, 48, 100}},
		{5, 4, 2, []int{}},
		{0, 8, 2, []int{0}}, // never loops forever
	}
	for _, tc := range tests {
		got := concRange(tc.start, tc.end, tc.step)
		assert.Equal(t, tc.want, append([]int{}, got...), "%d..%d step %d", tc.start, tc.end, tc.step)
	}
}

const testMasters = `
m-fixed:
  image: img
  model: org/m
  model-prefix: m
  runner: lab
  precision: fp8
  framework: sglang
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - { tp: 8, conc-list: [4, 16, 32, 64, 128] }
      - { tp: 4, ep: 4, dp-attn: true, conc-start: 1, conc-end: 8 }
m-agentic:
  image: img
  model: org/a
  model-prefix: a
  runner: cluster:lab
  precision: fp4
  framework: vllm
  multinode: false
  scenarios:
    agentic-coding:
    - dram-utilization: 0.5
      search-space:
      - { tp: 4, kv-offloading: dram, kv-offload-backend: { name: lmcache }, conc-list: [2, 8] }
      - { tp: 8, kv-offloading: none, spec-decoding: mtp, conc-list: [1] }
`

const testRunners = `
labels:
  lab: [lab_0, lab_1, other_2]
  cluster:lab: [lab_0, lab_1]
hardware:
  cluster:lab: { available-cpu-dram-mib: 1000000, gpus-per-node: 8 }
`

func testGenerator(t testing.TB, masters, runners string) *Generator {
	t.Helper()
	m, err := configs.ParseMasters(configs.Source{Name: "masters.yaml", Data: []byte(masters)})
	require.NoError(t, err)
	r, err := configs.ParseRunners(configs.Source{Name: "runners.yaml", Data: []byte(runners)})
	require.NoError(t, err)
	return &Generator{Masters: m, Runners: r}
}

// summary reduces rows to "exp-name tp conc runner eval" lines.
func summary(rows Matrix) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		b, _ := json.Marshal(map[string]any{"exp": r.ExpName, "tp": r.TP, "conc": r.Conc, "runner": r.Runner,
			"eval": r.RunEval != nil && *r.RunEval, "only": r.EvalOnly != nil, "gb": r.TotalCPUDRAMGB})
		out[i] = string(b)
	}
	return out
}

func TestTestConfig(t *testing.T) {
	g := testGenerator(t, testMasters, testRunners)
	tests := []struct {
		name string
		opts TestConfigOptions
		want []string
	}{
		{
			name: "default eval policy: highest and median conc >= 16 per 8k1k group",
			opts: TestConfigOptions{ConfigKeys: []string{"m-fixed"}, Conc: []int{4, 16, 32, 64, 128, 8}},
			want: []string{
				`{"conc":4,"eval":false,"exp":"m_8k1k","gb":0,"only":false,"runner":"lab","tp":8}`,
				`{"conc":16,"eval":false,"exp":"m_8k1k","gb":0,"only":false,"runner":"lab","tp":8}`,
				`{"conc":32,"eval":false,"exp":"m_8k1k","gb":0,"only":false,"runner":"lab","tp":8}`,
				`{"conc":64,"eval":true,"exp":"m_8k1k","gb":0,"only":false,"runner":"lab","tp":8}`,
				`{"conc":128,"eval":true,"exp":"m_8k1k","gb":0,"only":false,"runner":"lab","tp":8}`,
				`{"conc":4,"eval":false,"exp":"m_8k1k","gb":0,"only":false,"runner":"lab","tp":4}`,
				`{"conc":8,"eval":false,"exp":"m_8k1k","gb":0,"only":false,"runner":"lab","tp":4}`,
			},
		},
		{
			name: "agentic rows, DRAM budget, runner-node filter",
			opts: TestConfigOptions{ConfigKeys: []string{"m-ag*"}, RunnerNodeFilter: "lab_", EvalOptions: EvalOptions{NoEvals: true}},
			want: []string{
				`{"conc":2,"eval":false,"exp":"a_tp4_conc2_kvdram-lmcache","gb":262,"only":false,"runner":"lab_0","tp":4}`,
				`{"conc":2,"eval":false,"exp":"a_tp4_conc2_kvdram-lmcache","gb":262,"only":false,"runner":"lab_1","tp":4}`,
				`{"conc":8,"eval":false,"exp":"a_tp4_conc8_kvdram-lmcache","gb":262,"only":false,"runner":"lab_0","tp":4}`,
				`{"conc":8,"eval":false,"exp":"a_tp4_conc8_kvdram-lmcache","gb":262,"only":false,"runner":"lab_1","tp":4}`,
				`{"conc":1,"eval":false,"exp":"a_tp8_conc1_kvnone_spec-mtp","gb":0,"only":false,"runner":"lab_0","tp":8}`,
				`{"conc":1,"eval":false,"exp":"a_tp8_conc1_kvnone_spec-mtp","gb":0,"only":false,"runner":"lab_1","tp":8}`,
			},
		},
		{
			name: "evals only: agentic highest conc per model and runner",
			opts: TestConfigOptions{ConfigKeys: []string{"m-agentic"}, EvalOptions: EvalOptions{EvalsOnly: true}},
			want: []string{`{"conc":8,"eval":true,"exp":"a_tp4_conc8_kvdram-lmcache","gb":262,"only":true,"runner":"cluster:lab","tp":4}`},
		},
		{
			name: "scenario filter leaves nothing",
			opts: TestConfigOptions{ConfigKeys: []string{"m-agentic"}, ScenarioTypes: []string{"fixed-seq-len"}},
			want: []string{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := g.TestConfig(tc.opts)
			require.NoError(t, err)
			assert.Equal(t, tc.want, summary(rows))
		})
	}
}

func TestGeneratorErrors(t *testing.T) {
	g := testGenerator(t, testMasters, testRunners)
	invalid := []struct {
		name string
		run  func() error
	}{
		{"no-evals with evals-only", func() error {
			_, err := g.TestConfig(TestConfigOptions{ConfigKeys: []string{"m-fixed"}, EvalOptions: EvalOptions{NoEvals: true, EvalsOnly: true}})
			return err
		}},
		{"no-evals with all-evals", func() error {
			_, err := g.TestConfig(TestConfigOptions{ConfigKeys: []string{"m-fixed"}, EvalOptions: EvalOptions{NoEvals: true, AllEvals: true}})
			return err
		}},
		{"unknown seq-lens", func() error {
			_, err := g.TestConfig(TestConfigOptions{ConfigKeys: []string{"m-fixed"}, SeqLens: []string{"2k1k"}})
			return err
		}},
		{"unknown scenario", func() error {
			_, err := g.FullSweep(FullSweepOptions{ScenarioTypes: []string{"chat"}})
			return err
		}},
		{"step size 1", func() error { _, err := g.FullSweep(FullSweepOptions{StepSize: 1}); return err }},
		{"min above max", func() error { _, err := g.FullSweep(FullSweepOptions{MinConc: ptr(8), MaxConc: ptr(4)}); return err }},
		{"unknown runner type", func() error { _, err := g.FullSweep(FullSweepOptions{RunnerTypes: []string{"nope"}}); return err }},
	}
	for _, tc := range invalid {
		err := tc.run()
		assert.ErrorIs(t, err, ErrInvalidOptions, tc.name)
	}

	_, err := g.TestConfig(TestConfigOptions{ConfigKeys: []string{"m-fixd"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `config key "m-fixd" not found`)
	assert.Contains(t, err.Error(), "closest: m-fixed")
	_, err = g.TestConfig(TestConfigOptions{ConfigKeys: []string{"x*"}})
	assert.ErrorContains(t, err, `pattern "x*" matched no config keys`)

	noHW := testGenerator(t, testMasters, "labels:\n  lab: [lab_0]\n  cluster:lab: [lab_0]\n")
	_, err = noHW.TestConfig(TestConfigOptions{ConfigKeys: []string{"m-agentic"}})
	me, ok := errors.AsType[*configs.Error](err)
	require.True(t, ok, "want *configs.Error, got %v", err)
	assert.Equal(t, "m-agentic.scenarios.agentic-coding[0].search-space[0]", me.Key)
	assert.Equal(t, "masters.yaml", me.File)
	assert.Contains(t, me.Msg, `runner "cluster:lab" needs available-cpu-dram-mib and gpus-per-node`)
}

func TestRowJSON(t *testing.T) {
	g := testGenerator(t, testMasters, testRunners)
	rows, err := g.TestConfig(TestConfigOptions{ConfigKeys: []string{"m-agentic"}, Conc: []int{2}})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	b, err := rows[0].MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, `{"image": "img", "model": "org/a", "model-prefix": "a", "precision": "fp4", "framework": "vllm", `+
		`"runner": "cluster:lab", "tp": 4, "pp": 1, "dcp-size": 1, "pcp-size": 1, "ep": 1, "dp-attn": false, `+
		`"spec-decoding": "none", "conc": 2, "kv-offloading": "dram", "total-cpu-dram-gb": 262, "duration": 3600, `+
		`"exp-name": "a_tp4_conc2_kvdram-lmcache", "scenario-type": "agentic-coding", "kv-offload-backend": {"name": "lmcache"}, `+
		`"run-eval": false}`, string(b))
	m, err := rows.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, "["+string(b)+"]", string(m))
	// encoding/json compacts a Marshaler's output; the content is the same.
	c, err := json.Marshal(rows)
	require.NoError(t, err)
	assert.JSONEq(t, string(m), string(c))
}

func TestTrimConc(t *testing.T) {
	row := func(conc int, tp int) *Row {
		return &Row{Kind: FixedSingleNode, Parallelism: configs.Parallelism{TP: tp}, Conc: conc, ExpName: "x", RunEval: ptr(false)}
	}
	mn := &Row{Kind: FixedMultiNode, Concs: []int{64, 8, 128}, Prefill: &Worker{}, Decode: &Worker{}}
	rows := Matrix{row(32, 8), row(4, 8), row(4, 4), mn, row(4, 8), row(2, 4)}
	got := trimConc(rows)
	require.Len(t, got, 3)
	assert.Same(t, rows[1], got[0], "first row with the lowest conc of tp8")
	assert.Equal(t, []int{8}, got[1].Concs)
	assert.Equal(t, []int{64, 8, 128}, mn.Concs, "the input row is not modified")
	assert.Same(t, rows[5], got[2])
}
