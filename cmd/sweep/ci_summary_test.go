package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/gha"
)

// TestCISummaryExitCodes: a --fanout that is not a fan-out ({} or a job
// file) was read as "no sweep label: nothing ran" with exit 0, and a
// sweep whose results were missing or unreadable exited 0.
func TestCISummaryExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	const point = `{"conc": 1, "result-filename": "m_conc1_{runner}", "artifacts": ["bmk_agentic_m_conc1_{runner}"]}`
	fan := write("fan.json", `{"sweep": true, "primary": "sweep-enabled", "counts": {"canary": 0, "sweep-agentic": 1},
		"jobs": {"sweep-agentic": [{"runner": "r", "runs-on": ["r"], "config-key": "k", "config": {}, "points": [`+point+`], "agentx-fast": false}]}}`)
	write("complete/a/m_conc1_r1.json", `{"conc": 1, "valid": true, "request_metrics": {"throughput": {}, "latency": {}}}`)
	write("unreadable/a/m_conc1_r1.json", `{"conc": 1, "request_metrics": {`)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "empty"), 0o755))
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // "" for none
		stderr string
	}{
		{"complete", []string{"--fanout", fan, filepath.Join(dir, "complete")}, 0, "| m\\_conc1\\_r1 | 1 |", ""},
		{"missing", []string{"--fanout", fan, filepath.Join(dir, "empty")}, exitError, "- no result: k conc 1 (sweep-agentic): m\\_conc1\\_{runner}.json\n", "1 point's result missing"},
		{"unreadable", []string{"--fanout", fan, filepath.Join(dir, "unreadable")}, exitError, "- unreadable: ", "1 file unreadable"},
		{"empty object", []string{"--fanout", write("empty.json", `{}`), filepath.Join(dir, "complete")}, exitUsage, "", `lacks "sweep", "counts", "jobs"`},
		{"job file", []string{"--fanout", write("job.json", `{"runner": "r", "points": [`+point+`]}`), filepath.Join(dir, "complete")}, exitUsage, "", "one job of a fan-out"},
		{"truncated", []string{"--fanout", write("trunc.json", `{"sweep": tr`), filepath.Join(dir, "complete")}, exitUsage, "", "trunc.json:1:"},
		{"missing fanout", []string{"--fanout", filepath.Join(dir, "none.json"), filepath.Join(dir, "complete")}, exitUsage, "", "none.json"},
		{"no dir, no fanout", []string{filepath.Join(dir, "nothere")}, exitUsage, "", "nothere does not exist"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"ci", "summary"}, tc.args...)...)
			assert.Equal(t, tc.code, code, "stdout %s\nstderr %s", stdout, stderr)
			assert.Contains(t, stderr, tc.stderr)
			if tc.stdout == "" {
				assert.Empty(t, stdout)
				return
			}
			assert.Contains(t, stdout, tc.stdout)
			assert.True(t, strings.HasSuffix(stdout, "\n"), "ends with a newline: %q", stdout)
		})
	}
}

// TestCISummaryNamesEveryJobOfTheMatrix: on the fan-out "ci matrix"
// prints for a fixed-seq-len key under full-sweep-enabled, "ci summary"
// named none of the missing results: it checked agentic points only, and
// the canary and the 1k1k/8k1k families are fixed-seq-len. Every point of
// the jobs the workflow runs that has a result artifact (bmk_) is named,
// fixed-seq-len ones marked so with why; eval-only points are not.
func TestCISummaryNamesEveryJobOfTheMatrix(t *testing.T) {
	dir := t.TempDir()
	base, err := os.ReadFile(filepath.Join(repoRoot, "perf-changelog.yaml"))
	require.NoError(t, err)
	head := filepath.Join(dir, "head.yaml")
	require.NoError(t, os.WriteFile(head, append(base, "\n- config-keys:\n    - dsr1-fp4-mi355x-sglang\n  description:\n    - \"Rerun.\"\n  pr-link: XXX\n"...), 0o644))
	code, fanout, stderr := runCLI(t, "ci", "matrix", "--labels", "full-sweep-enabled", "--base-file", filepath.Join(repoRoot, "perf-changelog.yaml"), "--head-file", head)
	require.Equal(t, 0, code, stderr)
	path := filepath.Join(dir, "fanout.json")
	require.NoError(t, os.WriteFile(path, []byte(fanout), 0o644))
	var fan gha.FanoutJSON
	require.NoError(t, json.Unmarshal([]byte(fanout), &fan))

	code, stdout, stderr := runCLI(t, "ci", "summary", "--fanout", path, filepath.Join(dir, "results"))
	assert.Equal(t, exitError, code, stderr)
	named, evals := 0, 0
	for _, family := range append([]string{"canary"}, gha.WorkflowFamilies()...) {
		jobs := fan.Jobs[family]
		if family == "canary" {
			jobs = fan.Canary
		}
		for _, j := range jobs {
			for _, p := range j.Points {
				line := fmt.Sprintf("- no result: %s conc %d (%s, fixed-seq-len): %s.json\n", j.ConfigKey, p.Conc, family, p.ResultFilename)
				if strings.HasPrefix(p.Artifacts[0], "eval_") {
					evals++
					assert.NotContains(t, stdout, p.ResultFilename+".json", "an eval-only point writes no result")
					continue
				}
				named++
				assert.Contains(t, stdout, strings.ReplaceAll(line, "_", `\_`))
			}
		}
	}
	require.Positive(t, named, "the fan-out has fixed-seq-len points:\n%s", fanout)
	require.Positive(t, evals, "and eval-only ones")
	require.Len(t, fan.Canary, 1, "the canary is a fixed-seq-len point")
	assert.Contains(t, stdout, fmt.Sprintf("The %d fixed-seq-len points above cannot have a result from this workflow", named))
	assert.Contains(t, stderr, fmt.Sprintf("%d points' results missing", named))
}
