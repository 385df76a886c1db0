package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCampaignConcListOffTheGrid: discover and official name the
// --conc-list values no selected arm has, with the arms' concurrencies:
// a warning when other values run, a usage error when none does, and
// values below 1 are refused before anything is planned.
func TestCampaignConcListOffTheGrid(t *testing.T) {
	const key = "qwen3.5-fp8-mi325x-sglang-agentic-mtp"
	grid := "the concurrencies of " + key + "'s selected arms (sweep plan lists the points):\n" +
		"  tp2 ep2: 1 4 6\n  tp4: 1 8 16 32 40 48\n  tp4 ep4: 4 16 32 40 48\n  tp8: 1 4 8 12 16 24 32 40 48 64 80\n  tp8 ep8: 4 16 24 32 40 48 64\n"
	out := filepath.Join(t.TempDir(), "d")
	for _, command := range []string{"discover", "official"} {
		for _, tc := range []struct {
			name, concs string
			code        int
			stderr      string
		}{
			{name: "off the grid", concs: "1,4,3000", code: exitOK,
				stderr: "sweep " + command + ": --conc-list 3000: no selected arm has this concurrency, so it is left out and the other values run; " + grid},
			{name: "none on the grid", concs: "3", code: exitUsage,
				stderr: "sweep: --conc-list 3: no selected arm has this concurrency; pick from " + grid + "run with --help for usage\n"},
			{name: "zero and negative", concs: "1,3,0,-5", code: exitUsage,
				stderr: "sweep: --conc-list 0, -5: want concurrencies of 1 or more\nrun with --help for usage\n"},
		} {
			t.Run(command+" "+tc.name, func(t *testing.T) {
				code, _, stderr := runCLI(t, command, "--simulate", "--config-keys", key, "--conc-list", tc.concs, "--dry-run", "--out", out)
				assert.Equal(t, tc.code, code, stderr)
				assert.Equal(t, tc.stderr, stderr)
			})
		}
	}
}

// TestCampaignInputErrorsExitUsage: a config file that does not parse or
// check and an --out that cannot be a sweep directory are input errors
// (exit 2, as sweep run's --out), not failed points (exit 1).
func TestCampaignInputErrorsExitUsage(t *testing.T) {
	dir := t.TempDir()
	badYAML, badSchema, file := filepath.Join(dir, "bad.yaml"), filepath.Join(dir, "schema.yaml"), filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(badYAML, []byte("foo: [unclosed\n"), 0o644))
	require.NoError(t, os.WriteFile(badSchema, []byte("foo:\n  bar: 1\n"), 0o644))
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	out := filepath.Join(dir, "d")
	// procfs makes no directory, not even for root.
	unmakeable := "/proc/sweep-test-no-such-dir"
	for _, command := range []string{"discover", "official"} {
		for _, tc := range []struct {
			name string
			args []string
			want string
		}{
			{"config file not YAML", []string{"--config-files", badYAML, "--out", out, "--dry-run"}, badYAML + ":1:7: invalid YAML"},
			{"config file off the schema", []string{"--config-files", badSchema, "--out", out, "--dry-run"}, badSchema + `:2:3: foo.bar: unknown key "bar"`},
			{"out a file", []string{"--out", file, "--dry-run"}, "--out " + file + ": it is a file, not a directory"},
			{"out under a file", []string{"--out", file + "/d", "--dry-run"}, "--out " + file + "/d: " + file + " is a file, not a directory"},
			{"out not makeable", []string{"--out", unmakeable}, "sweep directory " + unmakeable + ": mkdir " + unmakeable + ": no such file or directory; give --out a directory this user can make and write"},
		} {
			t.Run(command+" "+tc.name, func(t *testing.T) {
				args := append([]string{command, "--simulate", "--config-keys", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--ep", "8", "--conc-list", "4"}, tc.args...)
				code, _, stderr := runCLI(t, args...)
				assert.Equal(t, exitUsage, code, stderr)
				assert.Contains(t, stderr, tc.want)
				assert.NotContains(t, stderr, "knees/report", "no report of a sweep that never started")
			})
		}
	}
	assert.NoDirExists(t, unmakeable)
}

// TestRunOutErrorsNameTheFix: sweep run's --out under a file said
// "mkdir DIR: not a directory", and one it could not make (a read-only
// disk) "mkdir DIR: read-only file system", neither with a fix; they
// read as discover's do (cli.CheckOutDir, run.OutDirFix), exit 2.
func TestRunOutErrorsNameTheFix(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	unmakeable := "/proc/sweep-test-no-such-dir" // procfs makes no directory, not even for root
	for _, tc := range []struct{ name, out, want string }{
		{"out a file", file, "--out " + file + ": it is a file, not a directory: give a directory"},
		{"out under a file", file + "/d", "--out " + file + "/d: " + file + " is a file, not a directory: give a path under a directory"},
		{"out not makeable", unmakeable, "--out " + unmakeable + ": mkdir " + unmakeable + ": no such file or directory; give --out a directory this user can make and write"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, "run", "--simulate", "--config-key", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--ep", "8", "--conc", "4", "--out", tc.out)
			assert.Equal(t, exitUsage, code, stderr)
			assert.Contains(t, stderr, tc.want)
		})
	}
	assert.NoDirExists(t, unmakeable)
}

// TestBadConfigFileExitsUsage: every command that reads the master
// configs exits 2 on a file that does not load, as discover does (run,
// plan and matrix full-sweep exited 1, the failed-points code).
func TestBadConfigFileExitsUsage(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("foo: [unclosed\n"), 0o644))
	for _, args := range [][]string{
		{"run", "--simulate", "--config-key", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--ep", "8", "--conc", "4", "--out", filepath.Join(dir, "p")},
		{"plan", "--config-keys", "qwen3.5-fp8-mi325x-sglang-agentic-mtp"},
		{"matrix", "full-sweep"},
	} {
		code, _, stderr := runCLI(t, append(args, "--config-files", bad)...)
		assert.Equal(t, exitUsage, code, "%v: %s", args, stderr)
		assert.Contains(t, stderr, bad+":1:7: invalid YAML", "%v", args)
	}
}

// TestSlurmStartTimeoutFlag: --slurm-start-timeout bounds an allocation's
// wait wherever sweep allocates (discover --executor slurm's jobs, the
// --slurm allocations of sweep run and discover), with the same default
// (0: wait); anywhere else it is refused naming what it needs.
func TestSlurmStartTimeoutFlag(t *testing.T) {
	out := filepath.Join(t.TempDir(), "d")
	run, err := parseOptions(t, newRunCmd, "--config-key", "k", "--tp", "8", "--conc", "4", "--out", out, "--simulate", "--slurm", "--slurm-start-timeout", "10m")
	require.NoError(t, err)
	assert.Equal(t, 10*time.Minute, run.SlurmStartTimeout)
	run, err = parseOptions(t, newRunCmd, "--config-key", "k", "--tp", "8", "--conc", "4", "--out", out, "--simulate", "--slurm")
	require.NoError(t, err)
	assert.Zero(t, run.SlurmStartTimeout, "default: wait until it starts")
	d, err := parseOptions(t, newDiscoverCmd, "--config-keys", "k", "--out", out, "--simulate", "--slurm", "--slurm-start-timeout", "10m")
	require.NoError(t, err)
	assert.Equal(t, 10*time.Minute, d.Run.StartTimeout)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--config-key", "k", "--tp", "8", "--conc", "4", "--out", out, "--simulate", "--slurm-start-timeout", "1m"}, "--slurm-start-timeout bounds --slurm's allocation: give --slurm too"},
		{[]string{"discover", "--config-keys", "k", "--out", out, "--simulate", "--slurm-start-timeout", "1m"}, "--slurm-start-timeout needs --executor slurm, or --slurm (multi-node arms' allocations)"},
		{[]string{"official", "--config-keys", "k", "--out", out, "--simulate", "--slurm-start-timeout", "1m"}, "--slurm-* flags need --executor slurm"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		assert.Equal(t, exitUsage, code, stderr)
		assert.Contains(t, stderr, tc.want)
	}
}
