package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOfficialRunsTheChangelogPoints: with a changelog change, sweep
// official schedules exactly the single-node agentic points sweep
// changelog lists for it (with and without --trim-conc).
func TestOfficialRunsTheChangelogPoints(t *testing.T) {
	head, err := os.ReadFile(filepath.Join("..", "..", "perf-changelog.yaml"))
	require.NoError(t, err)
	dir := t.TempDir()
	i := strings.LastIndex(string(head), "\n- config-keys:")
	require.Positive(t, i)
	baseFile, headFile := filepath.Join(dir, "base.yaml"), filepath.Join(dir, "head.yaml")
	require.NoError(t, os.WriteFile(baseFile, head[:i+1], 0o644))
	require.NoError(t, os.WriteFile(headFile, head, 0o644))

	for _, trim := range []bool{false, true} {
		extra := []string{}
		if trim {
			extra = append(extra, "--trim-conc")
		}
		code, stdout, stderr := runCLI(t, append([]string{"changelog", "--base-file", baseFile, "--head-file", headFile}, extra...)...)
		require.Equal(t, 0, code, stderr)
		var cl struct {
			SingleNode map[string][]struct {
				TP   int `json:"tp"`
				EP   int `json:"ep"`
				Conc int `json:"conc"`
			} `json:"single_node"`
		}
		require.NoError(t, json.Unmarshal([]byte(stdout), &cl))
		var want []string
		for _, r := range cl.SingleNode["agentic"] {
			want = append(want, strings.Join([]string{strconv.Itoa(r.TP), strconv.Itoa(r.EP), strconv.Itoa(r.Conc)}, "/"))
		}
		require.NotEmpty(t, want)

		code, stdout, stderr = runCLI(t, append([]string{"official", "--changelog-base-file", baseFile, "--changelog-head-file", headFile,
			"--dry-run", "--out", filepath.Join(dir, "o")}, extra...)...)
		require.Equal(t, 0, code, stderr)
		// Point IDs are InferenceX's RESULT_FILENAMEs: ..._tp<N>-...-ep<M>-..._conc<C>_...
		re := regexp.MustCompile(`(?m)^\s+\d+\s+arm \d+\s+conc \d+\s+\S+( server)?\s+\S+_tp(\d+)-pp1-dcp1-pcp1-ep(\d+)-\S+_conc(\d+)_`)
		var got []string
		for _, m := range re.FindAllStringSubmatch(stdout, -1) {
			got = append(got, m[2]+"/"+m[3]+"/"+m[4])
		}
		slices.Sort(want)
		slices.Sort(got)
		assert.Equal(t, want, got, "trim-conc=%t:\n%s", trim, stdout)
	}
}

// TestOfficialShortDurationIsAUsageError: --duration below the
// scenario's minimum, which no official point can be run at, exited 1
// as failed points do; it is what the command was asked: exit 2, with
// and without --dry-run, and nothing is made.
func TestOfficialShortDurationIsAUsageError(t *testing.T) {
	for _, dry := range []bool{false, true} {
		out := filepath.Join(t.TempDir(), "o")
		args := []string{"official", "--simulate", "--config-keys", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--ep", "8", "--duration", "300", "--out", out}
		if dry {
			args = append(args, "--dry-run")
		}
		code, _, stderr := runCLI(t, args...)
		assert.Equal(t, exitUsage, code, "dry run %t: %s", dry, stderr)
		assert.Contains(t, stderr, "300 s is below the inferencex-agentx-mvp scenario's 900 s minimum")
		assert.NoDirExists(t, out)
	}
}
