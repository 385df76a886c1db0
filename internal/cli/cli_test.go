package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/usage"
)

// toyOptions are what the toy command's flags bind.
type toyOptions struct {
	Keys  []string
	Concs []int
	Port  int
	Max   *int
	Args  []string
}

// toy is a tree "sweep toy {run,batch}" whose leaves record their options.
func toy(got *toyOptions) *Command {
	leaf := func(name string, batch bool) *Command {
		return &Command{
			Name: name, Short: "the " + name + " leaf", Args: "[WORD...]", Batch: batch,
			Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
				o := &toyOptions{}
				fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
				lists := NewLists()
				lists.Strings(fs, &o.Keys, "config-keys", "keys")
				lists.Ints(fs, &o.Concs, "conc", "concurrencies")
				fs.IntVar(&o.Port, "port", 8888, "port")
				fs.Var(OptInt{P: &o.Max}, "max-conc", "largest concurrency")
				lists.Finish(fs)
				return fs, func(_ context.Context, args []string) error {
					if err := lists.ParseRest(fs, args); err != nil {
						return err
					}
					o.Args = fs.Args()
					*got = *o
					return nil
				}
			},
		}
	}
	return &Command{Name: "sweep", Long: "Toy.", Sub: []*Command{{Name: "toy", Short: "toys", Sub: []*Command{leaf("run", false), leaf("batch", true)}}}}
}

func dispatchToy(t *testing.T, args ...string) (toyOptions, string, error) {
	t.Helper()
	var got toyOptions
	var out bytes.Buffer
	err := Dispatch(t.Context(), &IOStreams{Out: &out, ErrOut: &out}, toy(&got), []string{"sweep"}, args, nil)
	return got, out.String(), err
}

func TestDispatchParsesListsAndScalars(t *testing.T) {
	got, _, err := dispatchToy(t, "toy", "run", "--config-keys", "a", "b,c", "--conc", "1", "--port=9", "--conc", "4", "8", "-2", "--max-conc", "64")
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, got.Keys)
	assert.Equal(t, []int{1, 4, 8, -2}, got.Concs, "a negative number after a list's values is a value, not a flag")
	assert.Equal(t, 9, got.Port)
	require.NotNil(t, got.Max)
	assert.Equal(t, 64, *got.Max)

	got, _, err = dispatchToy(t, "toy", "run")
	require.NoError(t, err)
	assert.Nil(t, got.Max, "an OptInt not given stays nil")
}

func TestDispatchUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"toy", "rnu"}, `unknown command "rnu" for "sweep toy"; did you mean "run"? (known: batch, run)`},
		{[]string{"toy", "run", "--prot", "1"}, "toy run: unknown flag: --prot; did you mean --port?"},
		{[]string{"toy", "run", "--port", "1", "--port", "2"}, `toy run: --port is given twice ("1", then "2") but takes one value; give it once`},
		{[]string{"toy", "run", "--port", "1", "x"}, `unexpected argument "x" after --port, which takes one value`},
		{[]string{"toy", "run", "x"}, `unexpected argument "x"`},
		{[]string{"toy", "run", "--conc", "one"}, `invalid argument "one" for "--conc" flag: "one" is not an integer`},
		{[]string{"toy", "run", "--conc", "1", "two"}, `invalid argument "two" for --conc: "two" is not an integer`},
		{[]string{"toy", "run", "--config-keys", "a", "b", "--", "c"}, `unexpected arguments after --: ["c"]`},
		{[]string{"toy", "run", "--config-keys", "a", "b", "--prot", "1"}, "toy run: unknown flag: --prot; did you mean --port?"},
		{[]string{"toy", "run", "--max-conc", "x"}, `"x" is not an integer`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, _, err := dispatchToy(t, tc.args...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			_, isUsage := errors.AsType[*FlagError](err)
			assert.True(t, isUsage, "%v is a usage error", err)
		})
	}
}

func TestDispatchHelp(t *testing.T) {
	_, out, err := dispatchToy(t)
	require.NoError(t, err)
	assert.Equal(t, "Toy.\n\nUsage:\n  sweep <command> [flags]\n\nCommands:\n  toy  toys\n\nRun 'sweep <command> --help' for a command's flags.\n", out)

	_, out, err = dispatchToy(t, "help", "toy", "run")
	assert.ErrorIs(t, err, pflag.ErrHelp)
	assert.True(t, strings.HasPrefix(out, "the run leaf\n\nUsage:\n  sweep toy run [flags] [WORD...]\n\nFlags:\n      --config-keys strings"), out)
}

func TestBatchHookRunsForBatchCommands(t *testing.T) {
	for _, tc := range []struct {
		leaf  string
		batch bool
	}{{"run", false}, {"batch", true}} {
		var got toyOptions
		calls := 0
		err := Dispatch(t.Context(), &IOStreams{}, toy(&got), []string{"sweep"}, []string{"toy", tc.leaf}, func() { calls++ })
		require.NoError(t, err)
		assert.Equal(t, tc.batch, calls == 1, tc.leaf)
		assert.False(t, batchRunning.Load(), "reset after the command")
	}
}

// TestFlagErrorNamesTheCommandOnce: a flag's parse error printed the
// program twice ("sweep: sweep discover: invalid argument ..."); ExitCode
// prints it first, the message names the command path after it.
func TestFlagErrorNamesTheCommandOnce(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"toy", "run", "--conc", "one"}, `sweep: toy run: invalid argument "one" for "--conc" flag: "one" is not an integer` + "\n"},
		{[]string{"toy", "run", "--prot", "1"}, "sweep: toy run: unknown flag: --prot; did you mean --port?\n"},
		{[]string{"toy", "run", "--config-keys", "a", "--prot", "1"}, "sweep: toy run: unknown flag: --prot; did you mean --port?\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, _, err := dispatchToy(t, tc.args...)
			var out bytes.Buffer
			assert.Equal(t, ExitUsage, ExitCode(t.Context(), &out, err))
			assert.Equal(t, tc.want+"run with --help for usage\n", out.String())
		})
	}
}

func TestExitCode(t *testing.T) {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		err     error
		code    int
		printed string
	}{
		{"ok", t.Context(), nil, ExitOK, ""},
		{"help", t.Context(), pflag.ErrHelp, ExitOK, ""},
		{"failure", t.Context(), errors.New("boom"), ExitError, "sweep: boom\n"},
		{"usage", t.Context(), fmt.Errorf("x: %w", FlagErrorf("bad %d", 1)), ExitUsage, "sweep: x: bad 1\nrun with --help for usage\n"},
		{"library usage", t.Context(), fmt.Errorf("plan: %w", usage.Errorf("bad port")), ExitUsage, "sweep: plan: bad port\nrun with --help for usage\n"},
		{"refusal", t.Context(), fmt.Errorf("point c4: %w", usage.Refusef("--out d: not empty; use a new directory")), ExitUsage, "sweep: point c4: --out d: not empty; use a new directory\n"},
		{"refusal in a usage error", t.Context(), FlagErrorf("--out: %w", Refusef("d is in use")), ExitUsage, "sweep: --out: d is in use\n"},
		{"own code", t.Context(), &ExitCodeError{Code: 3, Err: errors.New("regressed")}, 3, "sweep: regressed\n"},
		{"cancelled", cancelled, fmt.Errorf("stage: %w", context.Canceled), ExitCancelled, "sweep: cancelled\n"},
		{"canceled error, live context", t.Context(), context.Canceled, ExitError, "sweep: context canceled\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			assert.Equal(t, tc.code, ExitCode(tc.ctx, &out, tc.err))
			assert.Equal(t, tc.printed, out.String())
		})
	}
}

func TestWrapWords(t *testing.T) {
	words := strings.Fields(strings.Repeat("--flag-name ", 14))
	got := WrapWords(words)
	for _, l := range strings.Split(got, "\n") {
		assert.LessOrEqual(t, len(l), 78)
	}
	assert.Equal(t, words, strings.Fields(got))
	assert.Equal(t, "", WrapWords(nil))
}

func TestClosestFlags(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.Int("port", 0, "")
	fs.Int("sort", 0, "")
	fs.String("format", "", "")
	fs.Bool("hidden", false, "")
	require.NoError(t, fs.MarkHidden("hidden"))
	assert.Equal(t, "--format", closestFlags(fs, "formt"))
	assert.Equal(t, "--port or --sort", closestFlags(fs, "ort=3"))
	assert.Equal(t, "", closestFlags(fs, "hiddn"), "hidden flags are not offered")
	assert.Equal(t, "", closestFlags(fs, "zzzzzz"))
}

func TestIsFlagWord(t *testing.T) {
	for w, want := range map[string]bool{"--x": true, "-x": true, "--": true, "-1": false, "-": false, "x": false, "": false} {
		assert.Equal(t, want, isFlagWord(w), w)
	}
}

func TestPickByFlag(t *testing.T) {
	with, without := &Command{Name: "with"}, &Command{Name: "without"}
	pick := PickByFlag("propose", with, without)
	for _, tc := range []struct {
		args []string
		want *Command
	}{
		{nil, without},
		{[]string{"--from", "d", "--propose"}, with},
		{[]string{"--propose=true"}, with},
		{[]string{"--proposal"}, without},
		{[]string{"--", "--propose"}, without},
	} {
		assert.Same(t, tc.want, pick(tc.args), "%q", tc.args)
	}
}

func TestCheckOutDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, tc := range []struct {
		name, path, want string // want "": no error
	}{
		{name: "new directory", path: dir + "/new"},
		{name: "existing directory", path: dir},
		{name: "parent missing", path: dir + "/typo/new", want: "--out " + dir + "/typo/new: the parent directory " + dir + "/typo does not exist: make it first, or give a path under a directory that exists"},
		{name: "a file", path: file, want: "--out " + file + ": it is a file, not a directory: give a directory (one that does not exist yet is made)"},
		{name: "under a file", path: file + "/d", want: "--out " + file + "/d: " + file + " is a file, not a directory: give a path under a directory"},
		{name: "deeper under a file", path: file + "/d/e", want: "--out " + file + "/d/e: " + file + " is a file, not a directory: give a path under a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckOutDir("out", tc.path)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tc.want)
			var out bytes.Buffer
			assert.Equal(t, ExitUsage, ExitCode(t.Context(), &out, err))
			assert.Equal(t, "sweep: "+tc.want+"\n", out.String(), "a refusal naming its fix: no hint to run --help")
		})
	}
}
