package configs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const abLegDoc = `model: Org/Model-FC
runner: cluster:mi325x-amds
categories: [non_live, multi_turn_base]
arms:
  a: {config-key: k, tp: 8, conc: 4}
  b: {config-key: k, tp: 8, conc: 4}
`

func TestParseABLegValues(t *testing.T) {
	doc := `model: Org/Model-FC
runner: cluster:mi325x-amds
categories: [non_live, multi_turn_base]
sampling: {temperature: 0.001, num-threads: 8}
replicates: 3
tolerance: 1.5
partial-eval: true
arms:
  a:
    name: vllm
    config-key: k
    tp: 8
    ep: 8
    dp-attn: true
    conc: 4
    kv-offloading: dram
    parsers: {tool-call: none}
  b:
    config-key: k
    tp: 8
    conc: 4
    parsers: {tool-call: qwen3_xml, reasoning: qwen3}
    router:
      argv: [python3, -m, smg.launch_router]
      args: [--model-path, Org/Model]
      parsers: {tool-call: qwen_xml}
      health: /readiness
simulate:
  seed: 7
  accuracy: 0.9
  flip: 0.05
  a: {offset: 2}
  b: {offset: -4, infra-errors: 0.1}
`
	l, err := ParseABLeg(Source{Name: "configs/ab/qwen.yaml", Data: []byte(doc)})
	require.NoError(t, err)
	assert.Equal(t, "qwen", l.Name)
	assert.Equal(t, "Org/Model-FC", l.Model)
	assert.Equal(t, []string{"non_live", "multi_turn_base"}, l.Categories)
	assert.Equal(t, Pos{File: "configs/ab/qwen.yaml", Line: 3, Col: 24}, l.CategoriesPos[1])
	assert.Equal(t, ABSampling{Temperature: 0.001, TemperaturePos: Pos{File: "configs/ab/qwen.yaml", Line: 4, Col: 25}, NumThreads: 8}, l.Sampling)
	assert.Equal(t, 3, l.Replicates)
	assert.Equal(t, 1.5, l.Tolerance)
	assert.True(t, l.PartialEval)
	a, b := l.Arms[0], l.Arms[1]
	assert.Equal(t, []any{"a", "vllm", "k", 8, 8, true, 4, "dram"}, []any{a.Label, a.Name, a.ConfigKey, a.TP, a.EP, a.DPAttn, a.Conc, a.KVOffloading})
	assert.Equal(t, ABParserNone, *a.Parsers.ToolCall)
	assert.Nil(t, a.Parsers.Reasoning)
	assert.Nil(t, a.Router)
	assert.Equal(t, []any{"b", "", 1, false, ""}, []any{b.Label, b.Name, b.EP, b.DPAttn, b.KVOffloading})
	assert.Equal(t, "qwen3_xml", *b.Parsers.ToolCall)
	require.NotNil(t, b.Router)
	assert.Equal(t, []string{"python3", "-m", "smg.launch_router"}, b.Router.Argv)
	assert.Equal(t, []string{"--model-path", "Org/Model"}, b.Router.Args)
	assert.Equal(t, "qwen_xml", *b.Router.Parsers.ToolCall)
	assert.Equal(t, "/readiness", b.Router.Health)
	assert.Equal(t, &ABSimulate{Seed: 7, Accuracy: 0.9, Flip: 0.05, Offset: [2]float64{2, -4}, InfraErrors: [2]float64{0, 0.1}}, l.Simulate)

	// Defaults.
	l, err = ParseABLeg(Source{Name: "leg.yaml", Data: []byte(abLegDoc)})
	require.NoError(t, err)
	assert.Equal(t, []any{1, 2.0, 0.0, 16, false}, []any{l.Replicates, l.Tolerance, l.Sampling.Temperature, l.Sampling.NumThreads, l.PartialEval})
	assert.Equal(t, 1, l.Arms[0].EP)
	assert.Nil(t, l.Simulate)
}

func TestParseABLegErrors(t *testing.T) {
	withArmB := func(b string) string {
		return "model: Org/M-FC\nrunner: r\ncategories: [multiple]\narms:\n  a: {config-key: k, tp: 8, conc: 4}\n  b:\n" + b
	}
	tests := []struct {
		name string
		doc  string
		want []wantErr
	}{
		{"empty", "", []wantErr{{1, "", "A/B leg is empty"}}},
		{"required keys", "model: Org/M-FC\n", []wantErr{{1, "runner", "required key is missing"}, {1, "categories", "required key is missing"}, {1, "arms", "required key is missing"}}},
		{"typo", "model: Org/M-FC\nrunner: r\ncategores: [multiple]\narms: {a: {config-key: k, tp: 8, conc: 4}, b: {config-key: k, tp: 8, conc: 4}}\n",
			[]wantErr{{3, "categores", `unknown key "categores" (did you mean "categories"?)`}}},
		{"underscore in model", "model: Org/M_1-FC\nrunner: r\ncategories: [multiple]\narms: {a: {config-key: k, tp: 8, conc: 4}, b: {config-key: k, tp: 8, conc: 4}}\n",
			[]wantErr{{1, "model", `contains "_"`}}},
		{"no categories", "model: Org/M-FC\nrunner: r\ncategories: []\narms: {a: {config-key: k, tp: 8, conc: 4}, b: {config-key: k, tp: 8, conc: 4}}\n",
			[]wantErr{{3, "categories", "at least one BFCL category"}}},
		{"arm b missing", "model: Org/M-FC\nrunner: r\ncategories: [multiple]\narms:\n  a: {config-key: k, tp: 8, conc: 4}\n",
			[]wantErr{{5, "arms.b", "required key is missing"}}},
		{"arm fields", withArmB("    config-key: k\n    tp: 0\n    conc: four\n    dp-attn: maybe\n"),
			[]wantErr{{8, "arms.b.tp", "must be >= 1"}, {9, "arms.b.conc", "must be an integer"}, {10, "arms.b.dp-attn", "must be true or false"}}},
		{"kv-offloading", withArmB("    config-key: k\n    tp: 8\n    conc: 4\n    kv-offloading: ssd\n"),
			[]wantErr{{10, "arms.b.kv-offloading", `"ssd": want one of none, dram`}}},
		{"kv-offloading not a string", withArmB("    config-key: k\n    tp: 8\n    conc: 4\n    kv-offloading: [dram]\n"),
			[]wantErr{{10, "arms.b.kv-offloading", "must be a string"}}},
		{"parser key", withArmB("    config-key: k\n    tp: 8\n    conc: 4\n    parsers: {tool: x}\n"),
			[]wantErr{{10, "arms.b.parsers.tool", `unknown key "tool"`}}},
		{"router flags", withArmB("    config-key: k\n    tp: 8\n    conc: 4\n    router:\n      argv: [smg, --port]\n      args: [--port, '1', --policy, x]\n      health: readiness\n"),
			[]wantErr{{11, "arms.b.router.argv[1]", "argv is the launcher only"}, {13, "arms.b.router.health", "want a URL path"}}},
		{"router without argv", withArmB("    config-key: k\n    tp: 8\n    conc: 4\n    router: {args: [--x]}\n"),
			[]wantErr{{10, "arms.b.router.argv", "required key is missing"}}},
		{"sampling", "model: Org/M-FC\nrunner: r\ncategories: [multiple]\nsampling: {temperature: -1, num-threads: 0}\narms: {a: {config-key: k, tp: 8, conc: 4}, b: {config-key: k, tp: 8, conc: 4}}\n",
			[]wantErr{{4, "sampling.temperature", "must be in [0, 2]"}, {4, "sampling.num-threads", "must be >= 1"}}},
		{"tolerance and replicates", "model: Org/M-FC\nrunner: r\ncategories: [multiple]\ntolerance: 0\nreplicates: 0\narms: {a: {config-key: k, tp: 8, conc: 4}, b: {config-key: k, tp: 8, conc: 4}}\n",
			[]wantErr{{4, "tolerance", "must be points in (0, 100)"}, {5, "replicates", "must be >= 1"}}},
		{"simulate", "model: Org/M-FC\nrunner: r\ncategories: [multiple]\narms: {a: {config-key: k, tp: 8, conc: 4}, b: {config-key: k, tp: 8, conc: 4}}\nsimulate:\n  accuracy: 0.9\n  b: {offset: 20, infra-errors: 1}\n  c: {}\n",
			[]wantErr{{7, "simulate.b.offset", "must be in [-90, 10]"}, {7, "simulate.b.infra-errors", "must be a share in [0, 1)"}, {8, "simulate.c", `unknown key "c"`}}},
	}
	direct := func(mode, a, b string) string {
		return "model: Org/M-FC\nrunner: r\ncategories: [multiple]\n" + mode + "arms:\n  a: " + a + "\n  b: " + b + "\n"
	}
	tests = append(tests, []struct {
		name string
		doc  string
		want []wantErr
	}{
		{"config key and engine", direct("", "{config-key: k, engine: vllm, tp: 1, conc: 4, model-path: m}", "{engine: vllm, model-path: m, tp: 1}"),
			[]wantErr{{5, "arms.a.engine", "either a point of a config key"}}},
		{"direct arm with point keys", direct("", "{engine: vllm, model-path: m, tp: 1, conc: 4}", "{engine: sglang, model-path: m, tp: 2, gpus: [0]}"),
			[]wantErr{{5, "arms.a.conc", "picks a config key's matrix point"}, {6, "arms.b.gpus", "1 GPUs for tp 2"}}},
		{"direct arm with kv-offloading", direct("", "{engine: vllm, model-path: m, tp: 1, kv-offloading: dram}", "{engine: vllm, model-path: m, tp: 1}"),
			[]wantErr{{5, "arms.a.kv-offloading", "picks a config key's matrix point"}}},
		{"config-key arm with engine keys", direct("", "{config-key: k, tp: 1, conc: 4, image: i}", "{engine: tgi, model-path: m, tp: 1}"),
			[]wantErr{{5, "arms.a.image", "declares an engine directly"}, {6, "arms.b.engine", `"tgi": want one of vllm, vllm-grpc, sglang`}}},
		{"direct arm values", direct("", "{engine: vllm, model-path: m, tp: 1, max-model-len: big, gpu-memory-utilization: 2, args: [--port, '1']}", "{engine: vllm, tp: 1}"),
			[]wantErr{{5, "arms.a.max-model-len", "want auto or a number"}, {5, "arms.a.gpu-memory-utilization", "fraction in (0, 1]"},
				{6, "arms.b.model-path", "required key is missing"}}},
		{"concurrent arms share a GPU", direct("arm-mode: concurrent\n", "{engine: vllm, model-path: m, tp: 2, gpus: [0, 1]}", "{engine: vllm, model-path: m, tp: 2, gpus: [1, 2]}"),
			[]wantErr{{7, "arms.b.gpus", "GPU 1 is arm a's too"}}},
		{"concurrent config-key arm", direct("arm-mode: concurrent\n", "{config-key: k, tp: 8, conc: 4}", "{engine: vllm, model-path: m, tp: 2}"),
			[]wantErr{{6, "arm-mode", "concurrent arms need their GPUs declared"}}},
		{"leg keys", "model: Org/M-FC\nrunner: r\ncategories: [multiple]\narm-mode: parallel\nschedule: weekly\ntimeouts: {startup: soon, run: -5}\nhost-lock: bfcl.lock\narms: {a: {config-key: k, tp: 8, conc: 4}, b: {config-key: k, tp: 8, conc: 4}}\n",
			[]wantErr{{4, "arm-mode", `"parallel": want sequential`}, {5, "schedule", `"weekly": want nightly`}, {6, "timeouts.startup", `"soon": want a positive duration`},
				{6, "timeouts.run", "must be positive"}, {7, "host-lock", "want an absolute path"}}},
	}...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseABLeg(Source{Name: "leg.yaml", Data: []byte(tc.doc)})
			assertErrors(t, "leg.yaml", err, tc.want)
		})
	}
}

func TestShippedABLegs(t *testing.T) {
	names := ABLegNames()
	require.NotEmpty(t, names)
	for _, n := range names {
		l, err := DefaultABLeg(n)
		require.NoError(t, err, n)
		assert.Equal(t, n, l.Name)
		// The embedded copy is the repository's file.
		disk, err := LoadABLeg(filepath.Join("ab", n+".yaml"))
		require.NoError(t, err)
		disk.File, disk.Name = l.File, l.Name
		for i := range disk.CategoriesPos {
			disk.CategoriesPos[i].File = l.File
		}
		assert.Equal(t, l.Categories, disk.Categories)
		assert.Equal(t, l.Arms[0].ConfigKey, disk.Arms[0].ConfigKey)
	}
	_, err := DefaultABLeg("nope")
	assert.ErrorContains(t, err, `"nope": not a shipped leg`)
	_, err = LoadABLeg(filepath.Join(t.TempDir(), "missing.yaml"))
	assert.ErrorContains(t, err, "cannot read A/B leg")
	entries, err := os.ReadDir("ab")
	require.NoError(t, err)
	assert.Len(t, entries, len(names), "every file in configs/ab is embedded")
}

// TestParseABLegDirect: a concurrent leg of directly declared arms: arm
// b's GPUs follow arm a's, the context length defaults to auto and the
// served name to the load path.
func TestParseABLegDirect(t *testing.T) {
	doc := `model: Org/M-FC
runner: 4-gpu-h100
gpu: h100
schedule: manual
categories: [multiple]
arm-mode: concurrent
timeouts: {startup: 600s, run: 5400, lock: 1h}
host-lock: /tmp/bfcl-host.lock
arms:
  a: {engine: vllm, model-path: Org/M, tp: 2, parsers: {tool-call: hermes}}
  b:
    engine: vllm-grpc
    model-path: /models/Org/M
    served-model-name: Org/M
    tp: 2
    max-model-len: 32768
    env: {SMG_VLLM_SERVICER_IMPL: rust}
    router: {argv: [python3, -m, smg.launch_router]}
`
	l, err := ParseABLeg(Source{Name: "leg.yaml", Data: []byte(doc)})
	require.NoError(t, err)
	assert.Equal(t, ABConcurrent, l.Mode)
	assert.Equal(t, ABManual, l.Schedule)
	assert.Equal(t, "h100", l.GPU)
	assert.Equal(t, ABTimeouts{Startup: 600 * time.Second, Run: 5400 * time.Second, Lock: time.Hour}, l.Timeouts)
	assert.Equal(t, "/tmp/bfcl-host.lock", l.HostLock)
	a, b := l.Arms[0], l.Arms[1]
	assert.Equal(t, []any{"vllm", "Org/M", "Org/M", []int{0, 1}, "auto"}, []any{a.Engine, a.ModelPath, a.ServedModel, a.GPUs, a.MaxModelLen})
	assert.Equal(t, []any{"vllm-grpc", "/models/Org/M", "Org/M", []int{2, 3}, "32768"}, []any{b.Engine, b.ModelPath, b.ServedModel, b.GPUs, b.MaxModelLen})
	assert.Equal(t, map[string]string{"SMG_VLLM_SERVICER_IMPL": "rust"}, b.Env)

	seq, err := ParseABLeg(Source{Name: "leg.yaml", Data: []byte(strings.Replace(doc, "arm-mode: concurrent", "arm-mode: sequential", 1))})
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1}, seq.Arms[1].GPUs, "sequential arms share the GPUs")
}
