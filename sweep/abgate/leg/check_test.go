package leg

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
)

// TestPlanChecksCommands: the router's argv and each arm's engine argv
// (with the leg's parsers) are checked against their flag schemas when the
// leg is planned, before anything starts; a refusal names the leg's
// file:line:col and key that set the token, what was expected and the fix.
func TestPlanChecksCommands(t *testing.T) {
	// Line 6 is arm a, line 7 arm b: a config-key arm (the shipped leg's
	// point) behind SMG; line 8 is a direct vLLM gRPC arm behind SMG.
	const doc = `model: Org/M-FC
runner: cluster:mi325x-amds
categories: [simple_python]
sampling: {temperature: 0}
arms:
  a: {config-key: minimaxm3-fp8-mi325x-vllm-agentic-mtp, tp: 8, conc: 16, parsers: {tool-call: minimax_m3, reasoning: minimax_m3}}
  b: {config-key: minimaxm3-fp8-mi325x-vllm-agentic-mtp, tp: 8, conc: 16, router: {argv: [python3, -m, smg.launch_router], args: [--model-path, MiniMaxAI/MiniMax-M3-MXFP8], parsers: {tool-call: minimax_m2, reasoning: minimax}}}
`
	tests := []struct {
		name     string
		old, new string // replaced in doc
		want     string // the error's start; "" when the leg plans
		hint     string // in the error too, when set
	}{
		{name: "the shipped leg's commands"},
		{name: "1 misspelt router flag", old: "args: [--model-path,", new: "args: [--model-pth,",
			want: "leg.yaml:7:131: arms.b.router.args[0]: smg v1.9.0-193-gf8daa883 has no flag --model-pth (did you mean --model-path?): fix or remove the flag (`sweep schema show smg@v1.9.0-193-gf8daa883` lists them)"},
		{name: "2 unknown router reasoning parser", old: "reasoning: minimax}}}", new: "reasoning: minimax_m9}}}",
			want: "leg.yaml:7:218: arms.b.router.parsers.reasoning: smg v1.9.0-193-gf8daa883: --reasoning-parser: \"minimax_m9\" is not one of: base, cohere_cmd, deepseek_r1, deepseek_v31, deepseek_v4, glm45, inkling, kimi, kimi_k25, kimi_k3, kimi_thinking, minimax, nano_v3, passthrough, qwen3, qwen3_thinking, step3 (did you mean minimax?): use a name it accepts"},
		{name: "3 router parser named as vLLM names it", old: "tool-call: minimax_m2", new: "tool-call: kimi_k2",
			want: "leg.yaml:7:195: arms.b.router.parsers.tool-call: smg v1.9.0-193-gf8daa883: --tool-call-parser: \"kimi_k2\" is not one of: cohere, deepseek, deepseek31, deepseek32, deepseek_v4, glm45_moe, glm47_moe, inkling, json, kimi_k3, kimik2, llama, minimax_m2, mistral, nemotron, passthrough, pythonic, qwen, qwen_coder, qwen_xml, sarashina, step3 (did you mean kimik2?): use a name it accepts"},
		{name: "4 router without a schema", old: "argv: [python3, -m, smg.launch_router]", new: "argv: [smg, launch]",
			want: "leg.yaml:7:90: arms.b.router.argv: \"smg launch\" has no flag schema, so its flags and parser names cannot be checked: start SMG's router as [python3, -m, smg.launch_router] (schema smg@v1.9.0-193-gf8daa883), or add its flag schema under recipes/schema/data"},
		{name: "5 misspelt value of a router flag", old: "MXFP8]", new: "MXFP8, --policy, round-robin]",
			want: "leg.yaml:7:183: arms.b.router.args[3]: smg v1.9.0-193-gf8daa883: --policy: \"round-robin\" is not one of: random, round_robin, passthrough, cache_aware, power_of_two, least_load, manual, consistent_hashing, prefix_hash (did you mean round_robin?): use a name it accepts (`sweep schema show smg@v1.9.0-193-gf8daa883 --policy` lists them)"},
		{name: "6 misspelt router flag of a direct arm", old: "b: {config-key: minimaxm3-fp8-mi325x-vllm-agentic-mtp, tp: 8, conc: 16, router: {argv: [python3, -m, smg.launch_router], args: [--model-path, MiniMaxAI/MiniMax-M3-MXFP8]",
			new:  "b: {engine: vllm-grpc, model-path: M, tp: 8, router: {argv: [python3, -m, smg.launch_router], args: [--model-pth, M]",
			want: "leg.yaml:7:104: arms.b.router.args[0]: smg v1.9.0-193-gf8daa883 has no flag --model-pth (did you mean --model-path?)"},
		{name: "7 unknown engine parser of a config-key arm", old: "reasoning: minimax_m3}}", new: "reasoning: minimax_m9}}",
			hint: "(did you mean minimax_m3?): use a name it accepts (`sweep schema show vllm@v0.27.1 --reasoning-parser` lists them)",
			want: "leg.yaml:6:119: arms.a.parsers.reasoning: vllm v0.27.1: --reasoning-parser: \"minimax_m9\" is not one of: "},
		{name: "8 misspelt engine tool-call parser", old: "parsers: {tool-call: minimax_m3,", new: "parsers: {tool-call: minimax_m2x,",
			hint: "(did you mean minimax_m2?)",
			want: "leg.yaml:6:96: arms.a.parsers.tool-call: vllm v0.27.1: --tool-call-parser: \"minimax_m2x\" is not one of: "},
		{name: "10 misspelt parser of an SGLang config-key arm", old: "a: {config-key: minimaxm3-fp8-mi325x-vllm-agentic-mtp, tp: 8, conc: 16, parsers: {tool-call: minimax_m3, reasoning: minimax_m3}}",
			new:  "a: {config-key: qwen3.5-fp8-mi325x-sglang-agentic-mtp, tp: 8, conc: 16, parsers: {tool-call: qwen3_codr, reasoning: qwen3}}",
			hint: "(did you mean qwen3_coder?): use a name it accepts (`sweep schema show sglang@v0.5.16 --tool-call-parser` lists them)",
			want: "leg.yaml:6:96: arms.a.parsers.tool-call: sglang v0.5.16: --tool-call-parser: \"qwen3_codr\" is not one of: "},
		{name: "11 vLLM's parser name given to an SGLang arm", old: "a: {config-key: minimaxm3-fp8-mi325x-vllm-agentic-mtp, tp: 8, conc: 16, parsers: {tool-call: minimax_m3, reasoning: minimax_m3}}",
			new:  "a: {config-key: qwen3.5-fp8-mi325x-sglang-agentic-mtp, tp: 8, conc: 16, parsers: {tool-call: qwen3_coder, reasoning: qwen3_thinking}}",
			hint: "(did you mean qwen3-thinking?)",
			want: "leg.yaml:6:120: arms.a.parsers.reasoning: sglang v0.5.16: --reasoning-parser: \"qwen3_thinking\" is not one of: "},
		{name: "9 every problem, in the file's order", old: "args: [--model-path, MiniMaxAI/MiniMax-M3-MXFP8], parsers: {tool-call: minimax_m2, reasoning: minimax}", new: "args: [--model-pth, MiniMaxAI/MiniMax-M3-MXFP8], parsers: {tool-call: minimax_m2, reasoning: minimax_m9}",
			want: "leg.yaml:7:131: arms.b.router.args[0]: smg v1.9.0-193-gf8daa883 has no flag --model-pth (did you mean --model-path?): fix or remove the flag (`sweep schema show smg@v1.9.0-193-gf8daa883` lists them)\nleg.yaml:7:217: arms.b.router.parsers.reasoning: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(doc, tc.old, tc.new, 1)
			require.True(t, tc.old == "" || src != doc, "case does not change the leg")
			l, err := configs.ParseABLeg(configs.Source{Name: "leg.yaml", Data: []byte(src)})
			require.NoError(t, err)
			_, err = NewPlan(l, PlanOptions{Generator: generator(t), Dir: t.TempDir()})
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), tc.want), "got  %v\nwant %s...", err, tc.want)
			assert.Contains(t, err.Error(), tc.hint)
		})
	}
}

// TestShippedLegsPassTheirChecks: every shipped leg plans, so its routers'
// flags and parser names and its engines' commands with the leg's parsers
// are what their schemas accept.
func TestShippedLegsPassTheirChecks(t *testing.T) {
	names := configs.ABLegNames()
	require.NotEmpty(t, names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			l, err := configs.DefaultABLeg(name)
			require.NoError(t, err)
			_, err = NewPlan(l, PlanOptions{Generator: generator(t), Dir: t.TempDir()})
			assert.NoError(t, err)
		})
	}
}

// TestPlanRefusesArgsTheRunnerSets: an arm's or router's args may not
// give a flag the runner or the arm's keys set, in any spelling the tool
// reads as that flag (an argparse abbreviation where it allows them, '_'
// for '-' where it takes that, an alias), refused at the arg. Before,
// only the exact spelling was refused, so SMG ran "--tool-call-pars
// kimik2" after the leg's --tool-call-parser minimax_m2 and the report
// named minimax_m2.
func TestPlanRefusesArgsTheRunnerSets(t *testing.T) {
	const head = "model: Org/M-FC\nrunner: cluster:mi325x-amds\ncategories: [simple_python]\narms:\n  a: {engine: sglang, model-path: M, tp: 8}\n"
	router := func(args string) string {
		return head + "  b: {engine: vllm-grpc, model-path: M, tp: 8, router: {argv: [python3, -m, smg.launch_router], args: [" + args + "]}}\n"
	}
	arm := func(engine, args string) string {
		return head + "  b: {engine: " + engine + ", model-path: M, tp: 8, args: [" + args + "]}\n"
	}
	const smgRefusal = "is set by the runner (ports, worker URL) or by router.parsers; remove it"
	const armRefusal = "is set from the arm's keys (model-path, served-model-name, tp, parsers) or by the runner (host, port); remove it"
	tests := []struct {
		name, doc string
		want      []string // each error: "file:line:col: key: message"
	}{
		{"router parser, full spelling", router("--tool-call-parser, kimik2"),
			[]string{"leg.yaml:6:104: arms.b.router.args[0]: --tool-call-parser " + smgRefusal}},
		{"router parser, abbreviated", router("--tool-call-pars, kimik2"),
			[]string{"leg.yaml:6:104: arms.b.router.args[0]: --tool-call-pars (smg@v1.9.0-193-gf8daa883 reads it as --tool-call-parser) " + smgRefusal}},
		{"router reasoning parser, abbreviated and attached", router("--reasoning-p=kimi"),
			[]string{"leg.yaml:6:104: arms.b.router.args[0]: --reasoning-p (smg@v1.9.0-193-gf8daa883 reads it as --reasoning-parser) " + smgRefusal}},
		{"router ports, each arg", router("--policy, random, --prometheus-po, '9', --port=1"),
			[]string{"leg.yaml:6:122: arms.b.router.args[2]: --prometheus-po (smg@v1.9.0-193-gf8daa883 reads it as --prometheus-port) " + smgRefusal,
				"leg.yaml:6:144: arms.b.router.args[4]: --port " + smgRefusal}},
		{"an abbreviation of a flag the router leaves to the args", router("--poli, random"), nil},
		{"SGLang arm port, abbreviated", arm("sglang", "--por, '1'"),
			[]string{"leg.yaml:6:52: arms.b.args[0]: --por (sglang@v0.5.17 reads it as --port) " + armRefusal}},
		{"SGLang arm parser, abbreviated", arm("sglang", "--tool-call-pars, qwen"),
			[]string{"leg.yaml:6:52: arms.b.args[0]: --tool-call-pars (sglang@v0.5.17 reads it as --tool-call-parser) " + armRefusal}},
		{"vLLM arm parser with underscores", arm("vllm", "--tool_call_parser, hermes"),
			[]string{"leg.yaml:6:50: arms.b.args[0]: --tool_call_parser (vllm@v0.27.1 reads it as --tool-call-parser) " + armRefusal}},
		{"vLLM arm tp, alias", arm("vllm", "-tp, '2'"),
			[]string{"leg.yaml:6:50: arms.b.args[0]: -tp (vllm@v0.27.1 reads it as --tensor-parallel-size) " + armRefusal}},
		{"vLLM arm port, full spelling attached", arm("vllm", "--port=1"),
			[]string{"leg.yaml:6:50: arms.b.args[0]: --port " + armRefusal}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := configs.ParseABLeg(configs.Source{Name: "leg.yaml", Data: []byte(tc.doc)})
			require.NoError(t, err)
			_, err = NewPlan(l, PlanOptions{Generator: generator(t), Dir: t.TempDir()})
			var got []string
			for _, e := range configs.Errors(err) {
				got = append(got, e.Error())
			}
			assert.Equal(t, tc.want, got, "%v", err)
		})
	}
}

// TestPlanLocatesAnAbbreviatedArg: an SGLang arm's arg given as an
// argparse abbreviation, as SGLang accepts it, is refused at that arg.
// Before, only the flag's full spelling was looked for among the args, so
// the refusal named the whole arm.
func TestPlanLocatesAnAbbreviatedArg(t *testing.T) {
	const doc = `model: Org/M-FC
runner: cluster:mi325x-amds
categories: [simple_python]
sampling: {temperature: 0}
arms:
  a: {engine: sglang, model-path: M, tp: 8}
  b: {engine: sglang, model-path: M, tp: 8, args: [--attention-back, tritonx]}
`
	l, err := configs.ParseABLeg(configs.Source{Name: "leg.yaml", Data: []byte(doc)})
	require.NoError(t, err)
	_, err = NewPlan(l, PlanOptions{Generator: generator(t), Dir: t.TempDir()})
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "leg.yaml:7:70: arms.b.args[1]: sglang v0.5.17: --attention-backend: \"tritonx\" is not one of: "), "got %v", err)
}

// TestPlanLocatesAStrayArg: a value given to a bare flag among an arm's
// args (SGLang's --enable-metrics takes none) is refused at that value's
// arg, read as SGLang reads the args. Before, it was refused at the
// whole arm.
func TestPlanLocatesAStrayArg(t *testing.T) {
	const doc = `model: Org/M-FC
runner: cluster:mi325x-amds
categories: [simple_python]
arms:
  a: {engine: sglang, model-path: M, tp: 8}
  b: {engine: sglang, model-path: M, tp: 8, args: [--enable-metrics, 'yes']}
`
	l, err := configs.ParseABLeg(configs.Source{Name: "leg.yaml", Data: []byte(doc)})
	require.NoError(t, err)
	_, err = NewPlan(l, PlanOptions{Generator: generator(t), Dir: t.TempDir()})
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "leg.yaml:6:70: arms.b.args[1]: sglang v0.5.17: unrecognized arguments: yes: "), "got %v", err)
}
