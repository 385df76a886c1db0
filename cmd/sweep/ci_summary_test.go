package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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

// TestCISummaryOfTheMatrix pipes the fan-out "ci matrix" prints for real
// config keys into "ci summary". Before, on a fixed-seq-len key
// (dsr1-fp4-mi355x-sglang) under full-sweep-enabled, the canary and the
// sweep-single-node-8k1k jobs were run jobs that `sweep run` refuses, and
// the summary named each of their points as a missing result and exited
// 1 whatever the workflow did. Now their families are listed as not run,
// with the key and why, and expect no result: the summary exits 0 when
// every point of the agentic jobs it runs has its result and 1, naming
// each, when one is missing; eval-only points write none.
func TestCISummaryOfTheMatrix(t *testing.T) {
	const (
		fixedKey   = "dsr1-fp4-mi355x-sglang"
		agenticKey = "qwen3.5-fp8-mi325x-sglang-agentic-mtp"
		fixedNote  = "): fixed-seq-len points do not run in the PR sweep: \\`sweep run\\` measures agentic points only; run them with InferenceX's own workflow\n"
	)
	base := filepath.Join(repoRoot, "perf-changelog.yaml")
	baseData, err := os.ReadFile(base)
	require.NoError(t, err)
	tests := []struct {
		name     string
		labels   string
		keys     []string
		results  bool // write a result for every point the workflow runs
		code     int
		agentic  bool // the workflow runs points that write a result
		notFixed bool // sweep-single-node-8k1k is not run
	}{
		{"fixed-seq-len key", "full-sweep-enabled", []string{fixedKey}, false, 0, false, true},
		{"fixed-seq-len key, all evals", "full-sweep-fail-fast,all-evals", []string{fixedKey}, false, 0, false, true},
		{"agentic key, no results", "full-sweep-enabled", []string{agenticKey}, false, exitError, true, false},
		{"both keys, no results", "full-sweep-enabled", []string{fixedKey, agenticKey}, false, exitError, true, true},
		{"both keys, every result", "full-sweep-fail-fast", []string{fixedKey, agenticKey}, true, 0, true, true},
		{"both keys, trimmed, every result", "sweep-enabled", []string{fixedKey, agenticKey}, true, 0, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			head := filepath.Join(dir, "head.yaml")
			entry := "\n- config-keys:\n    - " + strings.Join(tc.keys, "\n    - ") + "\n  description:\n    - \"Rerun.\"\n  pr-link: XXX\n"
			require.NoError(t, os.WriteFile(head, append(slices.Clone(baseData), entry...), 0o644))
			code, fanout, stderr := runCLI(t, "ci", "matrix", "--labels", tc.labels, "--base-file", base, "--head-file", head)
			require.Equal(t, 0, code, stderr)
			path := filepath.Join(dir, "fanout.json")
			require.NoError(t, os.WriteFile(path, []byte(fanout), 0o644))
			var fan gha.FanoutJSON
			require.NoError(t, json.Unmarshal([]byte(fanout), &fan))

			// The points of the jobs the workflow runs.
			var points []string
			results := filepath.Join(dir, "results")
			for _, family := range append([]string{"canary"}, gha.WorkflowFamilies()...) {
				jobs := fan.Jobs[family]
				if family == "canary" {
					jobs = fan.Canary
				}
				for _, j := range jobs {
					require.Equal(t, agenticKey, j.ConfigKey, "%s runs agentic points only", family)
					for _, p := range j.Points {
						if strings.HasPrefix(p.Artifacts[0], "eval_") {
							continue // an eval-only point writes no result
						}
						points = append(points, fmt.Sprintf("- no result: %s conc %d (%s): %s.json\n", j.ConfigKey, p.Conc, family, p.ResultFilename))
						if tc.results {
							name, err := p.Filename("mi325x-amds_0")
							require.NoError(t, err)
							write := filepath.Join(results, "bmk_agentic_"+name, name+".json")
							require.NoError(t, os.MkdirAll(filepath.Dir(write), 0o755))
							require.NoError(t, os.WriteFile(write, fmt.Appendf(nil, `{"conc": %d, "exp_name": %q, "valid": true, "request_metrics": {"throughput": {}, "latency": {}}}`, p.Conc, name), 0o644))
						}
					}
				}
			}
			assert.Equal(t, tc.agentic, len(points) > 0, "points with a result: %q", points)

			code, stdout, stderr := runCLI(t, "ci", "summary", "--fanout", path, results)
			assert.Equal(t, tc.code, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			assert.Contains(t, stdout, fmt.Sprintf(": %d jobs run.", fan.Runs()))
			if tc.notFixed {
				assert.Regexp(t, `- not run: \d+ jobs? of sweep-single-node-8k1k `+regexp.QuoteMeta("("+fixedKey+fixedNote), stdout)
			}
			assert.NotContains(t, stdout, "fixed-seq-len point above")
			assert.NotContains(t, stdout, fixedKey+" conc", "no fixed-seq-len point is a missing result")
			for _, line := range points {
				if tc.results {
					assert.NotContains(t, stdout, "- no result:")
					break
				}
				assert.Contains(t, stdout, strings.ReplaceAll(line, "_", `\_`))
			}
			if tc.code != 0 {
				assert.Contains(t, stderr, fmt.Sprintf("%d points' results missing", len(points)))
			}
		})
	}
}
