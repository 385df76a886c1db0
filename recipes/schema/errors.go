package schema

import (
	"errors"
	"fmt"
)

// Kind classifies a problem with a command line.
type Kind string

// Problem kinds.
const (
	UnknownFlag  Kind = "unknown-flag"  // no such flag in this version
	RemovedFlag  Kind = "removed-flag"  // the flag existed in other versions
	BadValue     Kind = "bad-value"     // the value does not parse as the flag's type
	BadChoice    Kind = "bad-choice"    // the value is not one of the choices
	OutOfBounds  Kind = "out-of-bounds" // a numeric bound or minimum length is violated
	Repeated     Kind = "repeated"      // a non-list flag given more than once
	MissingValue Kind = "missing-value" // the flag needs a value and none followed
	StrayToken   Kind = "stray-token"   // a token that belongs to no flag
	BadCommand   Kind = "bad-command"   // the argv does not start with the tool's subcommand
	RuleBroken   Kind = "rule"          // a cross-flag rule is violated
	ScenarioLock Kind = "scenario"      // a scenario lock is violated
	Deprecated   Kind = "deprecated"    // the flag still works but is deprecated (warning)
	Unchecked    Kind = "unchecked"     // passed through the escape hatch (warning)
)

// Severity says whether a problem rejects the command.
type Severity string

// Severities.
const (
	SevError   Severity = "error"
	SevWarning Severity = "warning"
)

// Error is one problem with a command line, tied to the flag it concerns.
type Error struct {
	Tool, Version string
	Kind          Kind
	Severity      Severity // SevError unless the tool accepts the command anyway
	Flag          string   // canonical flag name ("" for stray tokens or the command itself)
	Spelling      string   // the spelling used in the argv, when it differs from Flag
	Value         string   // the offending value, if any
	Suggestion    string   // the closest known spelling (unknown flags) or choice (bad choices)
	Rule          string   // the rule or scenario that was violated
	// Bypassable is true for scenario violations that the override flag (aiperf
	// --unsafe-override) turns into warnings.
	Bypassable bool
	Msg        string
}

// Error renders the problem on one line: "aiperf 0.12.0 has no flag --x (did you mean --y?)"
// or "aiperf 0.12.0: --flag: what is wrong".
func (e *Error) Error() string {
	prefix := e.Tool + " " + e.Version
	if e.Severity == SevWarning {
		prefix = "warning: " + prefix
	}
	if e.Kind == UnknownFlag && e.Msg != "" {
		return fmt.Sprintf("%s: %s", prefix, e.Msg) // ambiguous abbreviation
	}
	if e.Kind == UnknownFlag {
		s := fmt.Sprintf("%s has no flag %s", prefix, e.Spelling)
		if e.Suggestion != "" {
			s += fmt.Sprintf(" (did you mean %s?)", e.Suggestion)
		}
		return s
	}
	name := e.Spelling
	if name == "" {
		name = e.Flag
	}
	if name == "" {
		return fmt.Sprintf("%s: %s", prefix, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", prefix, name, e.Msg)
}

// Problems returns every *Error inside err (joined or wrapped), in order.
func Problems(err error) []*Error {
	if err == nil {
		return nil
	}
	if e, ok := err.(*Error); ok {
		return []*Error{e}
	}
	var out []*Error
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, x := range u.Unwrap() {
			out = append(out, Problems(x)...)
		}
	case interface{ Unwrap() error }:
		out = append(out, Problems(u.Unwrap())...)
	default:
		if e, ok := errors.AsType[*Error](err); ok {
			out = append(out, e)
		}
	}
	return out
}
