package main

import (
	"bytes"
	"context"
	"os"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// runCLI runs sweep with args and returns exit code, stdout and stderr.
func runCLI(t testing.TB, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := mainRun(t.Context(), &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
	return code, out.String(), errOut.String()
}

func TestDispatch(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // substring
		stderr string // substring
	}{
		{name: "no args lists commands", args: nil, code: 0, stdout: "Commands:\n"},
		{name: "help flag", args: []string{"--help"}, code: 0, stdout: "version"},
		{name: "help command", args: []string{"help", "version"}, code: 0, stdout: "Usage:\n  sweep version"},
		{name: "version", args: []string{"version"}, code: 0, stdout: "sweep "},
		{name: "version --help", args: []string{"version", "--help"}, code: 0, stdout: "Print the sweep version"},
		{name: "unknown command", args: []string{"bogus"}, code: exitUsage, stderr: `unknown command "bogus"`},
		{name: "unknown flag", args: []string{"version", "--bogus"}, code: exitUsage, stderr: "unknown flag: --bogus"},
		{name: "stray argument", args: []string{"version", "x"}, code: exitUsage, stderr: "takes no arguments"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.args...)
			assert.Equal(t, tc.code, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
			assert.Contains(t, out, tc.stdout)
			assert.Contains(t, errOut, tc.stderr)
		})
	}
}

func TestEveryCommandHasHelp(t *testing.T) {
	var walk func(c *Command, path []string)
	walk = func(c *Command, path []string) {
		for _, s := range c.Sub {
			p := append(append([]string{}, path...), s.Name)
			assert.NotEmpty(t, s.Short, "%v has no short description", p)
			code, out, errOut := runCLI(t, append(p, "--help")...)
			assert.Equal(t, 0, code, "%v --help: %s", p, errOut)
			assert.Contains(t, out, "Usage:", "%v --help", p)
			walk(s, p)
		}
	}
	walk(rootCommand(&IOStreams{}), nil)
}

func TestBatchCommandsTuneTheCollector(t *testing.T) {
	t.Setenv("GOGC", "") // set, so nothing is tuned...
	os.Unsetenv("GOGC")  // ...then unset for this test; t.Setenv restores it
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	code, _, errOut := runCLI(t, "matrix", "test-config", "--config-keys", "qwen3.5-fp8-mi325x-sglang-agentic-mtp")
	assert.Equal(t, 0, code, errOut)
	assert.Equal(t, gcPercent, debug.SetGCPercent(100), "matrix runs with the batch GC setting")
	code, _, _ = runCLI(t, "version")
	assert.Equal(t, 0, code)
	assert.Equal(t, 100, debug.SetGCPercent(100), "other commands keep the default")
}

// parseOptions binds args with a command's flag set, as dispatch does, and
// returns the options its run function would receive.
func parseOptions[O any](t *testing.T, newCmd func(*IOStreams, func(context.Context, *O) error) *Command, args ...string) (*O, error) {
	t.Helper()
	var got *O
	cmd := newCmd(&IOStreams{}, func(_ context.Context, o *O) error { got = o; return nil })
	fs, runF := cmd.Flags()
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	err := runF(t.Context(), fs.Args())
	return got, err
}

// overrideFlags returns base without the "--name value" (or "--name=value")
// settings of the flags extra sets, followed by extra: a test's setting
// replaces a helper's default instead of repeating the flag, which sweep
// refuses for single-value flags.
func overrideFlags(base []string, extra ...string) []string {
	set := map[string]bool{}
	for _, a := range extra {
		if strings.HasPrefix(a, "--") {
			set[strings.SplitN(a, "=", 2)[0]] = true
		}
	}
	out := make([]string, 0, len(base)+len(extra))
	for i := 0; i < len(base); i++ {
		a := base[i]
		if strings.HasPrefix(a, "--") && set[strings.SplitN(a, "=", 2)[0]] {
			if !strings.Contains(a, "=") && i+1 < len(base) && !strings.HasPrefix(base[i+1], "--") {
				i++ // its value
			}
			continue
		}
		out = append(out, a)
	}
	return append(out, extra...)
}

func TestOverrideFlags(t *testing.T) {
	got := overrideFlags([]string{"run", "--a", "1", "--b=2", "--c", "--d", "4"}, "--a", "9", "--b", "8", "--e")
	assert.Equal(t, []string{"run", "--c", "--d", "4", "--a", "9", "--b", "8", "--e"}, got)
}
