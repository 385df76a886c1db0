package leg

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
)

func generator(t *testing.T) *matrix.Generator {
	t.Helper()
	m, err := configs.DefaultMasters()
	require.NoError(t, err)
	r, err := configs.DefaultRunners()
	require.NoError(t, err)
	return &matrix.Generator{Masters: m, Runners: r}
}

func str(s string) *string { return &s }

func TestApplyParsers(t *testing.T) {
	auto := func(vllm bool) string { // the engine table's fact for vllm, or none
		if vllm {
			return configs.VLLM.Facts().AutoToolChoiceFlag
		}
		return ""
	}
	base := []string{"vllm", "serve", "M", "--tool-call-parser", "minimax_m3", "--reasoning-parser=minimax_m3", "--enable-auto-tool-choice", "--trust-remote-code"}
	tests := []struct {
		name string
		ps   configs.ABParsers
		vllm bool
		want []string
	}{
		{"nil keeps the recipe's", configs.ABParsers{}, true, base},
		{"replace both", configs.ABParsers{ToolCall: str("hermes"), Reasoning: str("qwen3")}, true,
			[]string{"vllm", "serve", "M", "--trust-remote-code", "--tool-call-parser", "hermes", "--reasoning-parser", "qwen3", "--enable-auto-tool-choice"}},
		{"none removes the tool parser and auto tool choice", configs.ABParsers{ToolCall: str(configs.ABParserNone)}, true,
			[]string{"vllm", "serve", "M", "--reasoning-parser=minimax_m3", "--trust-remote-code"}},
		{"none removes the reasoning parser", configs.ABParsers{Reasoning: str(configs.ABParserNone)}, false,
			[]string{"vllm", "serve", "M", "--tool-call-parser", "minimax_m3", "--enable-auto-tool-choice", "--trust-remote-code"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, applyParsers(base, tc.ps, auto(tc.vllm)))
		})
	}
	// A recipe without parsers gets them appended (and vLLM's auto tool choice).
	assert.Equal(t, []string{"vllm", "serve", "M", "--tool-call-parser", "x", "--enable-auto-tool-choice"},
		applyParsers([]string{"vllm", "serve", "M"}, configs.ABParsers{ToolCall: str("x")}, auto(true)))
}

// TestApplyParsersKeepsWhatFollowsABareFlag: removing vLLM's bare
// --enable-auto-tool-choice took the token after it along as its value
// unless it started with "--": an arm's args "-tp 8" lost "-tp" and left
// a stray 8, and a model given after the flag was lost.
func TestApplyParsersKeepsWhatFollowsABareFlag(t *testing.T) {
	auto := configs.VLLM.Facts().AutoToolChoiceFlag
	ps := configs.ABParsers{ToolCall: str("hermes")}
	assert.Equal(t, []string{"vllm", "serve", "M", "-tp", "8", "--tool-call-parser", "hermes", "--enable-auto-tool-choice"},
		applyParsers([]string{"vllm", "serve", "M", "--enable-auto-tool-choice", "-tp", "8"}, ps, auto))
	assert.Equal(t, []string{"vllm", "serve", "M", "--tool-call-parser", "hermes", "--enable-auto-tool-choice"},
		applyParsers([]string{"vllm", "serve", "--enable-auto-tool-choice", "M"}, ps, auto))
	assert.Equal(t, []string{"vllm", "serve", "M", "--max-num-seqs", "4"},
		applyParsers([]string{"vllm", "serve", "M", "--tool-call-parser", "--max-num-seqs", "4"}, configs.ABParsers{ToolCall: str(configs.ABParserNone)}, auto),
		"a parser flag without a value is removed alone")
}

// TestPlanShippedLeg: arm a serves directly on the public port, arm b's
// engine moves to port+1 behind the router on the public port, and bfcl
// talks to each arm's public port.
func TestPlanShippedLeg(t *testing.T) {
	dir := t.TempDir()
	p := shippedPlan(t, dir)
	assert.Len(t, p.Categories, 17)
	assert.Empty(t, p.Warnings, "temperature 0 is not clamped")
	a, b := p.Arms[0], p.Arms[1]
	assert.Equal(t, "http://127.0.0.1:20000/v1", a.BaseURL)
	assert.Nil(t, a.Point.Router)
	assert.Equal(t, ServerDir(dir, "a"), a.Point.ResultDir)
	assert.Contains(t, strings.Join(a.Point.Engine.Argv, " "), "--port 20000")
	assert.Equal(t, "http://127.0.0.1:21000/v1", b.BaseURL)
	assert.Contains(t, strings.Join(b.Point.Engine.Argv, " "), "--port 21001")
	require.NotNil(t, b.Point.Router)
	assert.Equal(t, []string{"python3", "-m", "smg.launch_router", "--worker-urls", "http://127.0.0.1:21001",
		"--host", "127.0.0.1", "--port", "21000", "--prometheus-port", "31000",
		"--tool-call-parser", "minimax_m2", "--reasoning-parser", "minimax", "--model-path", "MiniMaxAI/MiniMax-M3-MXFP8"}, b.Point.Router.Argv)
	assert.Equal(t, "http://127.0.0.1:21000/readiness", b.Point.RouterHealthURL)
	assert.Equal(t, 1, strings.Count(strings.Join(b.Point.Engine.Argv, " "), "--tool-call-parser minimax_m3"))
	assert.Equal(t, []any{"a", "b", 0.85, uint64(11)}, []any{a.Sim.Name, b.Sim.Name, b.Sim.Accuracy, b.Sim.Seed})

	// Simulated, the router is waited for on /health (all the simulated
	// router answers).
	l, err := configs.DefaultABLeg("minimaxm3-mi325x-smg")
	require.NoError(t, err)
	p, err = NewPlan(l, PlanOptions{Generator: generator(t), Dir: dir, Simulate: true})
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:8888/health", p.Arms[1].Point.RouterHealthURL)
}

func TestPlanErrors(t *testing.T) {
	doc := `model: Org/M-FC
runner: r
sampling: {temperature: 0.005}
categories: [non_live, simple]
arms:
  a: {config-key: dsv4-fp4-mi355x-vllm-agentic-mtp, tp: 8, dp-attn: true, conc: 64, router: {argv: [smg]}}
  b: {config-key: minimaxm3-fp8-mi325x-vllm-agentic-mtp, tp: 4, conc: 4}
`
	l, err := configs.ParseABLeg(configs.Source{Name: "leg.yaml", Data: []byte(doc)})
	require.NoError(t, err)
	_, err = NewPlan(l, PlanOptions{Generator: generator(t), Dir: t.TempDir()})
	got := configs.Errors(err)
	require.Len(t, got, 3, "%v", err)
	assert.Equal(t, []any{4, "categories[1]"}, []any{got[0].Line, got[0].Key})
	assert.Contains(t, got[0].Msg, `category "simple" is not a BFCL v4 category`)
	assert.Equal(t, []any{6, "arms.a.router"}, []any{got[1].Line, got[1].Key})
	assert.Contains(t, got[1].Msg, "already runs a router")
	assert.Equal(t, []any{7, "arms.b"}, []any{got[2].Line, got[2].Key})
	assert.Contains(t, got[2].Msg, "no point tp 4, ep 1, dp-attn false, conc 4; pick one of: {tp: 8, ep: 1, dp-attn: false, conc: 1}")

	// Without the planning mistakes (arm a serves arm b's model, on the
	// leg's hardware), the temperature is warned about for each vLLM arm.
	doc = strings.NewReplacer(", simple]", "]", "dsv4-fp4-mi355x-vllm-agentic-mtp, tp: 8, dp-attn: true, conc: 64, router: {argv: [smg]}", "minimaxm3-fp8-mi325x-vllm-agentic-mtp, tp: 8, conc: 16",
		"tp: 4", "tp: 8", "runner: r", "runner: cluster:mi325x-amds").Replace(doc)
	l, err = configs.ParseABLeg(configs.Source{Name: "leg.yaml", Data: []byte(doc)})
	require.NoError(t, err)
	p, err := NewPlan(l, PlanOptions{Generator: generator(t), Dir: t.TempDir()})
	require.NoError(t, err)
	require.Len(t, p.Warnings, 2)
	assert.True(t, strings.HasPrefix(p.Warnings[0], "leg.yaml:3:25: sampling.temperature: arm a (vLLM): temperature 0.005: vLLM clamps"), p.Warnings[0])
	assert.True(t, slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.Contains(w, "arm b") }))

	_, err = NewPlan(l, PlanOptions{Generator: generator(t), Dir: t.TempDir(), Port: func() (int, error) { return 0, errors.New("no port") }})
	assert.ErrorContains(t, err, "no port")
}

// TestPlanDirectArms: SMG's qwen3.6 leg as launch_arm.sh starts it: arm
// a's vllm serve and arm b's gRPC worker (no parser flags) with SMG's
// gateway in front (grpc:// worker, its own Prometheus port, /readiness),
// each on its GPUs and, the arms being concurrent, on ports of its own.
func TestPlanDirectArms(t *testing.T) {
	l, err := configs.DefaultABLeg("qwen3.6-h100")
	require.NoError(t, err)
	p, err := NewPlan(l, PlanOptions{Generator: generator(t), Dir: t.TempDir(), Port: func() (int, error) { return 8888, nil }})
	require.NoError(t, err)
	a, b := p.Arms[0].Point, p.Arms[1].Point
	assert.Equal(t, []string{"vllm", "serve", "Qwen/Qwen3.6-27B", "--served-model-name", "Qwen/Qwen3.6-27B", "--host", "127.0.0.1", "--port", "8888",
		"--tensor-parallel-size", "2", "--max-model-len", "auto", "--gpu-memory-utilization", "0.85",
		"--tool-call-parser", "qwen3_xml", "--reasoning-parser", "qwen3", "--enable-auto-tool-choice"}, a.Engine.Argv)
	assert.Equal(t, map[string]string{"CUDA_VISIBLE_DEVICES": "0,1"}, a.Engine.Env)
	assert.Equal(t, "http://127.0.0.1:8888/health", a.HealthURL)
	assert.Nil(t, a.Router)
	assert.Equal(t, "http://127.0.0.1:8888/v1", p.Arms[0].BaseURL)

	assert.Equal(t, []string{"python3", "-m", "vllm.entrypoints.grpc_server", "--model", "Qwen/Qwen3.6-27B", "--served-model-name", "Qwen/Qwen3.6-27B",
		"--host", "127.0.0.1", "--port", "8891", "--tensor-parallel-size", "2", "--max-model-len", "auto", "--gpu-memory-utilization", "0.85"}, b.Engine.Argv)
	assert.Equal(t, map[string]string{"CUDA_VISIBLE_DEVICES": "2,3"}, b.Engine.Env)
	assert.Equal(t, "tcp://127.0.0.1:8891", b.HealthURL, "the gRPC worker answers no HTTP")
	require.NotNil(t, b.Router)
	assert.Equal(t, []string{"python3", "-m", "smg.launch_router", "--worker-urls", "grpc://127.0.0.1:8891", "--host", "127.0.0.1", "--port", "8890",
		"--prometheus-port", "18890", "--tool-call-parser", "qwen_xml", "--reasoning-parser", "qwen3", "--model-path", "Qwen/Qwen3.6-27B"}, b.Router.Argv)
	assert.Equal(t, "http://127.0.0.1:8890/readiness", b.RouterHealthURL)
	assert.Equal(t, "http://127.0.0.1:8890/v1", p.Arms[1].BaseURL)
	assert.Equal(t, "Qwen/Qwen3.6-27B", apiModel(l.Model, &p.Arms[1]))

	amd, err := configs.DefaultABLeg("gpt-oss-mi325x")
	require.NoError(t, err)
	p, err = NewPlan(amd, PlanOptions{Generator: generator(t), Dir: t.TempDir()})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"HIP_VISIBLE_DEVICES": "1"}, p.Arms[1].Point.Engine.Env, "ROCm reads HIP_VISIBLE_DEVICES")
	assert.NotContains(t, p.Arms[1].Point.Router.Argv, "--tool-call-parser", "SMG detects harmony itself for gpt-oss")
}

func TestPlanDirectArmErrors(t *testing.T) {
	base := "model: Org/M-FC\nrunner: h100\ncategories: [multiple]\narms:\n  a: {engine: vllm, model-path: Org/M, tp: 1}\n  b: "
	for _, tc := range []struct {
		name, b, want string
	}{
		{"grpc worker without router", "{engine: vllm-grpc, model-path: Org/M, tp: 1}", "arms.b.engine: vllm-grpc is vLLM's gRPC worker, which answers no HTTP"},
		{"parsers on the grpc worker", "{engine: vllm-grpc, model-path: Org/M, tp: 1, parsers: {tool-call: hermes}, router: {argv: [smg]}}", "takes no parser flags"},
		{"a flag the engine lacks", "{engine: vllm, model-path: Org/M, tp: 1, args: [--no-such-flag]}", "--no-such-flag"},
		{"a value of the wrong type", "{engine: vllm, model-path: Org/M, tp: 1, args: [--max-num-seqs, many]}", "--max-num-seqs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := configs.ParseABLeg(configs.Source{Name: "leg.yaml", Data: []byte(base + tc.b + "\n")})
			require.NoError(t, err)
			_, err = NewPlan(l, PlanOptions{Generator: generator(t), Dir: t.TempDir()})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "leg.yaml:6:")
		})
	}
}

// flagSet is argv's flags with their values ("--x=v", "--y" for a bare
// flag), sorted, the program and positional words as they are.
func flagSet(argv []string) []string {
	var out []string
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if strings.HasPrefix(a, "--") && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "--") {
			out = append(out, a+"="+argv[i+1])
			i++
			continue
		}
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// TestDirectArmsMatchLaunchArm: the three commands of SMG's deepseek-v4
// leg carry the flags smg-project/smg's scripts/bfcl/launch_arm.sh (at
// f8daa883, arms a and b) gives them with the nightly's settings
// (BFCL_VLLM_EXTRA on both vLLM processes, the gateway's own Prometheus
// port, no parser flags on the gRPC worker), but for the bind address:
// sweep binds loopback where the script binds 0.0.0.0.
func TestDirectArmsMatchLaunchArm(t *testing.T) {
	l, err := configs.DefaultABLeg("deepseek-v4-b200")
	require.NoError(t, err)
	p, err := NewPlan(l, PlanOptions{Generator: generator(t), Dir: t.TempDir(), Port: func() (int, error) { return 9000, nil }})
	require.NoError(t, err)
	model, extra := "deepseek-ai/DeepSeek-V4-Flash-0731", []string{"--tokenizer-mode", "deepseek_v4", "--trust-remote-code", "--kv-cache-dtype", "fp8", "--block-size", "256"}
	launchArmA := append([]string{"vllm", "serve", model, "--served-model-name", model,
		"--enable-auto-tool-choice", "--tool-call-parser", "deepseek_v4", "--host", "127.0.0.1", "--port", "9000",
		"--tensor-parallel-size", "4", "--max-model-len", "auto", "--gpu-memory-utilization", "0.9", "--reasoning-parser", "deepseek_v4"}, extra...)
	launchArmBWorker := append([]string{"python3", "-m", "vllm.entrypoints.grpc_server", "--model", model, "--served-model-name", model,
		"--host", "127.0.0.1", "--port", "9003", "--tensor-parallel-size", "4", "--max-model-len", "auto", "--gpu-memory-utilization", "0.9"}, extra...)
	launchArmBGateway := []string{"python3", "-m", "smg.launch_router", "--model-path", model, "--worker-urls", "grpc://127.0.0.1:9003",
		"--host", "127.0.0.1", "--port", "9002", "--prometheus-port", "19002", "--tool-call-parser", "deepseek_v4", "--reasoning-parser", "deepseek_v4"}
	assert.Equal(t, flagSet(launchArmA), flagSet(p.Arms[0].Point.Engine.Argv))
	assert.Equal(t, flagSet(launchArmBWorker), flagSet(p.Arms[1].Point.Engine.Argv))
	assert.Equal(t, flagSet(launchArmBGateway), flagSet(p.Arms[1].Point.Router.Argv))
	assert.Equal(t, map[string]string{"CUDA_VISIBLE_DEVICES": "4,5,6,7"}, p.Arms[1].Point.Engine.Env)
}

// TestPlanRefusesOtherModels: an A/B leg is one model served two ways,
// so a leg whose arms serve different models, whose config-key arm runs
// on other hardware than the leg, or whose router loads another model
// than its engine is refused when planned, at the leg's file:line:col and
// key, naming both models.
func TestPlanRefusesOtherModels(t *testing.T) {
	direct := "model: Org/M-FC\nrunner: h100\ncategories: [multiple]\narms:\n  a: {engine: vllm, model-path: Org/M, tp: 1}\n  b: "
	for _, tc := range []struct {
		name string
		file string // a leg under testdata, or
		doc  string // a leg's text (leg.yaml)
		want []string
		has  []string // in the messages
	}{
		{name: "1 config-key arm moved to another key, model and hardware", file: "testdata/L1-otherkey.yaml",
			want: []string{
				"testdata/L1-otherkey.yaml:21:17: arms.b.config-key", // runs on mi355x, the leg on mi325x
				"testdata/L1-otherkey.yaml:27:28: arms.b.router.args[1]",
				"testdata/L1-otherkey.yaml:21:17: arms.b.config-key",
			},
			has: []string{"runs on cluster:mi355x-amds (mi355x), but the leg runs on cluster:mi325x-amds (mi325x",
				"arm b serves amd/MiniMax-M3-MXFP4 (config key minimaxm3-fp4-mi355x-vllm-agentic-mtp, fp4), arm a serves MiniMaxAI/MiniMax-M3-MXFP8 (config key minimaxm3-fp8-mi325x-vllm-agentic-mtp, fp8 at testdata/L1-otherkey.yaml:15:17)",
				"make arm b serve MiniMaxAI/MiniMax-M3-MXFP8 at fp8"}},
		{name: "2 engine arm with another model-path and image", file: "testdata/L4-othermodel.yaml",
			want: []string{"testdata/L4-othermodel.yaml:37:28: arms.b.router.args[1]", "testdata/L4-othermodel.yaml:30:17: arms.b.model-path"},
			has: []string{"the router loads Qwen/Qwen3.6-27B, but its engine serves Qwen/Qwen3-0.6B",
				"arm b serves Qwen/Qwen3-0.6B (model-path), arm a serves Qwen/Qwen3.6-27B (model-path at testdata/L4-othermodel.yaml:20:17)"}},
		{name: "3 direct arms of different models, no router", doc: direct + "{engine: vllm, model-path: Org/N, tp: 1}\n",
			want: []string{"leg.yaml:6:33: arms.b.model-path"}, has: []string{"arm b serves Org/N (model-path), arm a serves Org/M"}},
		{name: "4 router loading another model than its engine (--model-path=)",
			doc:  direct + "{engine: vllm-grpc, model-path: Org/M, tp: 1, router: {argv: [python3, -m, smg.launch_router], args: [--model-path=Org/N]}}\n",
			want: []string{"leg.yaml:6:108: arms.b.router.args[0]"}, has: []string{"the router loads Org/N, but its engine serves Org/M"}},
		{name: "6 router loading another model through an abbreviation SMG reads (--model-pa)",
			doc:  direct + "{engine: vllm-grpc, model-path: Org/M, tp: 1, router: {argv: [python3, -m, smg.launch_router], args: [--model-pa, Org/N]}}\n",
			want: []string{"leg.yaml:6:120: arms.b.router.args[1]"}, has: []string{"the router loads Org/N, but its engine serves Org/M"}},
		{name: "5 config-key arms of the leg's model on other hardware",
			doc: "model: Org/M-FC\nrunner: h100\ncategories: [multiple]\narms:\n" +
				"  a: {config-key: minimaxm3-fp8-mi325x-vllm-agentic-mtp, tp: 8, conc: 16}\n  b: {config-key: minimaxm3-fp8-mi325x-vllm-agentic-mtp, tp: 8, conc: 16}\n",
			want: []string{"leg.yaml:5:19: arms.a.config-key", "leg.yaml:6:19: arms.b.config-key"},
			has:  []string{"config key minimaxm3-fp8-mi325x-vllm-agentic-mtp runs on cluster:mi325x-amds (mi325x), but the leg runs on h100 (h100, runner at leg.yaml:2:9)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l *configs.ABLeg
			var err error
			if tc.file != "" {
				l, err = configs.LoadABLeg(tc.file)
			} else {
				l, err = configs.ParseABLeg(configs.Source{Name: "leg.yaml", Data: []byte(tc.doc)})
			}
			require.NoError(t, err)
			_, err = NewPlan(l, PlanOptions{Generator: generator(t), Dir: t.TempDir()})
			var got []string
			for _, e := range configs.Errors(err) {
				got = append(got, fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Key))
			}
			assert.Equal(t, tc.want, got, "%v", err)
			for _, h := range tc.has {
				assert.ErrorContains(t, err, h)
			}
		})
	}
}

// TestPlanKVOffloading: the FP4 MI355X MiniMax-M3 key has a kv:none and
// a kv:dram (LMCache) row at tp4 conc32. An arm there without
// kv-offloading was planned on the first, kv:none, with no word; it is
// refused at the arm listing both with the kv-offloading that picks each,
// and kv-offloading picks either. conc40 has the dram row alone and needs
// none; a kv-offloading the point lacks lists the key's points with the
// kv-offloading of those that need one.
func TestPlanKVOffloading(t *testing.T) {
	const key = "minimaxm3-fp4-mi355x-vllm-agentic-mtp"
	leg := func(a, b string) string {
		return "model: Org/M-FC\nrunner: cluster:mi355x-amds\ncategories: [multiple]\narms:\n" +
			"  a: {config-key: " + key + ", tp: 4, " + a + "}\n" +
			"  b: {config-key: " + key + ", tp: 4, " + b + "}\n"
	}
	for _, tc := range []struct {
		name   string
		doc    string
		kv     [2]string // each arm's row's KV offloading, when it plans
		conc   int       // and its concurrency
		err    string    // file:line:col: key of the one error, when it does not
		has    []string  // in the error
		hasNot []string
	}{
		{name: "rows that differ in KV offloading are refused at the arm", doc: leg("conc: 32", "conc: 32, kv-offloading: dram"),
			err: "leg.yaml:5:6: arms.a",
			has: []string{key + " has 2 points tp 4, ep 1, dp-attn false, conc 32 that differ in KV offloading; add to the arm the kv-offloading that picks one of them: " +
				"kv-offloading: none (minimaxm3_tp4_conc32_", "kv-offloading: dram (minimaxm3_tp4_conc32_"}},
		{name: "kv-offloading picks each row", doc: leg("conc: 32, kv-offloading: none", "conc: 32, kv-offloading: dram"), kv: [2]string{"none", "dram"}, conc: 32},
		{name: "a point of one row needs none", doc: leg("conc: 40", "conc: 40, kv-offloading: dram"), kv: [2]string{"dram", "dram"}, conc: 40},
		{name: "a kv-offloading the point lacks", doc: leg("conc: 40, kv-offloading: none", "conc: 40"),
			err:    "leg.yaml:5:6: arms.a",
			has:    []string{key + " has no point tp 4, ep 1, dp-attn false, conc 40, kv-offloading none; pick one of: ", "{tp: 4, ep: 1, dp-attn: false, conc: 32, kv-offloading: none}", "{tp: 4, ep: 1, dp-attn: false, conc: 32, kv-offloading: dram}", "{tp: 4, ep: 1, dp-attn: false, conc: 40}"},
			hasNot: []string{"conc: 40, kv-offloading", "conc: 2, kv-offloading"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := configs.ParseABLeg(configs.Source{Name: "leg.yaml", Data: []byte(tc.doc)})
			require.NoError(t, err)
			p, err := NewPlan(l, PlanOptions{Generator: generator(t), Dir: t.TempDir()})
			if tc.err != "" {
				var got []string
				for _, e := range configs.Errors(err) {
					got = append(got, fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Key))
				}
				assert.Equal(t, []string{tc.err}, got, "%v", err)
				for _, h := range tc.has {
					assert.ErrorContains(t, err, h)
				}
				for _, h := range tc.hasNot {
					assert.NotContains(t, err.Error(), h)
				}
				return
			}
			require.NoError(t, err)
			for i, want := range tc.kv {
				row := p.Arms[i].Point.Row
				assert.Equal(t, []any{want, tc.conc}, []any{row.KVOffloading, row.Conc}, "arm %s", p.Arms[i].Label)
				argv := strings.Join(p.Arms[i].Point.Engine.Argv, " ")
				assert.Equal(t, want == configs.KVOffloadDRAM, strings.Contains(argv, "LMCache"), "arm %s's engine: %s", p.Arms[i].Label, argv)
			}
		})
	}
}

// shippedPlan plans the shipped minimaxm3-mi325x-smg leg into dir, its
// public ports drawn as 20000 (arm a) and 21000 (arm b).
func shippedPlan(t *testing.T, dir string) *Plan {
	t.Helper()
	l, err := configs.DefaultABLeg("minimaxm3-mi325x-smg")
	require.NoError(t, err)
	ports := []int{20000, 21000}
	next := 0
	p, err := NewPlan(l, PlanOptions{Generator: generator(t), Dir: dir, Port: func() (int, error) { next++; return ports[next-1], nil }})
	require.NoError(t, err)
	return p
}
