package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"sweep/simengine"
)

// TestRunChecksSimFault: sweep run refuses a --sim-fault the simulated
// engine would refuse before anything starts (exit 2, the faults named),
// rather than failing the point when the engine reads it.
func TestRunChecksSimFault(t *testing.T) {
	out := filepath.Join(t.TempDir(), "p")
	for _, tc := range []struct{ fault, want string }{
		{"bogus", `sweep: --sim-fault: fault "bogus": unknown kind, want one of never-ready, crash:N, hang:N, slow-metrics:DURATION, malformed-metrics, ignore-sigterm, slow-steps:PERCENT, late-steps:DURATION` + "\nrun with --help for usage\n"},
		{"crash:x", `sweep: --sim-fault: fault "crash:x": want crash:N with N >= 0 finished requests` + "\nrun with --help for usage\n"},
	} {
		code, stdout, stderr := runCLI(t, "run", "--simulate", "--config-key", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--ep", "8", "--conc", "4",
			"--sim-fault", tc.fault, "--out", out)
		assert.Equal(t, exitUsage, code, stderr)
		assert.Equal(t, tc.want, stderr)
		assert.Empty(t, stdout)
		assert.NoDirExists(t, out, "no point started")
	}
}

// TestHelpNamesEveryFault: run's --sim-fault help and sim-engine's help
// name every fault the simulated engine has.
func TestHelpNamesEveryFault(t *testing.T) {
	code, stdout, stderr := runCLI(t, "run", "--help")
	assert.Equal(t, exitOK, code)
	usage := stdout + stderr
	for _, form := range strings.Split(simengine.FaultForms(), ", ") {
		assert.Contains(t, usage, form, "sweep run --help")
		assert.Contains(t, helpText("simengine"), form, "sweep sim-engine --help")
	}
}

// TestSimFaultEnvChecked: a SWEEP_SIM_FAULT the simulated engine would
// refuse is refused before any engine starts, by run and by discover
// (the audit's: the engine started, and each point failed on it).
func TestSimFaultEnvChecked(t *testing.T) {
	t.Setenv("SWEEP_SIM_FAULT", "bogus")
	dir := t.TempDir()
	for _, args := range [][]string{
		{"run", "--simulate", "--config-key", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--ep", "8", "--conc", "4", "--out", filepath.Join(dir, "p")},
		{"discover", "--simulate", "--config-keys", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--ep", "8", "--conc-list", "4", "--no-report", "--out", filepath.Join(dir, "d")},
	} {
		code, _, stderr := runCLI(t, args...)
		assert.Equal(t, exitUsage, code, "%v: %s", args, stderr)
		assert.Contains(t, stderr, `SWEEP_SIM_FAULT=bogus: fault "bogus": unknown kind, want one of never-ready`, "%v", args)
		assert.NoDirExists(t, filepath.Join(dir, "p"), "no point started")
		assert.NoFileExists(t, filepath.Join(dir, "d", "journal.jsonl"), "no sweep started")
	}
}
