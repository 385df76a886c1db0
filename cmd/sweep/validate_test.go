package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
)

// repoRoot is the repository root seen from this package's directory.
const repoRoot = "../.."

func TestNewValidateCmdFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want validateOptions
		err  string
	}{
		{name: "defaults", args: nil, want: validateOptions{}},
		{name: "every flag", args: []string{"--config-files", "a.yaml,b.yaml", "--runner-config", "r.yaml", "--changelog", "c.yaml", "--changelog-base-ref", "origin/main"},
			want: validateOptions{ValidateFiles: configs.ValidateFiles{ConfigFiles: []string{"a.yaml", "b.yaml"}, RunnerConfig: "r.yaml", Changelog: "c.yaml", BaseRef: "origin/main"}}},
		{name: "config files listed after the flag", args: []string{"--config-files", "a.yaml", "b.yaml", "--changelog-base", "old.yaml"},
			want: validateOptions{ValidateFiles: configs.ValidateFiles{ConfigFiles: []string{"a.yaml", "b.yaml"}, ChangelogBase: "old.yaml"}}},
		{name: "repeated config files", args: []string{"--config-files", "a.yaml", "--config-files", "b.yaml"},
			want: validateOptions{ValidateFiles: configs.ValidateFiles{ConfigFiles: []string{"a.yaml", "b.yaml"}}}},
		{name: "stray argument", args: []string{"a.yaml"}, err: "validate takes no arguments"},
		{name: "both bases", args: []string{"--changelog-base", "x", "--changelog-base-ref", "y"}, err: "mutually exclusive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseOptions(t, newValidateCmd, tc.args...)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				var fe *FlagError
				require.ErrorAs(t, err, &fe, "usage errors exit 2")
				return
			}
			require.NoError(t, err)
			got.IO = nil
			assert.Equal(t, tc.want, *got)
		})
	}
}

// TestValidatePlantedMistakesCLI runs the acceptance scenario through the
// CLI: three planted mistakes, three lines with positions, exit status 2,
// as the same files give from matrix and plan (it was 1).
func TestValidatePlantedMistakesCLI(t *testing.T) {
	code, out, errOut := runCLI(t, "validate",
		"--config-files", filepath.Join(repoRoot, "testdata/configs/planted/amd-master.yaml"), filepath.Join(repoRoot, "configs/nvidia-master.yaml"),
		"--runner-config", filepath.Join(repoRoot, "configs/runners.yaml"))
	assert.Equal(t, exitUsage, code)
	assert.NotContains(t, errOut, "run with --help", "a file's problem is no usage mistake")
	want, err := os.ReadFile(filepath.Join(repoRoot, "testdata/configs/planted/validate.golden"))
	require.NoError(t, err)
	assert.Equal(t, string(want), strings.ReplaceAll(out, repoRoot+"/", ""))
	assert.Contains(t, errOut, "sweep: 3 problems in 1 file\n")
}

func TestValidateRun(t *testing.T) {
	changelog := filepath.Join(repoRoot, "perf-changelog.yaml")
	data, err := os.ReadFile(changelog)
	require.NoError(t, err)
	dir := t.TempDir()
	shortened := filepath.Join(dir, "old.yaml")
	// Base with an extra historical line that the head no longer has.
	require.NoError(t, os.WriteFile(shortened, bytes.Replace(data, []byte("  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/2566\n"),
		[]byte("  evals-only: false\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/2566\n"), 1), 0o644))

	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{name: "built-in configs", args: nil, code: 0,
			stdout: "ok: 208 master configs in 2 files, 37 runner labels\n", stderr: "changelog not checked"},
		{name: "with the project changelog", args: []string{"--changelog", changelog}, code: 0,
			stdout: "ok: 208 master configs in 2 files, 37 runner labels, 4 changelog entries (4 new)\n"},
		{name: "unchanged against itself", args: []string{"--changelog", changelog, "--changelog-base", changelog}, code: 0,
			stdout: "4 changelog entries (0 new)"},
		{name: "deleted line", args: []string{"--changelog", changelog, "--changelog-base", shortened}, code: exitUsage,
			stdout: shortened + `:27:1: line deleted or rewritten in head ` + changelog + `: "  evals-only: false"`, stderr: "sweep: 1 problem in 1 file"},
		{name: "missing file", args: []string{"--config-files", filepath.Join(dir, "nope.yaml")}, code: exitUsage,
			stderr: filepath.Join(dir, "nope.yaml") + ":1:1: cannot read file"},
		{name: "base without changelog", args: []string{"--changelog-base", shortened}, code: exitUsage,
			stderr: "there is no ./perf-changelog.yaml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"validate"}, tc.args...)...)
			assert.Equal(t, tc.code, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
			assert.Contains(t, out, tc.stdout)
			assert.Contains(t, errOut, tc.stderr)
		})
	}
}

// TestValidateBaseRef checks --changelog-base-ref against a real git
// repository: an appended entry passes, a rewritten one fails.
func TestValidateBaseRef(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), "git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	data, err := os.ReadFile(filepath.Join(repoRoot, "perf-changelog.yaml"))
	require.NoError(t, err)
	path := filepath.Join(dir, "perf-changelog.yaml")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	git("init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README"), []byte("x\n"), 0o644))
	git("add", "README")
	git("commit", "-q", "-m", "first")
	// The changelog does not exist at HEAD yet: every entry is new.
	code, out, errOut := runCLI(t, "validate", "--changelog", path, "--changelog-base-ref", "HEAD")
	assert.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	assert.Contains(t, out, "4 changelog entries (4 new)")
	git("add", "perf-changelog.yaml")
	git("commit", "-q", "-m", "base")

	appended := string(data) + "\n- config-keys:\n    - dsr1-fp4-mi355x-*\n  description:\n    - \"Rerun.\"\n  pr-link: XXX\n"
	require.NoError(t, os.WriteFile(path, []byte(appended), 0o644))
	code, out, errOut = runCLI(t, "validate", "--changelog", path, "--changelog-base-ref", "HEAD")
	assert.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	assert.Contains(t, out, "5 changelog entries (1 new)")

	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(appended, "MI300X", "MI300", 1)), 0o644))
	code, out, _ = runCLI(t, "validate", "--changelog", path, "--changelog-base-ref", "HEAD")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, out, "HEAD:"+path+":")
	assert.Contains(t, out, "line deleted or rewritten")

	code, _, errOut = runCLI(t, "validate", "--changelog", path, "--changelog-base-ref", "no-such-ref")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "git show no-such-ref:")
}

// TestValidateOnePassCLI: the problems of the master file, the runner
// facts they depend on and the changelog all come out of one run, each
// naming the line that caused it.
func TestValidateOnePassCLI(t *testing.T) {
	dir := filepath.Join(repoRoot, "testdata/configs/one-pass")
	code, out, errOut := runCLI(t, "validate",
		"--config-files", filepath.Join(dir, "masters.yaml"),
		"--runner-config", filepath.Join(dir, "runners.yaml"),
		"--changelog", filepath.Join(dir, "perf-changelog.yaml"))
	assert.Equal(t, exitUsage, code, "stderr:\n%s", errOut)
	got := strings.ReplaceAll(out, dir+"/", "")
	golden := filepath.Join(dir, "validate.golden")
	if *updateKnees {
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), got)
	assert.Contains(t, errOut, "sweep: 5 problems in 2 files\n")
}

// TestValidateSyntaxErrorCLI plants a bad indent deep in a master file:
// the error names that line, not the one yaml.v3 prints (the enclosing
// mapping's, 0-based), and says which construct the parser was in.
func TestValidateSyntaxErrorCLI(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "testdata/configs/planted/amd-master.yaml"))
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	const bad = 231 // "  scenarios:" of qwen3.5-fp8-mi355x-atom
	require.Equal(t, "  scenarios:\n", lines[bad-1])
	lines[bad-1] = " scenarios:\n"
	path := filepath.Join(t.TempDir(), "amd.yaml")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644))
	code, out, _ := runCLI(t, "validate", "--config-files", path)
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, path+":231:2: invalid YAML: did not find expected key; this line (column 2) does not continue the block mapping that starts at line 7 (keys at column 1): indent it like its siblings, or fix the earlier line that opened a deeper block\n", out)
	// yaml.v3 itself says "line 6", the line above that mapping.
}
