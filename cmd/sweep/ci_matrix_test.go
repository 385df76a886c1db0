package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/gha"
)

// runCIMatrixCmd runs "sweep ci matrix args..." with the loader and an
// in-memory git; it returns stdout, stderr and the error.
func runCIMatrixCmd(t *testing.T, l *cachedLoader, git map[string][]byte, args []string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	ios := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	cmd := newCIMatrixCmd(ios, func(ctx context.Context, o *ciMatrixOptions) error {
		o.Inputs.Load = l.load
		o.Git = fakeGit(git)
		return ciMatrixRun(ctx, o)
	})
	err := dispatch(t.Context(), ios, cmd, []string{"sweep", "ci", "matrix"}, args)
	return out.String(), errOut.String(), err
}

// familyRows maps InferenceX's changelog buckets to our job families.
func familyRows(want map[string]any) map[string][]any {
	out := map[string][]any{}
	for node, prefix := range map[string]string{"single_node": "sweep-single-node-", "multi_node": "sweep-multi-node-"} {
		buckets, _ := want[node].(map[string]any)
		for name, rows := range buckets {
			fam := prefix + name
			switch {
			case name == "agentic" && node == "single_node":
				fam = "sweep-agentic"
			case name == "agentic":
				fam = "sweep-multi-node-agentic"
			case name != "1k1k" && name != "8k1k":
				fam = prefix + "other"
			}
			out[fam] = append(out[fam], rows.([]any)...)
		}
	}
	for key, fam := range map[string]string{
		"evals": "sweep-evals", "agentic_evals": "sweep-agentic-evals",
		"multinode_evals": "sweep-multi-node-evals", "multinode_agentic_evals": "sweep-multi-node-agentic-evals",
	} {
		if rows, ok := want[key].([]any); ok {
			out[fam] = append(out[fam], rows...)
		}
	}
	return out
}

// TestCIMatrixConformance checks that the fan-out of every changelog case
// of InferenceX's own recording holds exactly InferenceX's bucket rows:
// trim_conc cases under sweep-enabled, the others under
// non-canary-full-sweep-enabled (no canary is taken out).
func TestCIMatrixConformance(t *testing.T) {
	cases, changelog := loadIXCases(t)
	l := &cachedLoader{}
	inputs := ixInputs()
	matched, total := 0, 0
	for i, c := range cases {
		if c.Kind != "changelog" {
			continue
		}
		total++
		t.Run(fmt.Sprintf("%03d", i), func(t *testing.T) {
			base, head := cutChangelog(t, changelog, c.EntryIndex, c.Added)
			git := map[string][]byte{"base:perf-changelog.yaml": base, "head:perf-changelog.yaml": head}
			label := "non-canary-full-sweep-enabled"
			if c.TrimConc {
				label = "sweep-enabled"
			}
			args := append([]string{"--labels", label, "--base-ref", "base", "--head-ref", "head"}, inputs...)
			out, _, err := runCIMatrixCmd(t, l, git, args)
			if !c.OK {
				if assert.Error(t, err) {
					matched++
				}
				return
			}
			require.NoError(t, err)
			var fan struct {
				Counts map[string]int `json:"counts"`
				Jobs   map[string][]struct {
					Config json.RawMessage `json:"config"`
				} `json:"jobs"`
				Skipped []any `json:"skipped"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &fan))
			want := familyRows(decodeJSON(t, string(c.Output)).(map[string]any))
			ok := true
			for fam, jobs := range fan.Jobs {
				got := make([]any, len(jobs))
				for i, j := range jobs {
					got[i] = decodeJSON(t, string(j.Config))
				}
				if len(want[fam]) == 0 && len(got) == 0 {
					continue
				}
				ok = assert.Equal(t, want[fam], got, "family %s", fam) && ok
				ok = assert.Equal(t, len(got), fan.Counts[fam]) && ok
			}
			if ok {
				matched++
			}
		})
	}
	t.Logf("ci matrix: %d of %d changelog cases give InferenceX's buckets", matched, total)
	assert.Equal(t, total, matched)
}

// TestCIMatrixLabels covers the label rules and the skip of runner labels
// nobody serves.
func TestCIMatrixLabels(t *testing.T) {
	cases, data := loadIXCases(t)
	// An agentic case with several points; InferenceX's recording has no
	// fixed-seq-len change, so the canary case appends one.
	var agentic *ixCase
	for i := range cases {
		c := &cases[i]
		if c.Kind != "changelog" || !c.OK || c.TrimConc {
			continue
		}
		rows := familyRows(decodeJSON(t, string(c.Output)).(map[string]any))
		if agentic == nil && len(rows["sweep-agentic"]) > 2 {
			agentic = c
		}
	}
	require.NotNil(t, agentic)
	fixed := &ixCase{EntryIndex: -1, Added: "\n- config-keys:\n    - dsr1-fp4-mi355x-sglang\n  description:\n    - \"fixed-seq change\"\n  pr-link: XXX\n"}
	l := &cachedLoader{}
	inputs := ixInputs()
	run := func(t *testing.T, c *ixCase, extra ...string) (map[string]any, string, error) {
		var base, head []byte
		if c.EntryIndex < 0 { // appended after the last entry
			base, head = data, append(append([]byte{}, data...), c.Added...)
		} else {
			base, head = cutChangelog(t, data, c.EntryIndex, c.Added)
		}
		git := map[string][]byte{"b:perf-changelog.yaml": base, "h:perf-changelog.yaml": head}
		out, errOut, err := runCIMatrixCmd(t, l, git, append(append([]string{"--base-ref", "b", "--head-ref", "h"}, inputs...), extra...))
		if err != nil {
			return nil, errOut, err
		}
		return decodeJSON(t, out).(map[string]any), errOut, nil
	}
	count := func(m map[string]any, fam string) int {
		n, err := m["counts"].(map[string]any)[fam].(json.Number).Int64()
		require.NoError(t, err)
		return int(n)
	}
	t.Run("two primary labels", func(t *testing.T) {
		_, _, err := run(t, agentic, "--labels", "sweep-enabled,full-sweep-enabled")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "multiple conflicting sweep labels")
	})
	t.Run("no primary label runs nothing", func(t *testing.T) {
		m, notices, err := run(t, agentic, "--labels", "agentx-fast,ci-patchwork")
		require.NoError(t, err)
		assert.Equal(t, false, m["sweep"])
		assert.Equal(t, 0, count(m, "sweep-agentic"))
		assert.Contains(t, notices, "::notice")
	})
	t.Run("agentx-fast marks agentic jobs", func(t *testing.T) {
		m, _, err := run(t, agentic, "--labels", "non-canary-full-sweep-enabled,agentx-fast")
		require.NoError(t, err)
		job := m["jobs"].(map[string]any)["sweep-agentic"].([]any)[0].(map[string]any)
		assert.Equal(t, true, job["agentx-fast"])
		assert.NotEmpty(t, job["config-key"])
		pt := job["points"].([]any)[0].(map[string]any)
		rf := pt["result-filename"].(string)
		assert.Contains(t, rf, "_{runner}")
		assert.Contains(t, pt["artifacts"], "bmk_agentic_"+rf)
	})
	t.Run("per arm groups concurrencies", func(t *testing.T) {
		pp, _, err := run(t, agentic, "--labels", "non-canary-full-sweep-enabled")
		require.NoError(t, err)
		pa, _, err := run(t, agentic, "--labels", "non-canary-full-sweep-enabled", "--per", "arm")
		require.NoError(t, err)
		points := 0
		for _, j := range pa["jobs"].(map[string]any)["sweep-agentic"].([]any) {
			points += len(j.(map[string]any)["points"].([]any))
		}
		assert.Equal(t, count(pp, "sweep-agentic"), points)
		assert.Less(t, count(pa, "sweep-agentic"), count(pp, "sweep-agentic"))
	})
	t.Run("canary is taken out of the fan-out", func(t *testing.T) {
		full, _, err := run(t, agentic, "--labels", "non-canary-full-sweep-enabled")
		require.NoError(t, err)
		withCanary, _, err := run(t, agentic, "--labels", "full-sweep-fail-fast")
		require.NoError(t, err)
		assert.Equal(t, 1, count(withCanary, "canary"))
		assert.Equal(t, true, withCanary["fail-fast"])
		assert.Equal(t, count(full, "sweep-agentic")-1, count(withCanary, "sweep-agentic"))
		conc := func(job any) int64 {
			c, err := job.(map[string]any)["points"].([]any)[0].(map[string]any)["conc"].(json.Number).Int64()
			require.NoError(t, err)
			return c
		}
		canary := conc(withCanary["canary"].([]any)[0])
		for _, j := range full["jobs"].(map[string]any)["sweep-agentic"].([]any) {
			assert.LessOrEqual(t, canary, conc(j), "the canary has the lowest concurrency")
		}
	})
	t.Run("a fixed-seq-len change has no canary", func(t *testing.T) {
		full, _, err := run(t, fixed, "--labels", "non-canary-full-sweep-enabled")
		require.NoError(t, err)
		withCanary, notices, err := run(t, fixed, "--labels", "full-sweep-fail-fast")
		require.NoError(t, err)
		assert.Equal(t, 0, count(withCanary, "canary"), "the PR sweep does not run fixed-seq-len points")
		assert.Equal(t, count(full, "sweep-single-node-8k1k"), count(withCanary, "sweep-single-node-8k1k"), "InferenceX's layout")
		assert.Contains(t, notices, "::warning title=sweep: sweep-single-node-8k1k not run::")
	})
	t.Run("unregistered runner label is skipped with a notice", func(t *testing.T) {
		online := filepath.Join(t.TempDir(), "online.json")
		require.NoError(t, os.WriteFile(online, []byte(`["nobody_00"]`), 0o644))
		m, notices, err := run(t, agentic, "--labels", "non-canary-full-sweep-enabled", "--online-runners", online)
		require.NoError(t, err)
		assert.Equal(t, 0, count(m, "sweep-agentic"))
		skipped := m["skipped"].([]any)
		require.NotEmpty(t, skipped)
		assert.Contains(t, skipped[0].(map[string]any)["reason"], "is online")
		assert.Contains(t, notices, "::notice title=sweep: ")
	})
}

// TestCIMatrixNotRunFamilies: a changelog entry with multi-node agentic
// points (sweep.yml has no multi-node job) lists the family under not-run
// with the reason and a warning, and ci summary counts only the jobs that
// run. Before, the jobs were in the fan-out with no job to run them and
// the summary counted them.
func TestCIMatrixNotRunFamilies(t *testing.T) {
	cases, data := loadIXCases(t)
	var mn *ixCase
	for i := range cases {
		c := &cases[i]
		if c.Kind == "changelog" && c.OK && !c.TrimConc && len(familyRows(decodeJSON(t, string(c.Output)).(map[string]any))["sweep-multi-node-agentic"]) > 0 {
			mn = c
			break
		}
	}
	require.NotNil(t, mn, "a recorded changelog case with multi-node agentic rows")
	base, head := cutChangelog(t, data, mn.EntryIndex, mn.Added)
	git := map[string][]byte{"b:perf-changelog.yaml": base, "h:perf-changelog.yaml": head}
	out, notices, err := runCIMatrixCmd(t, &cachedLoader{}, git,
		append([]string{"--labels", "non-canary-full-sweep-enabled", "--base-ref", "b", "--head-ref", "h"}, ixInputs()...))
	require.NoError(t, err)
	var fan struct {
		Counts map[string]int `json:"counts"`
		NotRun []struct {
			Family string `json:"family"`
			Jobs   int    `json:"jobs"`
			Reason string `json:"reason"`
		} `json:"not-run"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &fan))
	n := fan.Counts["sweep-multi-node-agentic"]
	require.Positive(t, n)
	var notRun []string
	for _, nr := range fan.NotRun {
		notRun = append(notRun, nr.Family)
		assert.Equal(t, fan.Counts[nr.Family], nr.Jobs)
		if strings.Contains(nr.Family, "multi-node") {
			assert.Contains(t, nr.Reason, "multi-node points do not run in the PR sweep")
		}
	}
	assert.Contains(t, notRun, "sweep-multi-node-agentic")
	assert.Contains(t, notices, fmt.Sprintf("::warning title=sweep: sweep-multi-node-agentic not run::%d jobs of sweep-multi-node-agentic not run", n))

	runs, total := 0, 0
	for fam, c := range fan.Counts {
		total += c
		if slices.Contains(gha.WorkflowFamilies(), fam) || fam == "canary" {
			runs += c
		}
	}
	require.Less(t, runs, total)
	dir := t.TempDir()
	fanFile := filepath.Join(dir, "fanout.json")
	require.NoError(t, os.WriteFile(fanFile, []byte(out), 0o644))
	var sum, errOut bytes.Buffer
	code := mainRun(t.Context(), &IOStreams{Out: &sum, ErrOut: &errOut}, []string{"ci", "summary", "--fanout", fanFile, dir})
	require.Equal(t, 0, code, errOut.String())
	assert.Contains(t, sum.String(), fmt.Sprintf(": %d jobs run.", runs))
	assert.Regexp(t, fmt.Sprintf(`- not run: %d jobs of sweep-multi-node-agentic \([^)]+\): multi-node points`, n), sum.String())
}

// TestCIMatrixLimits: a changelog entry selecting every config key gives
// families of more jobs than GitHub runs in one matrix (256) and a fan-out
// above a job output's 1 MB; ci matrix refuses it, naming both limits and
// what to do, instead of printing a matrix GitHub rejects.
func TestCIMatrixLimits(t *testing.T) {
	_, data := loadIXCases(t)
	head := append(append([]byte{}, data...), "\n- config-keys:\n    - \"*\"\n  description:\n    - \"everything\"\n  pr-link: XXX\n"...)
	git := map[string][]byte{"b:perf-changelog.yaml": data, "h:perf-changelog.yaml": head}
	out, _, err := runCIMatrixCmd(t, &cachedLoader{}, git,
		append([]string{"--labels", "full-sweep-enabled", "--base-ref", "b", "--head-ref", "h"}, ixInputs()...))
	require.Error(t, err, "printed %d bytes", len(out))
	assert.Empty(t, out)
	assert.Regexp(t, `family sweep-[a-z0-9-]+ has \d+ jobs; GitHub runs at most 256 jobs of one matrix`, err.Error())
	assert.Contains(t, err.Error(), "a job output holds at most 1 MB")
	assert.Contains(t, err.Error(), "split the changelog entry")
}

// TestCIInputFileErrors: a missing or truncated input file of ci matrix,
// ci run-job and changelog exited 1 with "unexpected end of JSON input"
// (no line or column), and conflicting --labels exited 1. Each is the
// input's mistake: exit 2, naming the flag, the file, line and column.
func TestCIInputFileErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	base := write("base.yaml", "- config-keys:\n    - a\n  description: x\n")
	head := write("head.yaml", "- config-keys:\n    - b\n  description: x\n")
	job := write("job.json", "{\"config-key\": \"k\",\n  \"points\": [{\"conc\": 1")
	online := write("online.json", "[\"a\",\n \"b\"")
	missing := filepath.Join(dir, "missing")
	matrixArgs := func(extra ...string) []string {
		return append([]string{"ci", "matrix", "--labels", "sweep-enabled", "--base-file", base, "--head-file", base}, extra...)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"1 run-job: missing --job", []string{"ci", "run-job", "--job", missing, "--runner-name", "r_0", "--out", dir}, "sweep: --job: open " + missing + ": no such file or directory\n"},
		{"2 run-job: truncated --job", []string{"ci", "run-job", "--job", job, "--runner-name", "r_0", "--out", dir},
			"sweep: --job: " + job + `:2:24: the JSON ends early: want one job of "sweep ci matrix" (an element of its jobs.<family> lists)` + "\n"},
		{"3 matrix: missing --base-file", []string{"ci", "matrix", "--labels", "sweep-enabled", "--base-file", missing, "--head-file", base},
			"sweep: --base-file: read changelog: open " + missing + ": no such file or directory\n"},
		{"4 matrix: missing --head-file", []string{"ci", "matrix", "--labels", "sweep-enabled", "--base-file", base, "--head-file", missing},
			"sweep: --head-file: read changelog: open " + missing + ": no such file or directory\n"},
		{"5 matrix: missing --online-runners", matrixArgs("--online-runners", missing), "sweep: --online-runners: open " + missing + ": no such file or directory: give the file of runner names the workflow wrote\n"},
		{"6 matrix: truncated --online-runners", matrixArgs("--online-runners", online),
			"sweep: --online-runners: " + online + ":2:5: the JSON ends early: want a JSON list of runner names (or one name a line)\n"},
		{"7 matrix: conflicting labels", []string{"ci", "matrix", "--labels", "sweep-enabled,full-sweep-enabled", "--base-file", base, "--head-file", base},
			"sweep: --labels: PR has multiple conflicting sweep labels (keep exactly one of"},
		{"8 changelog: missing --base-file", []string{"changelog", "--base-file", missing, "--head-file", base},
			"sweep: --base-file: read changelog: open " + missing + ": no such file or directory\n"},
		{"9 changelog: a deleted line names its column", []string{"changelog", "--base-file", base, "--head-file", head},
			"sweep: " + base + ":2:5: deletions are not allowed in the changelog; only additions are permitted; found deleted line:     - a\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			assert.Equal(t, exitUsage, code, stderr)
			assert.True(t, strings.HasPrefix(stderr, tc.want), "stderr:\n%s\nwant it to start:\n%s", stderr, tc.want)
		})
	}
}
