package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testdataPath(parts ...string) string {
	return filepath.Join(append([]string{"..", "..", "testdata"}, parts...)...)
}

func TestSchemaCheck(t *testing.T) {
	planted := filepath.Join(t.TempDir(), "help.txt")
	text, err := os.ReadFile(testdataPath("help", "aiperf-0.12.0-profile-help-cols250.txt"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(planted, []byte(strings.Replace(string(text), "│ --apply-chat-template ", "│ --use-chat-template   ", 1)), 0o644))

	empty := filepath.Join(t.TempDir(), "empty.txt")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	garbage := filepath.Join(t.TempDir(), "garbage.txt")
	require.NoError(t, os.WriteFile(garbage, []byte("not a help text\n"), 0o644))

	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{name: "real help 100 columns", args: []string{"aiperf@0.12.0", "--help-file", testdataPath("help", "aiperf-0.12.0-profile-help-cols100.txt")}, code: 0, stderr: "259 help rows, 259 matched, no drift"},
		{name: "real help 250 columns", args: []string{"aiperf", "--help-file", testdataPath("help", "aiperf-0.12.0-profile-help-cols250.txt")}, code: 0, stderr: "no drift"},
		{name: "planted drift", args: []string{"aiperf", "--help-file", planted}, code: 1,
			stdout: "added: --use-chat-template (help line", stderr: "drift: 1 added, 1 removed, 0 changed"},
		{name: "fork against upstream help", args: []string{"aiperf@sa-754356e9", "--help-file", testdataPath("help", "aiperf-0.12.0-profile-help-cols250.txt")}, code: 1,
			stdout: "removed: --warmup-requests-per-lane"},
		{name: "sglang fixture", args: []string{"sglang@v0.5.16", "--help-file", testdataPath("help", "sglang-v0.5.16-help.txt"), "-v"}, code: 0,
			stderr: "493 help rows, 493 matched, no drift"},
		{name: "vllm fixture", args: []string{"vllm", "--help-file", testdataPath("help", "vllm-v0.27.1-serve-help.txt")}, code: 0, stderr: "no drift"},
		{name: "needs a source", args: []string{"aiperf"}, code: exitUsage, stderr: "exactly one of --help-file or --exec"},
		// A help file that cannot be read or is no help text exited 1, as
		// drift does; a --timeout of 0 or below was taken and ended in
		// "context deadline exceeded".
		{name: "missing file", args: []string{"aiperf", "--help-file", "/nonexistent"}, code: exitUsage, stderr: "--help-file: open /nonexistent: no such file"},
		{name: "empty file", args: []string{"aiperf", "--help-file", empty}, code: exitUsage, stderr: "--help-file " + empty + ": no option rows found in the cyclopts help text"},
		{name: "garbage file", args: []string{"vllm", "--help-file", garbage}, code: exitUsage, stderr: "--help-file " + garbage + ": no option rows found in the argparse help text"},
		{name: "zero timeout", args: []string{"aiperf", "--exec", "/bin/true", "--timeout", "0"}, code: exitUsage, stderr: "--timeout 0s: want a positive duration"},
		{name: "negative timeout", args: []string{"aiperf", "--exec", "/bin/true", "--timeout", "-1s"}, code: exitUsage, stderr: "--timeout -1s: want a positive duration"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"schema", "check"}, tc.args...)...)
			assert.Equal(t, tc.code, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
			assert.Contains(t, out, tc.stdout)
			assert.Contains(t, errOut, tc.stderr)
		})
	}
}

// --exec runs the tool (here a script standing in for aiperf) with its subcommand and --help.
func TestSchemaCheckExec(t *testing.T) {
	dir := t.TempDir()
	help, err := filepath.Abs(testdataPath("help", "aiperf-0.12.0-profile-help-cols100.txt"))
	require.NoError(t, err)
	args := filepath.Join(dir, "args")
	fake := filepath.Join(dir, "aiperf")
	script := "#!/bin/sh\necho \"$@ COLUMNS=$COLUMNS\" > '" + args + "'\ncat '" + help + "'\n"
	require.NoError(t, os.WriteFile(fake, []byte(script), 0o755))

	code, out, errOut := runCLI(t, "schema", "check", "aiperf", "--exec", fake)
	assert.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	assert.Contains(t, errOut, "no drift")
	got, err := os.ReadFile(args)
	require.NoError(t, err)
	assert.Equal(t, "profile --help COLUMNS=250\n", string(got))

	failing := filepath.Join(dir, "broken")
	require.NoError(t, os.WriteFile(failing, []byte("#!/bin/sh\necho 'ModuleNotFoundError: aiperf' >&2\nexit 3\n"), 0o755))
	code, _, errOut = runCLI(t, "schema", "check", "vllm", "--exec", failing)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "exit status 3: ModuleNotFoundError: aiperf")
}

// Flag parsing builds the options the run function gets.
func TestNewSchemaCheckCmd(t *testing.T) {
	got, err := parseOptions(t, newSchemaCheckCmd, "sglang@v0.5.16", "--exec", "python3", "--timeout", "30s", "--", "-m", "sglang.launch_server")
	require.NoError(t, err)
	assert.Equal(t, "sglang@v0.5.16", got.Schema)
	assert.Equal(t, "python3", got.Exec)
	assert.Equal(t, []string{"-m", "sglang.launch_server"}, got.ExecArgs)
	assert.Equal(t, 30*time.Second, got.Timeout)
}
