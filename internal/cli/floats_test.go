package cli

import (
	"errors"
	"math"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFloatFlags: a float flag takes a number in its range; one out of
// it, out of float64's range (1e309), NaN or an infinity is a
// *RangeError naming the range, text that is no number is not; a list
// flag's first use replaces its default, and a later use or a comma
// adds to it.
func TestFloatFlags(t *testing.T) {
	frac := Range{Min: 0, Max: 1, MinOpen: true, MaxOpen: true, What: "a fraction", Example: "0.9"}
	pos := Range{Min: 0, Max: math.Inf(1), MinOpen: true, MaxOpen: true, What: "a factor"}
	closed := Range{Min: 0, Max: 1, What: "a fraction"}
	tests := []struct {
		name string
		in   Range
		args []string
		want float64
		err  string // "" when parsed
	}{
		{"in range", frac, []string{"--x", "0.5"}, 0.5, ""},
		{"default", frac, nil, 0.9, ""},
		{"open end", frac, []string{"--x", "1"}, 0, "1: want a fraction in (0, 1), e.g. 0.9"},
		{"closed end", closed, []string{"--x", "1"}, 1, ""},
		{"beyond float64", frac, []string{"--x", "1e309"}, 0, "1e309: want a fraction in (0, 1), e.g. 0.9"},
		{"NaN", pos, []string{"--x", "NaN"}, 0, "NaN: want a factor in (0, +Inf)"},
		{"Inf", pos, []string{"--x", "Inf"}, 0, "Inf: want a factor in (0, +Inf)"},
		{"negative", pos, []string{"--x=-3"}, 0, "-3: want a factor in (0, +Inf)"},
		{"no number", pos, []string{"--x", "abc"}, 0, `"abc" is not a number`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			var v float64
			FloatVar(fs, &v, "x", 0.9, "", tc.in)
			err := fs.Parse(tc.args)
			if tc.err == "" {
				require.NoError(t, err)
				assert.Equal(t, tc.want, v)
				return
			}
			require.Error(t, err)
			assert.ErrorContains(t, err, tc.err)
			_, isRange := errors.AsType[*RangeError](err)
			assert.Equal(t, tc.name != "no number", isRange, "%v", err)
		})
	}

	lists := []struct {
		name string
		args []string
		want []float64
		err  string
	}{
		{"default", nil, []float64{20, 50}, ""},
		{"replaced, then added to", []string{"--t", "5,6", "--t", "7"}, []float64{5, 6, 7}, ""},
		{"a bad value", []string{"--t", "5,NaN"}, nil, "NaN: want a factor in (0, +Inf)"},
	}
	for _, tc := range lists {
		t.Run("list "+tc.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			var v []float64
			FloatsVar(fs, &v, "t", []float64{20, 50}, "", pos)
			assert.Equal(t, "[20,50]", fs.Lookup("t").DefValue)
			err := fs.Parse(tc.args)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, v)
		})
	}
}
