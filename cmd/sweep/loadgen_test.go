package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/simproto"
	"sweep/loadgen"
)

// sseServer answers chat completions with three streamed words and usage.
func sseServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			fmt.Fprintln(w, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 1")
			return
		}
		assert.Equal(t, "/v1/chat/completions", r.URL.Path)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, tok := range []string{"a", "b", "c"} {
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%q}}]}\n\n", tok+" ")
		}
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":3,\"total_tokens\":13}}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestLoadgenCommand(t *testing.T) {
	srv := sseServer(t)
	dir, hub := t.TempDir(), t.TempDir()
	base := []string{"loadgen", "--", "profile", "--url", srv.URL, "--model", "m", "--streaming", "--concurrency", "2"}
	// A real engine's client (sweep run without --simulate) never replays
	// the synthetic traces for a trace set it cannot find.
	missing := append([]string{"loadgen", "--require-traces", "--"}, append(slices.Clone(base[2:]), "--request-count", "2",
		"--public-dataset", "semianalysis_cc_traces_weka_062126_256k", "--output-artifact-dir", t.TempDir())...)
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"no aiperf command", []string{"loadgen"}, exitUsage, "", "want an aiperf command after --"},
		{"schema rejects unknown flag", append(base, "--request-count", "2", "--use-chat-template"), exitError, "", "has no flag --use-chat-template (did you mean --apply-chat-template?)"},
		{"valid aiperf flag not implemented", append(base, "--request-count", "2", "--request-rate", "3"), exitError, "", "accepts --request-rate, but the built-in load generator does not implement it"},
		{"bad option value", append(base, "--benchmark-duration", "60", "--trajectory-start-min-ratio", "0.9", "--trajectory-start-max-ratio", "0.1"), exitError, "", "--trajectory-start-min-ratio must be <= --trajectory-start-max-ratio (0.9 > 0.1)"},
		{"run", append(base, "--request-count", "4", "--trace-idle-gap-cap-seconds", "0.001", "--use-server-token-count", "--output-artifact-dir", dir),
			exitOK, filepath.Join(dir, "profile_export.jsonl") + "\n" + filepath.Join(dir, "profile_export_aiperf.json") + "\n" + filepath.Join(dir, "profile_export_aiperf.csv") + "\n" + filepath.Join(dir, "profile_export_console.txt") + "\n" + filepath.Join(dir, "server_metrics_export.json") + "\n" + filepath.Join(dir, "server_metrics_export.csv") + "\n",
			"profiling 4 ok / 0 failed"},
		{"--require-traces: a trace set not in the hub cache", missing, exitError, "",
			"loadgen: trace set semianalysisai/cc-traces-weka-062126-256k is not in the local Hugging Face cache (looked in " + hub + ", "},
		{"without --", []string{"loadgen", "profile", "--url", srv.URL, "--model", "m", "--concurrency", "1", "--request-count", "1", "--trace-idle-gap-cap-seconds", "0.001", "--no-server-metrics", "--output-artifact-dir", t.TempDir()}, exitOK, "profile_export_aiperf.json", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(simproto.EnvLoadgenTimeScale, "")
			t.Setenv(simproto.EnvTimeScale, "")
			t.Setenv("HF_HUB_CACHE", hub)
			code, out, errOut := runCLI(t, tc.args...)
			assert.Equal(t, tc.code, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
			assert.Contains(t, out, tc.stdout)
			assert.Contains(t, errOut, tc.stderr)
		})
	}
	b, err := os.ReadFile(filepath.Join(dir, "profile_export_aiperf.json"))
	require.NoError(t, err)
	assert.Contains(t, string(b), `"cli_command": "sweep loadgen -- profile --url `)
}

func TestLoadgenTimeScaleEnv(t *testing.T) {
	t.Setenv(simproto.EnvLoadgenTimeScale, "")
	t.Setenv(simproto.EnvTimeScale, "nope")
	code, _, errOut := runCLI(t, "loadgen", "--", "profile", "--model", "m", "--concurrency", "1", "--request-count", "1")
	assert.Equal(t, exitError, code)
	assert.True(t, strings.Contains(errOut, `$SWEEP_SIM_TIME_SCALE="nope": want a positive number`), errOut)
}

// TestLoadgenAcceptsRecipeCommands: every aiperf command the shipped
// recipes run (InferenceX's recorded client argvs) is accepted by the
// built-in load generator with the default schema, program swapped.
func TestLoadgenAcceptsRecipeCommands(t *testing.T) {
	b, err := os.ReadFile("../../testdata/loadgen/recipe-client-argvs.json")
	require.NoError(t, err)
	var cases []struct {
		ConfigKey  string   `json:"config_key"`
		Conc       int      `json:"conc"`
		ClientArgv []string `json:"client_argv"`
	}
	require.NoError(t, json.Unmarshal(b, &cases))
	require.NotEmpty(t, cases)
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/conc%d", c.ConfigKey, c.Conc), func(t *testing.T) {
			argv := slices.Clone(c.ClientArgv[1:]) // drop the program
			for i, a := range argv {
				argv[i] = strings.ReplaceAll(a, "${RESULT_DIR}", t.TempDir())
			}
			flags, _, err := loadgen.ParseCommand(argv, loadgen.DefaultSchema)
			require.NoError(t, err)
			o, err := loadgen.OptionsFromFlags(flags)
			require.NoError(t, err)
			assert.Equal(t, c.Conc, o.Concurrency)
			assert.True(t, o.Streaming)
		})
	}
}
