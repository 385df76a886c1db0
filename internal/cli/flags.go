package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"sweep/internal/textdiff"
)

// Every command's flag set goes through guardFlags before parsing and
// flagParseError after it fails, so all commands share two rules: a flag
// that takes one value refuses a second one ("--conc 16 --conc 3" is a
// mistake, not "the last wins"), and an unknown flag names the closest
// real ones.

// guardFlags makes every single-value flag of fs refuse to be given
// twice. List flags (slices, arrays, argparse-style lists, maps and
// counters) may repeat.
func guardFlags(fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if _, done := f.Value.(*onceValue); done || repeatable(f.Value) {
			return
		}
		f.Value = &onceValue{Value: f.Value, name: f.Name}
	})
}

// repeatable reports whether a flag value collects several values.
func repeatable(v pflag.Value) bool {
	if _, ok := v.(pflag.SliceValue); ok {
		return true
	}
	t := v.Type()
	switch t {
	case "strings", "ints", "floats", "count":
		return true
	}
	return strings.HasSuffix(t, "Slice") || strings.HasSuffix(t, "Array") || strings.HasPrefix(t, "stringTo")
}

// onceValue is a flag value that accepts one Set.
type onceValue struct {
	pflag.Value
	name  string
	first *string // the value given first; nil until set
}

func (o *onceValue) Set(s string) error {
	if o.first != nil {
		return &repeatedFlagError{Name: o.name, First: *o.first, Second: s}
	}
	if err := o.Value.Set(s); err != nil {
		return err
	}
	o.first = &s
	return nil
}

// IsBoolFlag keeps pflag's view of boolean flags (usage text) intact.
func (o *onceValue) IsBoolFlag() bool {
	b, ok := o.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// repeatedFlagError is a single-value flag given more than once.
type repeatedFlagError struct {
	Name          string
	First, Second string
}

func (e *repeatedFlagError) Error() string {
	return fmt.Sprintf("--%s is given twice (%q, then %q) but takes one value; give it once", e.Name, e.First, e.Second)
}

// flagParseError turns an error of fs.Parse into a usage error that says
// what to do: the closest flags for an unknown one, the flag's name for a
// repeated one. fs's name (the command path after prog, as Dispatch
// names it: "sim agreement") starts the message, which ExitCode prints
// after prog ("sweep: sim agreement: unknown flag: ..."), never prog
// twice.
func flagParseError(fs *pflag.FlagSet, err error) error {
	prefix := fs.Name()
	if iv, ok := errors.AsType[*pflag.InvalidValueError](err); ok {
		if re, ok := errors.AsType[*RangeError](err); ok {
			// "--tolerance 1e309: want points in (0, 100), e.g. 2"
			return &FlagError{Err: fmt.Errorf("--%s %w", iv.GetFlag().Name, re)}
		}
	}
	if rep, ok := errors.AsType[*repeatedFlagError](err); ok {
		err = rep
	} else if ne, ok := errors.AsType[*pflag.NotExistError](err); ok {
		// "-tp 2" reaches pflag as the shorthand group "tp".
		name := ne.GetSpecifiedName()
		if short := ne.GetSpecifiedShortnames(); short != "" {
			name = short
		}
		if hint := closestFlags(fs, name); hint != "" {
			err = fmt.Errorf("%w; did you mean %s?", err, hint)
		}
	}
	if prefix != "" {
		err = fmt.Errorf("%s: %w", prefix, err)
	}
	return &FlagError{Err: err}
}

// closestFlags names the flags of fs nearest to name (up to three at the
// same distance), as "--a, --b or --c"; "" when none is close.
func closestFlags(fs *pflag.FlagSet, name string) string {
	var names []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	if i := strings.IndexByte(name, '='); i >= 0 {
		name = name[:i]
	}
	limit := max(2, len(name)/3)
	var close []string
	for _, c := range textdiff.Closest(name, names, 3, limit) {
		// Only the nearest ones: "--formt" is --format, not --port.
		if d := textdiff.Distance(name, c, limit+1); len(close) == 0 || d <= textdiff.Distance(name, close[0][2:], limit+1) {
			close = append(close, "--"+c)
		}
	}
	switch len(close) {
	case 0:
		return ""
	case 1:
		return close[0]
	}
	return strings.Join(close[:len(close)-1], ", ") + " or " + close[len(close)-1]
}
