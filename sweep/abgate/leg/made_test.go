package leg

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
)

// TestMadeOfPortsAndDiff: two plans of one leg that drew other ports (a
// simulated leg draws free ones on every run) make the same Made, so a
// rerun keeps the replicates; a leg changed in its engine's flags, its
// router's parsers, its categories or its simulated case model differs,
// and each difference is named once with both values.
func TestMadeOfPortsAndDiff(t *testing.T) {
	plan := func(t *testing.T, port int, edit func(*configs.ABLeg)) *Plan {
		t.Helper()
		l, err := configs.DefaultABLeg("minimaxm3-mi325x-smg")
		require.NoError(t, err)
		if edit != nil {
			edit(l)
		}
		next := port
		p, err := NewPlan(l, PlanOptions{Generator: generator(t), Simulate: true, Port: func() (int, error) { next += 100; return next, nil }})
		require.NoError(t, err)
		return p
	}
	was, other := plan(t, 12000, nil), plan(t, 17000, nil)
	for i := range was.Arms {
		assert.Empty(t, madeDiff(madeOf(was, &was.Arms[i], true), madeOf(other, &other.Arms[i], true)), "arm %s: other ports", was.Arms[i].Label)
	}
	b := madeOf(was, &was.Arms[1], true)
	assert.Contains(t, b.Server.RouterArgv, "http://127.0.0.1:{engine-port}", "the router's worker URL names the engine's port")
	assert.NotContains(t, b.EngineEnv["AIPERF_SERVER_METRICS_URLS"], "12", "the metrics URL's port is named")

	for _, tc := range []struct {
		name      string
		edit      func(*configs.ABLeg)
		simulated bool
		want      []string
	}{
		{"router parser", func(l *configs.ABLeg) { l.Arms[1].Router.Parsers.ToolCall = str("kimik2") }, true,
			[]string{"router flag --tool-call-parser: minimax_m2, now kimik2"}},
		{"categories", func(l *configs.ABLeg) { l.Categories = []string{"simple_python"} }, true,
			[]string{"bfcl generate flag --test-category: simple_python,simple_java,simple_javascript,multiple,parallel,parallel_multiple,irrelevance," +
				"live_simple,live_multiple,live_parallel,live_parallel_multiple,live_irrelevance,live_relevance," +
				"multi_turn_base,multi_turn_miss_func,multi_turn_miss_param,multi_turn_long_context, now simple_python"}},
		{"case model", func(l *configs.ABLeg) { l.Simulate.Seed = 12 }, true, []string{"simulated bfcl's seed: 11, now 12"}},
		{"real", nil, false, []string{"engines and bfcl: simulated, now real"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := plan(t, 12000, tc.edit)
			assert.Equal(t, tc.want, madeDiff(b, madeOf(now, &now.Arms[1], tc.simulated)))
		})
	}
}

// TestArgvDiff: argvs that give the same flags the same values and the
// same positional words do not differ, however a flag is spelt; other
// values, flags or positional words do, each named.
func TestArgvDiff(t *testing.T) {
	router := []string{"python3", "-m", "smg.launch_router", "--host", "127.0.0.1", "--port", "{port}"}
	with := func(argv []string, more ...string) []string { return append(slices.Clone(argv), more...) }
	for _, tc := range []struct {
		name     string
		was, now []string
		want     []string
	}{
		{"same", with(router, "--model-path", "M"), with(router, "--model-path", "M"), nil},
		{"attached value", with(router, "--model-path=M"), with(router, "--model-path", "M"), nil},
		{"attached value, the other way", with(router, "--model-path", "M"), with(router, "--model-path=M"), nil},
		{"other value", with(router, "--model-path=M"), with(router, "--model-path", "N"),
			[]string{"router flag --model-path: M, now N"}},
		{"flag added", router, with(router, "--model-path", "M"),
			[]string{"router flag --model-path: absent, now M"}},
		{"other positional", []string{"vllm", "serve", "M", "--port", "1"}, []string{"vllm", "serve", "N", "--port", "1"},
			[]string{"router command: vllm serve M --port 1, now vllm serve N --port 1"}},
		{"none before", nil, router, []string{"router: none, now " + strings.Join(router, " ")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, argvDiff("router", tc.was, tc.now), "was %q, now %q", tc.was, tc.now)
		})
	}
}

// TestPortNamesArgv: a record names the arm's ports in a command however
// its port flag is spelt (the value after it, attached with "=", an
// abbreviation the tool accepts) and in its URLs, so a rerun that drew
// other ports reads as the same leg; a port number given to a flag not
// named for a port, and a flag of a tool that takes no abbreviations,
// are left as they are.
func TestPortNamesArgv(t *testing.T) {
	names := portNames{"20000": "{port}", "21001": "{engine-port}", "30000": "{router-metrics-port}"}
	sglang := []string{"python3", "-m", "sglang.launch_server", "--model-path", "M"}
	router := []string{"python3", "-m", "smg.launch_router", "--worker-urls", "http://127.0.0.1:21001"}
	with := func(argv []string, more ...string) []string { return append(slices.Clone(argv), more...) }
	for _, tc := range []struct {
		name       string
		argv, want []string
	}{
		{"--port N", with(sglang, "--port", "20000"), with(sglang, "--port", "{port}")},
		{"--port=N", with(sglang, "--port=20000"), with(sglang, "--port={port}")},
		{"abbreviated --po N (sglang allows abbreviations)", with(sglang, "--po", "20000"), with(sglang, "--po", "{port}")},
		{"abbreviated --po=N", with(sglang, "--po=20000"), with(sglang, "--po={port}")},
		{"router --port and --prometheus-port", with(router, "--port", "20000", "--prometheus-port", "30000"),
			[]string{"python3", "-m", "smg.launch_router", "--worker-urls", "http://127.0.0.1:{engine-port}", "--port", "{port}", "--prometheus-port", "{router-metrics-port}"}},
		{"router abbreviated --prometheus-p=N", with(router, "--prometheus-p=30000"),
			[]string{"python3", "-m", "smg.launch_router", "--worker-urls", "http://127.0.0.1:{engine-port}", "--prometheus-p={router-metrics-port}"}},
		{"vllm --port N", []string{"vllm", "serve", "M", "--port", "21001"}, []string{"vllm", "serve", "M", "--port", "{engine-port}"}},
		{"vllm takes no abbreviation", []string{"vllm", "serve", "M", "--po", "21001"}, []string{"vllm", "serve", "M", "--po", "21001"}},
		{"a port number given to another flag", with(sglang, "--max-running-requests", "20000"), with(sglang, "--max-running-requests", "20000")},
		{"a port not the arm's", with(sglang, "--port", "8888"), with(sglang, "--port", "8888")},
		{"an unknown program's --port", []string{"engine", "--port", "20000"}, []string{"engine", "--port", "{port}"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, names.argv(tc.argv), "argv %q", tc.argv)
		})
	}
}
