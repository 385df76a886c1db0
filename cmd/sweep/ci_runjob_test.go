package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/cli"
	"sweep/internal/usage"
	"sweep/sweep/gha"
)

// TestCIRunJob checks that a job of the fan-out becomes "sweep run"
// invocations with the point's arm, concurrency and runner, and that the
// result file name reaches $GITHUB_OUTPUT.
func TestCIRunJob(t *testing.T) {
	cases, data := loadIXCases(t)
	var c *ixCase
	for i := range cases {
		if k := &cases[i]; k.Kind == "changelog" && k.OK && len(familyRows(decodeJSON(t, string(k.Output)).(map[string]any))["sweep-agentic"]) > 2 {
			c = k
			break
		}
	}
	require.NotNil(t, c)
	base, head := cutChangelog(t, data, c.EntryIndex, c.Added)
	git := map[string][]byte{"b:perf-changelog.yaml": base, "h:perf-changelog.yaml": head}
	inputs := ixInputs()
	out, _, err := runCIMatrixCmd(t, &cachedLoader{}, git, append([]string{"--labels", "non-canary-full-sweep-enabled,agentx-fast", "--per", "arm", "--base-ref", "b", "--head-ref", "h"}, inputs...))
	require.NoError(t, err)
	var fan struct {
		Jobs map[string][]json.RawMessage `json:"jobs"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &fan))
	job := fan.Jobs["sweep-agentic"][0]
	var parsed struct {
		ConfigKey string `json:"config-key"`
		Points    []struct {
			Conc int `json:"conc"`
		} `json:"points"`
	}
	require.NoError(t, json.Unmarshal(job, &parsed))
	dir := t.TempDir()
	jobFile, ghOut := filepath.Join(dir, "job.json"), filepath.Join(dir, "github-output")
	require.NoError(t, os.WriteFile(jobFile, job, 0o644))

	var calls [][]string
	var stderr bytes.Buffer
	o := &ciRunJobOptions{IO: &IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &stderr},
		Job: jobFile, RunJob: gha.RunJob{RunnerName: "mi325x-amds_03", Out: filepath.Join(dir, "results"), Inferencex: "/ix"}, GitHubOutput: ghOut,
		Run: func(_ context.Context, args []string) error { calls = append(calls, args); return nil }}
	require.NoError(t, ciRunJobRun(t.Context(), o))
	require.Len(t, calls, len(parsed.Points))
	for i, args := range calls {
		line := strings.Join(args, " ")
		assert.Contains(t, line, "--config-key "+parsed.ConfigKey)
		assert.Contains(t, line, fmt.Sprintf("--conc %d ", parsed.Points[i].Conc))
		assert.Contains(t, line, "--runner-name mi325x-amds_03")
		assert.Contains(t, line, "--fast")
		assert.Contains(t, line, "--launch", "a real job runs through the runner's launcher, not on the runner host")
		assert.Contains(t, line, "--inferencex /ix")
	}
	calls = nil
	o.OnHost, o.GitHubOutput = true, ""
	require.NoError(t, ciRunJobRun(t.Context(), o))
	assert.NotContains(t, strings.Join(calls[0], " "), "--launch")
	calls = nil
	o.OnHost, o.Simulate = false, true
	require.NoError(t, ciRunJobRun(t.Context(), o))
	assert.NotContains(t, strings.Join(calls[0], " "), "--launch")
	assert.NotContains(t, calls[0], "--force")
	calls = nil
	o.Force = true
	require.NoError(t, ciRunJobRun(t.Context(), o))
	assert.Contains(t, calls[0], "--force", "ci run-job --force is sweep run's, which its advice names")
	o.Force = false
	got, err := os.ReadFile(ghOut)
	require.NoError(t, err)
	assert.Regexp(t, `^result-filename=\S+_mi325x-amds_03_recipe-[0-9a-f]{16}\n$`, string(got))

	// A result file name that is a path (an edited job file) would put a
	// point's results outside --out: refused before any point runs.
	var edited map[string]any
	require.NoError(t, json.Unmarshal(job, &edited))
	pts := edited["points"].([]any)
	bad := map[string]any{"conc": 4096, "result-filename": "../../x", "artifacts": []any{}}
	edited["points"] = append(pts[:1:1], bad)
	data, err = json.Marshal(edited)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(jobFile, data, 0o644))
	calls = nil
	err = ciRunJobRun(t.Context(), o)
	assert.EqualError(t, err, "--job "+jobFile+`: point 2: result-filename "../../x" must be a file name, not a path`)
	assert.Empty(t, calls, "no point ran")
}

// TestCIRunJobPRData: the PR sweep passes the pull request's master
// configs (data) and the base branch's runners.yaml to every "sweep run",
// and refuses a job whose model's organisation is not one whose
// repository code the sweep runs (--trust-remote-code), running nothing.
func TestCIRunJobPRData(t *testing.T) {
	dir := t.TempDir()
	job := func(model string) string {
		f := filepath.Join(dir, strings.ReplaceAll(model, "/", "_")+".json")
		cfg := map[string]any{"image": "x", "model": model, "model-prefix": "qwen3.5", "precision": "fp8", "framework": "sglang",
			"runner": "mi325x-amds", "tp": 8, "ep": 1, "dp-attn": false, "conc": 4, "exp-name": "e", "scenario-type": "agentic-coding"}
		data, err := json.Marshal(map[string]any{"runner": "mi325x-amds", "config-key": "k", "config": cfg,
			"points": []map[string]any{{"conc": 4, "result-filename": "r_{runner}"}}})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(f, data, 0o644))
		return f
	}
	var calls [][]string
	o := &ciRunJobOptions{IO: &IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}},
		RunJob: gha.RunJob{RunnerName: "mi325x-amds_03", Out: filepath.Join(dir, "results"),
			ConfigFiles: []string{"pr/configs/amd-master.yaml", "pr/configs/nvidia-master.yaml"}, RunnerConfig: "tool/configs/runners.yaml"},
		Run: func(_ context.Context, args []string) error { calls = append(calls, args); return nil }}
	o.Job = job("Qwen/Qwen3.5-397B-A17B-FP8")
	require.NoError(t, ciRunJobRun(t.Context(), o))
	require.Len(t, calls, 1)
	line := strings.Join(calls[0], " ")
	assert.Contains(t, line, "--config-files pr/configs/amd-master.yaml,pr/configs/nvidia-master.yaml")
	assert.Contains(t, line, "--runner-config tool/configs/runners.yaml")

	calls = nil
	o.Job = job("some-org/x")
	err := ciRunJobRun(t.Context(), o)
	require.ErrorContains(t, err, `organisation "some-org" is not one whose code the PR sweep runs`)
	assert.Empty(t, calls)
}

// TestCIRunJobGitHubOutputCheckedFirst: --github-output naming a
// directory was found out only after the point had run ("open g: is a
// directory", exit 1, not naming the flag). It is checked before any
// point runs, exit 2 naming the flag; and a point refused before it ran
// names no result for the upload.
func TestCIRunJobGitHubOutputCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	cfg := map[string]any{"image": "x", "model": "Qwen/Qwen3.5-397B-A17B-FP8", "model-prefix": "qwen3.5", "precision": "fp8", "framework": "sglang",
		"runner": "mi325x-amds", "tp": 8, "ep": 1, "dp-attn": false, "conc": 4, "exp-name": "e", "scenario-type": "agentic-coding"}
	data, err := json.Marshal(map[string]any{"runner": "mi325x-amds", "config-key": "k", "config": cfg,
		"points": []map[string]any{{"conc": 4, "result-filename": "r_{runner}"}}})
	require.NoError(t, err)
	jobFile := filepath.Join(dir, "job.json")
	require.NoError(t, os.WriteFile(jobFile, data, 0o644))
	for _, tc := range []struct {
		name, output string
		runErr       error
		want         string // the error; "" none
		written      string // the output file's text afterwards; "-" not read
	}{
		{"1 a directory", dir, nil, "--github-output " + dir + ": is a directory: give the file to append to ($GITHUB_OUTPUT)", "-"},
		{"2 in a missing directory", filepath.Join(dir, "no", "out"), nil, "--github-output " + filepath.Join(dir, "no", "out") + ": its directory " + filepath.Join(dir, "no") + " does not exist: give a file in an existing directory ($GITHUB_OUTPUT)", "-"},
		{"3 a new file", filepath.Join(dir, "new"), nil, "", "result-filename=r_mi325x-amds_03\n"},
		{"4 a refused point names no result", filepath.Join(dir, "refused"), usage.Errorf("--out: not empty"), "point conc 4: --out: not empty", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls int
			o := &ciRunJobOptions{IO: &IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}},
				Job: jobFile, GitHubOutput: tc.output, RunJob: gha.RunJob{RunnerName: "mi325x-amds_03", Out: filepath.Join(dir, "results")},
				Run: func(context.Context, []string) error { calls++; return tc.runErr }}
			err := ciRunJobRun(t.Context(), o)
			if tc.want == "" {
				require.NoError(t, err)
			} else {
				require.EqualError(t, err, tc.want)
				assert.True(t, cli.IsUsage(err), "exit 2: %v", err)
			}
			if tc.runErr == nil && tc.want != "" {
				assert.Zero(t, calls, "no point ran")
			}
			if tc.written != "-" {
				got, _ := os.ReadFile(tc.output)
				assert.Equal(t, tc.written, string(got))
			}
		})
	}
}

// TestCIRunJobAllEvals: under the all-evals label sweep-agentic-evals has
// a job for every agentic point of the key, but `sweep run --eval` took
// only the point InferenceX evaluates by default: 31 of the 32 jobs of
// qwen3.5-fp8-mi325x-sglang-agentic-mtp exited 2 ("has no point tp2 ep2
// dp-attn=false conc1; its eval points are: --tp 8 --ep 1 --conc 80") on
// a GPU runner. ci run-job passes --all-evals, and every job gets its
// point: simulated, each then stops where any eval does (lm-eval cannot
// score simulated text). --all-evals without --eval is a usage error.
func TestCIRunJobAllEvals(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(repoRoot, "perf-changelog.yaml")
	data, err := os.ReadFile(base)
	require.NoError(t, err)
	head := filepath.Join(dir, "head.yaml")
	require.NoError(t, os.WriteFile(head, append(data, "\n- config-keys:\n    - qwen3.5-fp8-mi325x-sglang-agentic-mtp\n  description:\n    - \"Rerun.\"\n  pr-link: XXX\n"...), 0o644))
	code, out, stderr := runCLI(t, "ci", "matrix", "--labels", "full-sweep-enabled,all-evals", "--base-file", base, "--head-file", head)
	require.Equal(t, 0, code, stderr)
	var fan gha.FanoutJSON
	require.NoError(t, json.Unmarshal([]byte(out), &fan))
	jobs := fan.Jobs["sweep-agentic-evals"]
	require.Greater(t, len(jobs), 1, "every agentic point is an eval job")
	for i, j := range jobs {
		data, err := json.Marshal(j)
		require.NoError(t, err)
		jobFile := filepath.Join(dir, fmt.Sprintf("job%d.json", i))
		require.NoError(t, os.WriteFile(jobFile, data, 0o644))
		code, _, stderr := runCLI(t, "ci", "run-job", "--job", jobFile, "--runner-name", "mi325x-amds_00", "--out", filepath.Join(dir, fmt.Sprint(i)), "--simulate")
		assert.Equal(t, exitError, code, "job %d (conc %d): %s", i, j.Points[0].Conc, stderr)
		assert.Contains(t, stderr, "eval point: lm-eval scores synthetic text as 0: not available in simulation", "job %d (conc %d)", i, j.Points[0].Conc)
	}

	code, _, stderr = runCLI(t, "run", "--all-evals", "--config-key", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "2", "--ep", "2", "--conc", "1", "--out", filepath.Join(dir, "x"), "--simulate")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--all-evals widens which points --eval runs: give --eval too")
}
