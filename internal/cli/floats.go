package cli

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"sweep/internal/usage"
)

// Range is the values a float flag takes, the one rule of every float
// flag (FloatVar, FloatsVar): Min to Max, each end open or closed, never
// NaN, and never ±Inf (an infinite bound means none on that side).
// What names the values ("a fraction", "points") and Example is one
// ("0.9"), for the refusal: "--threshold 1e309: want a fraction in
// (0, 1), e.g. 0.9".
type Range struct {
	Min, Max         float64
	MinOpen, MaxOpen bool
	What, Example    string
}

// Contains reports whether v is in r.
func (r Range) Contains(v float64) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return false
	}
	above := v > r.Min || (!r.MinOpen && v == r.Min)
	below := v < r.Max || (!r.MaxOpen && v == r.Max)
	return above && below
}

// String is r as the refusal says it: "a fraction in (0, 1), e.g. 0.9".
func (r Range) String() string {
	bound := func(v float64) string {
		switch {
		case math.IsInf(v, 1):
			return "+Inf"
		case math.IsInf(v, -1):
			return "-Inf"
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	open, closing := "[", "]"
	if r.MinOpen || math.IsInf(r.Min, -1) {
		open = "("
	}
	if r.MaxOpen || math.IsInf(r.Max, 1) {
		closing = ")"
	}
	s := fmt.Sprintf("%s in %s%s, %s%s", r.What, open, bound(r.Min), bound(r.Max), closing)
	if r.Example != "" {
		s += ", e.g. " + r.Example
	}
	return s
}

// RangeError is a float flag's value out of its Range (or no number at
// all: NaN, ±Inf, or beyond float64's range, as 1e309, which pflag's own
// float flags call "must be a number"). The parse error names the flag:
// "--tolerance 1e309: want points in (0, 100), e.g. 2".
type RangeError struct {
	Text string
	In   Range
}

func (e *RangeError) Error() string { return fmt.Sprintf("%s: want %s", e.Text, e.In) }

// FloatVar binds the float flag name to p (set to def) with its range.
func FloatVar(fs *pflag.FlagSet, p *float64, name string, def float64, usage string, in Range) {
	*p = def
	fs.Var(&Float{P: p, In: in}, name, usage)
}

// FloatsVar binds the float list flag name to p (set to def) with the
// range of each value: comma-separated values, the flag repeated, the
// first use replacing def.
func FloatsVar(fs *pflag.FlagSet, p *[]float64, name string, def []float64, usage string, in Range) {
	*p = def
	fs.Var(&Floats{P: p, In: in}, name, usage)
}

// Float is a float64 flag whose value must be in In (FloatVar).
type Float struct {
	P  *float64
	In Range
}

func (f *Float) String() string {
	if f.P == nil {
		return ""
	}
	return strconv.FormatFloat(*f.P, 'g', -1, 64)
}

func (f *Float) Set(s string) error {
	v, err := parseIn(s, f.In)
	if err != nil {
		return err
	}
	*f.P = v
	return nil
}

func (f *Float) Type() string { return "float" }

// Floats is a list of float64 flag, each value in In (FloatsVar).
type Floats struct {
	P   *[]float64
	In  Range
	set bool
}

func (f *Floats) String() string {
	if f.P == nil {
		return ""
	}
	out := make([]string, len(*f.P))
	for i, v := range *f.P {
		out[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return "[" + strings.Join(out, ",") + "]"
}

func (f *Floats) Set(s string) error {
	var vs []float64
	for t := range strings.SplitSeq(s, ",") {
		v, err := parseIn(strings.TrimSpace(t), f.In)
		if err != nil {
			return err
		}
		vs = append(vs, v)
	}
	if !f.set {
		*f.P, f.set = nil, true
	}
	*f.P = append(*f.P, vs...)
	return nil
}

func (f *Floats) Type() string { return "floats" }

// parseIn parses s as a float in r: text that is no number is "is not a
// number"; a number out of r, or out of float64's range, a *RangeError.
func parseIn(s string, r Range) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if !r.Contains(v) { // 1e309 is +Inf (strconv.ErrRange)
		return 0, &usage.Error{Err: &RangeError{Text: s, In: r}} // a usage error however parsed
	}
	return v, nil
}
