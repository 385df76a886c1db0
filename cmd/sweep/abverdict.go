package main

import (
	"errors"
	"fmt"

	"sweep/sweep/abgate"
)

// Exit codes of "sweep ab compare" and "sweep ab run" beyond exitOK and
// exitUsage. Exit 1 is REGRESSION's alone, as in "sweep compare": the
// nightly workflow reads it so.
const (
	exitABRegression   = 1
	exitABInconclusive = 3
	exitABIncomplete   = 4
)

// abVerdictError maps a report's verdict to the ab commands' exit code:
// nil for PASS (its verdict line goes to ErrOut when Out holds JSON), an
// exitCodeError naming the verdict otherwise.
func abVerdictError(ios *IOStreams, command, format string, rep *abgate.Report) error {
	code := map[abgate.Decision]int{
		abgate.Passed:       exitOK,
		abgate.Regression:   exitABRegression,
		abgate.Inconclusive: exitABInconclusive,
		abgate.Incomplete:   exitABIncomplete,
	}[rep.Verdict]
	if code == exitOK {
		if format == "json" {
			fmt.Fprintln(ios.ErrOut, abgate.VerdictLine(rep))
		}
		return nil
	}
	return &exitCodeError{Code: code, Err: fmt.Errorf("%s: %s", command, abgate.VerdictLine(rep))}
}

// abNoVerdict makes err, an ab command's error that is neither a verdict's
// exit code nor an interrupt, exit with exitUsage, as "sweep compare" does
// when no verdict is drawn: a usage mistake, an input file or an --out
// that cannot be used, a report that cannot be written (a full disk
// included). Without it such an error would exit 1, REGRESSION's code.
func abNoVerdict(err error) error {
	if _, ok := errors.AsType[*exitCodeError](err); ok {
		return err
	}
	return inputError(err)
}
