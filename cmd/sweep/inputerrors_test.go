package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInputErrorsExitTwo: the same kind of input error exits 2 from every
// command (they exited 1 from knees, sim calibrate, sim agreement and
// plan --site, 2 from report): a result file cut short, a results
// directory that is not there, a --site value a launcher cannot carry, a
// config image holding shell text (at its file:line:col; sweep validate
// exited 1 for it), a runner that does not exist.
func TestInputErrorsExitTwo(t *testing.T) {
	const key = "qwen3.5-fp8-mi325x-sglang-agentic-mtp"
	dir := t.TempDir()
	cut := filepath.Join(dir, "cut")
	require.NoError(t, os.MkdirAll(filepath.Join(cut, key), 0o755))
	for _, d := range []string{cut, filepath.Join(cut, key)} {
		require.NoError(t, os.WriteFile(filepath.Join(d, "r_conc4.json"), []byte(`{"conc": 4, "request_metrics": {`), 0o644))
	}
	missing := filepath.Join(dir, "missing")
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.Mkdir(empty, 0o755))
	master, err := os.ReadFile("../../configs/amd-master.yaml")
	require.NoError(t, err)
	const image = "image: lmsysorg/sglang:v0.5.16-rocm720-mi30x"
	i := strings.Index(string(master), image)
	require.GreaterOrEqual(t, i, 0)
	line := strings.Count(string(master[:i]), "\n") + 1
	bad := filepath.Join(dir, "amd-master.yaml")
	require.NoError(t, os.WriteFile(bad, []byte(strings.Replace(string(master), image, `image: "lmsysorg/sglang:v0.5.16 $(id)"`, 1)), 0o644))
	badAt := bad + ":" + strconv.Itoa(line) + ":"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"knees: cut result", []string{"knees", cut}, "the JSON ends early"},
		{"knees: missing dir", []string{"knees", missing}, "does not exist"},
		// A directory with nothing to show: knees exited 0, report 2.
		{"knees: empty dir", []string{"knees", empty}, "no result files under " + empty},
		{"knees: empty dir, json", []string{"knees", empty, "--format", "json"}, "no result files under " + empty},
		{"report: empty dir", []string{"report", empty, "--out", filepath.Join(dir, "rep-empty")}, "no result files under " + empty},
		{"report: cut result", []string{"report", cut, "--out", filepath.Join(dir, "rep")}, "the JSON ends early"},
		{"sim calibrate: cut result", []string{"sim", "calibrate", cut, "--out", filepath.Join(dir, "cal.json")}, "the JSON ends early"},
		{"sim calibrate: missing dir", []string{"sim", "calibrate", missing, "--out", filepath.Join(dir, "cal.json")}, "no such file or directory"},
		{"sim agreement: cut result", []string{"sim", "agreement", cut, key}, "the JSON ends early"},
		{"sim agreement: missing dir", []string{"sim", "agreement", missing, key}, "OUT_DIR: "},
		{"plan: --site value", []string{"plan", "--config-keys", key, "--tp", "8", "--conc", "16", "--runner-name", "mi325x-amds_00", "--site", `squash-dir=/tmp/a"b`}, `squash directory "/tmp/a\"b"`},
		{"plan: unknown runner", []string{"plan", "--config-keys", key, "--tp", "8", "--conc", "16", "--runner-name", "nosuch"}, "--runner-name nosuch is not a runner of " + key},
		{"plan: image with shell text", []string{"plan", "--config-files", bad, "--config-keys", key, "--tp", "8", "--conc", "16"}, badAt},
		{"validate: image with shell text", []string{"validate", "--config-files", bad}, badAt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			assert.Equal(t, exitUsage, code, stderr)
			assert.Contains(t, stdout+stderr, tc.want)
		})
	}
}
