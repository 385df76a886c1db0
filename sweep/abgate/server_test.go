package abgate

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/report-servers.{md,json}")

// TestReportRecordsServers: report.md and report.json say what each arm's
// server ran (config key or recipe, image, model and served name, engine
// and router commands, their parsers), so that a reader sees arms that
// ran different images or parsers. Arm a is a config-key point; arm b
// the same model declared directly, in an older image, behind SMG.
func TestReportRecordsServers(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	n := func(v int) *int { return &v }
	sim := true
	rep := &Report{Verdict: Passed, Leg: "minimaxm3-mi325x-smg", Model: "MiniMaxAI/MiniMax-M3-MXFP8-FC", Simulated: &sim, Tolerance: 2,
		Roots:       ReportRoots{A: []string{"out/a/bfcl-r1"}, B: []string{"out/b/bfcl-r1"}},
		Primary:     Primary{Metric: "weighted", Arms: Arms{A: f(85), B: f(84.5), Delta: f(-0.5)}, CI90: &[2]float64{-1.5, 0.5}, McNemarP: f(0.3), ABetter: 3, BBetter: 1},
		Overall:     Overall{Unweighted: Arms{A: f(85), B: f(84.5), Delta: f(-0.5)}, Weighted: Arms{A: f(85), B: f(84.5), Delta: f(-0.5)}},
		Categories:  []CategoryResult{{Category: "simple_python", Cases: 400, Arms: Arms{A: f(85), B: f(84.5), Delta: f(-0.5)}, APassBFail: n(3), AFailBPass: n(1), InfraErrorsA: n(0), InfraErrorsB: n(0), CI90: &[2]float64{-1.5, 0.5}, Clean: true}},
		Problems:    []Problem{},
		ReplicatesA: 1, ReplicatesB: 1,
		MovedAside: []string{"report.md.1", "report.json.1", "b/server.1"},
		Servers: []ArmServer{
			{Arm: "a", Name: "vllm", ConfigKey: "minimaxm3-fp8-mi325x-vllm-agentic-mtp", Precision: "fp8", Recipe: "minimaxm3_fp8_mi325x_mtp",
				Image: "vllm/vllm-openai-rocm:v0.27.1", ModelPath: "MiniMaxAI/MiniMax-M3-MXFP8", ServedModel: "MiniMaxAI/MiniMax-M3-MXFP8",
				EngineArgv:    []string{"vllm", "serve", "MiniMaxAI/MiniMax-M3-MXFP8", "--port", "8888", "--tool-call-parser", "minimax_m3", "--reasoning-parser", "minimax_m3", "--chat-template-kwargs", `{"enable_thinking": true}`},
				EngineParsers: Parsers{ToolCall: "minimax_m3", Reasoning: "minimax_m3"}},
			{Arm: "b", Name: "smg", Recipe: "ab-vllm-grpc", Image: "vllm/vllm-openai-rocm:v0.20.0", ModelPath: "MiniMaxAI/MiniMax-M3-MXFP8", ServedModel: "MiniMaxAI/MiniMax-M3-MXFP8",
				EngineArgv:    []string{"python3", "-m", "vllm.entrypoints.grpc_server", "--model", "MiniMaxAI/MiniMax-M3-MXFP8", "--port", "8891"},
				RouterArgv:    []string{"python3", "-m", "smg.launch_router", "--worker-urls", "grpc://127.0.0.1:8891", "--tool-call-parser", "minimax_m2", "--model-path", "MiniMaxAI/MiniMax-M3-MXFP8"},
				RouterParsers: &Parsers{ToolCall: "minimax_m2"}},
		},
	}
	var md, js bytes.Buffer
	require.NoError(t, WriteTable(&md, rep))
	require.NoError(t, WriteJSON(&js, rep))
	for _, g := range []struct {
		file string
		got  []byte
	}{{"report-servers.md", md.Bytes()}, {"report-servers.json", js.Bytes()}} {
		path := filepath.Join("testdata", g.file)
		if *update {
			require.NoError(t, os.MkdirAll("testdata", 0o755))
			require.NoError(t, os.WriteFile(path, g.got, 0o644))
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(g.got), "%s (go test -update rewrites it)", path)
	}

	// sweep ab compare knows no servers: neither file mentions them.
	rep.Servers = nil
	md.Reset()
	js.Reset()
	require.NoError(t, WriteTable(&md, rep))
	require.NoError(t, WriteJSON(&js, rep))
	assert.NotContains(t, md.String(), "Arms as launched")
	assert.NotContains(t, js.String(), `"servers"`)
}

// TestReportArmNotStarted: an arm whose server an interrupted leg never
// started is listed as not started, with no root ("none"), in report.md;
// report.json marks it not_started and lists its roots as [].
func TestReportArmNotStarted(t *testing.T) {
	rep := &Report{Verdict: Incomplete, Leg: "minimaxm3-mi325x-smg", Model: "MiniMaxAI/MiniMax-M3-MXFP8-FC", Tolerance: 2,
		Roots:       ReportRoots{A: []string{"out/a/bfcl-r1"}, B: []string{}},
		Primary:     Primary{Metric: "weighted"},
		Categories:  []CategoryResult{},
		Problems:    []Problem{{Arm: Every, Root: "out", Category: Every, Reason: ReasonInterrupted, Detail: "interrupted by SIGINT before the report"}},
		ReplicatesA: 1,
		Servers: []ArmServer{
			{Arm: "a", Name: "vllm", Recipe: "ab-vllm", EngineArgv: []string{"vllm", "serve", "m", "--port", "8888"}},
			{Arm: "b", Name: "smg", Recipe: "ab-vllm-grpc", EngineArgv: []string{"python3", "-m", "vllm.entrypoints.grpc_server", "--port", "{engine-port}"},
				RouterArgv: []string{"python3", "-m", "smg.launch_router", "--port", "{port}"}, RouterParsers: &Parsers{}, NotStarted: true},
		},
	}
	var md, js bytes.Buffer
	require.NoError(t, WriteTable(&md, rep))
	require.NoError(t, WriteJSON(&js, rep))
	assert.Contains(t, md.String(), "\nA: 1 root, B: 0 roots;")
	assert.Contains(t, md.String(), "; roots A: out/a/bfcl-r1; B: none.")
	assert.Contains(t, md.String(), "\n- A (vllm): recipe ab-vllm;")
	assert.Contains(t, md.String(), "\n- B (smg): not started; recipe ab-vllm-grpc;")
	assert.Contains(t, md.String(), "\n- interrupted: the leg (out): interrupted by SIGINT before the report\n")
	assert.Equal(t, 1, strings.Count(js.String(), `"not_started": true`), js.String())
	assert.Contains(t, js.String(), `"b": []`)
}

// TestWriteServersSaysWhichRan: an arm's server line says first when its
// server was not started (ports by name, never used) or was an earlier
// run's whose replicates were all kept (ports by name, as recorded), so
// a reader never takes {port} placeholders for this run's server.
func TestWriteServersSaysWhichRan(t *testing.T) {
	srv := ArmServer{Arm: "b", Name: "smg", Recipe: "ab-vllm", Image: "img", ModelPath: "M", ServedModel: "M",
		EngineArgv: []string{"vllm", "serve", "M", "--port", "{port}"}}
	for _, tc := range []struct {
		name string
		edit func(*ArmServer)
		want string
	}{
		{"this run's", func(*ArmServer) {}, "- B (smg): recipe ab-vllm; image img;"},
		{"not started", func(s *ArmServer) { s.NotStarted = true }, "- B (smg): not started; recipe ab-vllm; image img;"},
		{"kept", func(s *ArmServer) { s.Kept = true },
			"- B (smg): kept from an earlier run (every replicate kept; no server started by this run; ports by name); recipe ab-vllm; image img;"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := srv
			tc.edit(&s)
			var b strings.Builder
			writeServers(&b, []ArmServer{s})
			want := "\nArms as launched:\n" + tc.want
			assert.True(t, strings.HasPrefix(b.String(), want), "got:\n%s\nwant it to start with:\n%s", b.String(), want)
		})
	}
}
