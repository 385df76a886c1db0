package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// Lists lets list flags take several values after one flag, like
// argparse's nargs="+" in InferenceX's tools: "--config-keys a b c" is
// "--config-keys a --config-keys b --config-keys c". The flag set must
// stop at the first positional word (Finish sets that up); ParseRest then
// gives the words that follow a list flag to that flag and parses the
// flags after them.
type Lists struct {
	last  string // name of the flag parsed most recently
	lists map[string]pflag.Value
}

// NewLists returns the list flags of one flag set.
func NewLists() *Lists {
	return &Lists{lists: map[string]pflag.Value{}}
}

// Strings binds a list flag of strings.
func (l *Lists) Strings(fs *pflag.FlagSet, p *[]string, name, usage string) {
	v := stringList{p}
	fs.Var(v, name, usage)
	l.lists[name] = v
}

// Ints binds a list flag of integers.
func (l *Lists) Ints(fs *pflag.FlagSet, p *[]int, name, usage string) {
	v := intList{p}
	fs.Var(v, name, usage)
	l.lists[name] = v
}

// stringList is a list flag: each value (comma-separated values count
// separately) is appended.
type stringList struct{ p *[]string }

func (v stringList) String() string { return strings.Join(*v.p, ",") }

func (v stringList) Type() string { return "strings" }

func (v stringList) Set(s string) error {
	for x := range strings.SplitSeq(s, ",") {
		if x == "" {
			return fmt.Errorf("empty value in %q", s)
		}
		*v.p = append(*v.p, x)
	}
	return nil
}

// intList is an integer list flag.
type intList struct{ p *[]int }

func (v intList) Type() string { return "ints" }

func (v intList) String() string {
	parts := make([]string, len(*v.p))
	for i, x := range *v.p {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}

func (v intList) Set(s string) error {
	for x := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil {
			return fmt.Errorf("%q is not an integer", x)
		}
		*v.p = append(*v.p, n)
	}
	return nil
}

// Finish wraps every flag so the most recently parsed one is known, and
// stops parsing at the first positional word.
func (l *Lists) Finish(fs *pflag.FlagSet) {
	fs.SetInterspersed(false)
	fs.VisitAll(func(f *pflag.Flag) {
		f.Value = &lastSetRecorder{Value: f.Value, name: f.Name, l: l}
	})
}

// lastSetRecorder is a flag value that records that its flag was set.
type lastSetRecorder struct {
	pflag.Value
	name string
	l    *Lists
}

// Unwrap is the flag's own value (a *Float, say).
func (r *lastSetRecorder) Unwrap() pflag.Value { return r.Value }

func (r *lastSetRecorder) Set(s string) error {
	r.l.last = r.name
	return r.Value.Set(s)
}

// ParseRest consumes the words left after parsing stopped.
func (l *Lists) ParseRest(fs *pflag.FlagSet, args []string) error {
	for len(args) > 0 {
		list, ok := l.lists[l.last]
		for len(args) > 0 && !isFlagWord(args[0]) {
			if !ok {
				if l.last == "" {
					return FlagErrorf("unexpected argument %q", args[0])
				}
				return FlagErrorf("unexpected argument %q after --%s, which takes one value", args[0], l.last)
			}
			if err := list.Set(args[0]); err != nil {
				if re, ok := errors.AsType[*RangeError](err); ok {
					return FlagErrorf("--%s %w", l.last, re)
				}
				return FlagErrorf("invalid argument %q for --%s: %v", args[0], l.last, err)
			}
			args = args[1:]
		}
		if len(args) == 0 {
			break
		}
		if args[0] == "--" {
			return FlagErrorf("unexpected arguments after --: %q", args[1:])
		}
		if err := fs.Parse(args); err != nil {
			return flagParseError(fs, err)
		}
		args = fs.Args()
	}
	return nil
}

// isFlagWord reports whether a command-line word is a flag rather than a
// value; negative numbers are values.
func isFlagWord(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	if s == "--" {
		return true
	}
	if c := s[1]; c >= '0' && c <= '9' {
		return false
	}
	return true
}

// OptInt is an int flag whose absence is kept: nil until set.
type OptInt struct{ P **int }

func (o OptInt) String() string {
	if *o.P == nil {
		return ""
	}
	return strconv.Itoa(**o.P)
}

func (o OptInt) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q is not an integer", s)
	}
	*o.P = &v
	return nil
}

func (o OptInt) Type() string { return "int" }
