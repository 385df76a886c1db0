package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/recipes"
	"sweep/sweep/point"
	"sweep/sweep/run"
)

// sweep run --launch --inferencex checks the client environment before
// anything is allocated: a checkout without utils/aiperf stops the launch
// with the fix, and no salloc runs.
func TestRunLaunchClientPreflight(t *testing.T) {
	out := filepath.Join(t.TempDir(), "p")
	code, _, stderr := runCLI(t, "run", "--launch", "--inferencex", t.TempDir(), "--config-key", "qwen3.5-fp8-mi325x-sglang-agentic-mtp",
		"--tp", "2", "--ep", "2", "--conc", "1", "--runner-name", "mi325x-amds_00", "--out", out)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stderr, "client environment (before allocating)")
	assert.Contains(t, stderr, "has no utils/aiperf/pyproject.toml: give the root of an InferenceX checkout (--inferencex)")
	assert.NotContains(t, stderr, "salloc")
	assert.NoDirExists(t, out)

	code, _, stderr = runCLI(t, "run", "--launch", "--inferencex", t.TempDir(), "--builtin-client", "--config-key", "k", "--tp", "2", "--conc", "1", "--out", out)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--inferencex installs InferenceX's aiperf: drop --aiperf and --builtin-client")

	// An eval point has no load client: it failed after planning with
	// "client environment: the point's client has no --public-dataset
	// trace loader".
	code, _, stderr = runCLI(t, "run", "--launch", "--inferencex", t.TempDir(), "--eval", "--config-key", "k", "--tp", "2", "--conc", "1", "--out", out)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "an --eval point runs lm-eval, no load client: drop --inferencex")
}

// The container's `sweep run --plan` makes the client environment first:
// the plan's client_setup steps run (and are skipped when their work is
// there), and a failing step stops the point before the engine starts.
func TestRunPlanRunsClientSetup(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	out := t.TempDir()
	r := &point.Request{Key: point.Key{ConfigKey: "qwen3.5-fp8-mi325x-sglang-agentic-mtp", TP: 2, EP: 2, Conc: 1}, Mode: run.Mode{Simulate: true}, FreePort: recipes.FreeRouterPort}
	r.Plan.Duration = 300
	g, err := (&matrixInputs{}).generator()
	require.NoError(t, err)
	p, err := r.PlanRow(g, out)
	require.NoError(t, err)
	tools := t.TempDir()
	marker := filepath.Join(tools, "venv", "made")
	mk := filepath.Join(tools, "mk")
	require.NoError(t, os.WriteFile(mk, []byte("#!/bin/sh\nmkdir -p \"$(dirname \"$1\")\" && echo \"$STEP_ENV\" > \"$1\"\n"), 0o755))
	p.ClientSetup = []recipes.SetupStep{{Name: "venv", Argv: []string{mk, marker}, Env: map[string]string{"STEP_ENV": "from-step"}, Present: []string{marker}, Creates: []string{marker}}}
	file := filepath.Join(t.TempDir(), "plan.json")
	b, err := json.Marshal(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, b, 0o644))
	args := []string{"run", "--plan", file, "--out", out, "--builtin-client", "--simulate", "--time-scale", "50", "--stop-grace", "3s"}
	code, stdout, stderr := runCLI(t, args...)
	require.Equal(t, 0, code, "%s\n%s", stdout, stderr)
	assert.Contains(t, stderr, "client setup venv: "+mk+" "+marker)
	got, err := os.ReadFile(marker)
	require.NoError(t, err)
	assert.Equal(t, "from-step\n", string(got))

	code, _, stderr = runCLI(t, append(args, "--force")...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "client setup venv: already there, skipped")

	p.ClientSetup = []recipes.SetupStep{{Name: "venv", Argv: []string{filepath.Join(tools, "no-uv"), "venv"}}}
	b, err = json.Marshal(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, b, 0o644))
	code, _, stderr = runCLI(t, append(args, "--force")...)
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, "client setup venv: "+filepath.Join(tools, "no-uv")+" is not installed in the image")
	assert.NotContains(t, stderr, "engine: started")
}
