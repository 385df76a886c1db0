package main

import (
	"context"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFlagMistakes runs real commands through the dispatcher: every
// command gets the same did-you-mean and repeated-flag rules.
func TestFlagMistakes(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stderr string // substring; the exit code is always 2
	}{
		{name: "misspelt run flag", args: []string{"run", "--tpp", "2"}, stderr: "sweep run: unknown flag: --tpp; did you mean --tp?"},
		{name: "misspelt flag with a value", args: []string{"validate", "--changelg=x"}, stderr: "unknown flag: --changelg; did you mean --changelog?"},
		{name: "misspelt flag after list values", args: []string{"plan", "--config-keys", "a", "b", "--formt", "json"}, stderr: "sweep plan: unknown flag: --formt; did you mean --format?"},
		{name: "single dash", args: []string{"run", "-tp", "2"}, stderr: `unknown shorthand flag: 't' in -tp; did you mean --tp?`},
		{name: "misspelt command", args: []string{"valdate"}, stderr: `unknown command "valdate" for "sweep"; did you mean "validate"?`},
		{name: "nothing close", args: []string{"version", "--bogus"}, stderr: "unknown flag: --bogus\n"},
		{name: "repeated scalar flag", args: []string{"run", "--conc", "16", "--conc", "3"}, stderr: `sweep run: --conc is given twice ("16", then "3") but takes one value; give it once`},
		{name: "repeated scalar with =", args: []string{"plan", "--config-keys", "k", "--format=json", "--format=text"}, stderr: "--format is given twice"},
		{name: "repeated bool", args: []string{"run", "--simulate", "--simulate"}, stderr: "--simulate is given twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.args...)
			assert.Equal(t, exitUsage, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
			assert.Contains(t, errOut, tc.stderr)
		})
	}
}

// TestListFlagsRepeat: list flags collect every value, however given.
func TestListFlagsRepeat(t *testing.T) {
	var got *planOptions
	ios := &IOStreams{}
	cmd := newPlanCmd(ios, func(_ context.Context, o *planOptions) error { got = o; return nil })
	err := dispatch(t.Context(), ios, cmd, []string{"sweep", "plan"},
		[]string{"--config-keys", "a", "--conc", "1", "--conc", "2,4", "--config-keys", "b", "c"})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, got.ConfigKeys)
	assert.Equal(t, []int{1, 2, 4}, got.Conc)
}

func TestUsageLineNamesArguments(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"schema", "show", "--help"}, "Usage:\n  sweep schema show [flags] TOOL[@VERSION] [FLAG...]\n"},
		{[]string{"schema", "validate", "--help"}, "Usage:\n  sweep schema validate [flags] TOOL[@VERSION] [--] COMMAND...\n"},
		{[]string{"knees", "--help"}, "Usage:\n  sweep knees [flags] RESULTS_DIR\n"},
		{[]string{"version", "--help"}, "Usage:\n  sweep version [flags]\n"},
	} {
		code, out, _ := runCLI(t, tc.args...)
		assert.Equal(t, exitOK, code)
		assert.Contains(t, out, tc.want)
	}
}

// TestFlagValueNamesAreOneWord: pflag takes a `quoted` word of a flag's
// usage as its value's name, so "file holding one job of `sweep ci
// matrix`" showed as "--job sweep ci matrix". A value name is one word
// (FILE, PATH) in every command's flags.
func TestFlagValueNamesAreOneWord(t *testing.T) {
	var walk func(path string, c *Command)
	walk = func(path string, c *Command) {
		path = strings.TrimSpace(path + " " + c.Name)
		for _, s := range c.Sub {
			walk(path, s)
		}
		if c.Flags == nil {
			return
		}
		fs, _ := c.Flags()
		fs.VisitAll(func(f *pflag.Flag) {
			name, _ := pflag.UnquoteUsage(f)
			assert.NotContains(t, name, " ", "%s --%s shows its value as %q: quote one word, or none", path, f.Name, name)
		})
	}
	walk("", rootCommand(&IOStreams{}))
}
