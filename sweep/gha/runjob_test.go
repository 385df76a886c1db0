package gha

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/internal/usage"
)

func TestRunJobRuns(t *testing.T) {
	evalOnly := true
	row := &matrix.Row{Parallelism: configs.Parallelism{TP: 8, EP: 4, DPAttn: true}, EvalOnly: &evalOnly}
	job := &Job{ConfigKey: "k", AgentxFast: true, Points: []Point{{Conc: 4, ResultFilename: "r_c4_" + RunnerPlaceholder}, {Conc: 8, ResultFilename: "r_c8_" + RunnerPlaceholder}}}
	runs, err := RunJob{RunnerName: "h100-1", Out: "/o", Site: []string{"a=b"}, Inferencex: "/ix", ConfigFiles: []string{"m1.yaml", "m2.yaml"}, RunnerConfig: "r.yaml"}.Runs(job, row)
	require.NoError(t, err)
	require.Len(t, runs, 2)
	assert.Equal(t, "r_c8_h100-1", runs[1].Name)
	assert.Equal(t, "/o/r_c8_h100-1", runs[1].Out, "a job of several points: a directory per point")
	// An eval-only point gets no --inferencex: it runs lm-eval, no load
	// client (sweep run refuses the two together; the workflow's eval
	// jobs failed with "the point's client has no --public-dataset trace
	// loader").
	assert.Equal(t, []string{"--config-key", "k", "--tp", "8", "--ep", "4", "--conc", "8", "--runner-name", "h100-1", "--out", "/o/r_c8_h100-1",
		"--dp-attn", "--fast", "--eval", "--all-evals", "--launch", "--site", "a=b", "--config-files", "m1.yaml,m2.yaml", "--runner-config", "r.yaml"}, runs[1].Args)
	row.EvalOnly = nil
	runs, err = RunJob{RunnerName: "h100-1", Out: "/o", Inferencex: "/ix"}.Runs(job, row)
	require.NoError(t, err)
	assert.Equal(t, []string{"--launch", "--inferencex", "/ix"}, runs[1].Args[len(runs[1].Args)-3:], "an agentic point's load client is InferenceX's aiperf")
	row.EvalOnly = &evalOnly

	job.Points, job.AgentxFast = job.Points[:1], false
	for _, tc := range []struct {
		r    RunJob
		last string
	}{
		{RunJob{RunnerName: "h", Out: "/o", Simulate: true, Site: []string{"ignored"}}, "--simulate"},
		{RunJob{RunnerName: "h", Out: "/o", OnHost: true}, "--eval"},
	} {
		runs, err = tc.r.Runs(job, &matrix.Row{Parallelism: configs.Parallelism{TP: 1, EP: 1}})
		require.NoError(t, err)
		assert.Equal(t, "/o", runs[0].Out, "a job of one point writes into the output directory")
		assert.Equal(t, []string{"--config-key", "k", "--tp", "1", "--ep", "1", "--conc", "4", "--runner-name", "h", "--out", "/o"}, runs[0].Args[:12])
		if tc.last == "--eval" {
			assert.Len(t, runs[0].Args, 12, "on the host: no launch, no simulation")
		} else {
			assert.Equal(t, tc.last, runs[0].Args[len(runs[0].Args)-1])
		}
	}

	_, err = RunJob{RunnerName: "a/b", Out: "/o"}.Runs(job, row)
	assert.ErrorContains(t, err, "point 1: ")
}

func TestReadOnlineRunners(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	got, err := ReadOnlineRunners(write("list.json", `["a", "b"]`))
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"a": true, "b": true}, got)
	got, err = ReadOnlineRunners(write("lines.txt", "# online\na\n\n  b  \n"))
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"a": true, "b": true}, got)
	for _, tc := range []struct {
		name, body, want string // body "": no file
	}{
		{"not a name", "[\"a\",\n 1]", ":2:2: a JSON number where a string belongs: want a JSON list of runner names (or one name a line)"},
		{"truncated", "[\"a\",\n \"b\"", ":2:5: the JSON ends early: want a JSON list of runner names"},
		{"missing", "", "no such file or directory: give the file of runner names the workflow wrote"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "missing")
			if tc.body != "" {
				p = write(tc.name+".json", tc.body)
			}
			_, err := ReadOnlineRunners(p)
			_, isUsage := errors.AsType[*usage.Error](err)
			assert.True(t, isUsage, "a usage error (exit 2): %v", err)
			if tc.body != "" {
				assert.ErrorContains(t, err, "--online-runners: "+p+tc.want)
			} else {
				assert.ErrorContains(t, err, "--online-runners: ")
				assert.ErrorContains(t, err, tc.want)
			}
		})
	}
}

// TestReadFanout: a file that is not the fan-out was read as one with no
// sweep label ({} or a job file: "nothing ran", exit 0), and a truncated
// one had no position. Each is a usage error now.
func TestReadFanout(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "fan.json")
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	fan, err := ReadFanout(write(`{"sweep": true, "primary": "sweep-enabled", "counts": {"canary": 0}, "jobs": {}}`))
	require.NoError(t, err)
	assert.True(t, fan.Sweep)
	tests := []struct{ name, body, err string }{
		{"empty object", `{}`, `fan.json: it lacks "sweep", "counts", "jobs": want the fan-out JSON`},
		{"a job file", `{"runner": "r", "runs-on": ["r"], "config": {}, "points": [], "agentx-fast": false}`, "fan.json: this is one job of a fan-out"},
		{"truncated", `{"sweep": true, "coun`, "fan.json:1:22: the JSON ends early: want the fan-out JSON `sweep ci matrix` prints"},
		{"a list", `[1]`, "fan.json:1:1: a JSON array where an object belongs"},
		{"unknown key", `{"sweep": true, "counts": {}, "jobs": {}, "single-node": {}}`, "fan.json:1:43: single-node: unknown key: want the fan-out JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadFanout(write(tc.body))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
			_, isUsage := errors.AsType[*usage.Error](err)
			assert.True(t, isUsage, "a usage error: %v", err)
		})
	}
	_, err = ReadFanout(filepath.Join(dir, "missing.json"))
	_, isUsage := errors.AsType[*usage.Error](err)
	assert.True(t, isUsage, "a usage error: %v", err)
}
