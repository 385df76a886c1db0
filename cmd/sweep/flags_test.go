package main

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"sweep/internal/cli"
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
		{name: "misspelt run flag", args: []string{"run", "--tpp", "2"}, stderr: "sweep: run: unknown flag: --tpp; did you mean --tp?"},
		{name: "misspelt flag with a value", args: []string{"validate", "--changelg=x"}, stderr: "unknown flag: --changelg; did you mean --changelog?"},
		{name: "misspelt flag after list values", args: []string{"plan", "--config-keys", "a", "b", "--formt", "json"}, stderr: "sweep: plan: unknown flag: --formt; did you mean --format?"},
		{name: "single dash", args: []string{"run", "-tp", "2"}, stderr: `unknown shorthand flag: 't' in -tp; did you mean --tp?`},
		{name: "misspelt command", args: []string{"valdate"}, stderr: `unknown command "valdate" for "sweep"; did you mean "validate"?`},
		{name: "nothing close", args: []string{"version", "--bogus"}, stderr: "unknown flag: --bogus\n"},
		{name: "repeated scalar flag", args: []string{"run", "--conc", "16", "--conc", "3"}, stderr: `sweep: run: --conc is given twice ("16", then "3") but takes one value; give it once`},
		{name: "repeated scalar with =", args: []string{"plan", "--config-keys", "k", "--format=json", "--format=text"}, stderr: "--format is given twice"},
		{name: "repeated bool", args: []string{"run", "--simulate", "--simulate"}, stderr: "--simulate is given twice"},
		// "sweep: sweep discover: invalid argument ...": the program once.
		{name: "invalid list value", args: []string{"discover", "--tp", "x"}, stderr: `sweep: discover: invalid argument "x" for "--tp" flag: "x" is not an integer`},
		{name: "a subcommand's flag", args: []string{"sim", "agreement", "--frontier=x"}, stderr: `sweep: sim agreement: invalid argument "x" for "--frontier" flag`},
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

// TestFloatFlagsHaveRanges walks every command (and a command a flag
// picks, official --propose) and checks that each float flag goes
// through the one rule (cli.FloatVar, cli.FloatsVar) with its range: a
// number beyond float64's range (1e309), an infinity, NaN or a value
// just out of the range is refused, exit 2, naming the flag, the value
// and the range; the range's example is taken. Before, 1e309 was
// pflag's "must be a number" on all but ab compare's --tolerance, and
// NaN, Inf or negative values passed silently on some (official
// --propose --target NaN, run --al-tolerance NaN).
func TestFloatFlagsHaveRanges(t *testing.T) {
	type flagAt struct {
		args []string // the command's words, with the flag that picks it
		name string
		in   cli.Range
	}
	var flags []flagAt
	var walk func(args []string, c *Command)
	walk = func(args []string, c *Command) {
		if c.Name != "sweep" {
			args = append(slices.Clone(args), c.Name)
		}
		for _, s := range c.Sub {
			walk(args, s)
		}
		if c.Flags == nil {
			return
		}
		fs, _ := c.Flags()
		fs.VisitAll(func(f *pflag.Flag) {
			if c.Pick != nil {
				if p := c.Pick([]string{"--" + f.Name}); p != c {
					walk(append(slices.Clone(args), "--"+f.Name), &Command{Name: "sweep", Flags: p.Flags})
				}
			}
			value := f.Value
			for u, ok := value.(interface{ Unwrap() pflag.Value }); ok; u, ok = value.(interface{ Unwrap() pflag.Value }) {
				value = u.Unwrap() // a list flag's recorder (cli.Lists)
			}
			switch v := value.(type) {
			case *cli.Float:
				flags = append(flags, flagAt{args, f.Name, v.In})
			case *cli.Floats:
				flags = append(flags, flagAt{args, f.Name, v.In})
			default:
				assert.NotContains(t, strings.ToLower(f.Value.Type()), "float", "sweep %s --%s: a float flag not bound with cli.FloatVar or cli.FloatsVar", strings.Join(args, " "), f.Name)
			}
		})
	}
	walk(nil, rootCommand(&IOStreams{}))
	require.GreaterOrEqual(t, len(flags), 15, "the float flags found")
	for _, f := range flags {
		bad := []string{"1e309", "-1e309", "NaN", "Inf", "-Inf"}
		if f.in.MinOpen {
			bad = append(bad, strconv.FormatFloat(f.in.Min, 'g', -1, 64))
		} else {
			bad = append(bad, strconv.FormatFloat(f.in.Min-0.5, 'g', -1, 64))
		}
		if !math.IsInf(f.in.Max, 1) {
			bad = append(bad, strconv.FormatFloat(f.in.Max+0.5, 'g', -1, 64))
		}
		for _, v := range bad {
			args := append(slices.Clone(f.args), "--"+f.name+"="+v)
			code, _, stderr := runCLI(t, args...)
			assert.Equal(t, 2, code, "sweep %s: %s", strings.Join(args, " "), stderr)
			assert.True(t, strings.HasPrefix(stderr, "sweep: --"+f.name+" "+v+": want "+f.in.String()+"\n"), "sweep %s: %s", strings.Join(args, " "), stderr)
		}
		var p float64
		assert.NoError(t, (&cli.Float{P: &p, In: f.in}).Set(f.in.Example), "--%s: its example %q", f.name, f.in.Example)
	}
}
