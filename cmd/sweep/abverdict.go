package main

import (
	"fmt"

	"sweep/sweep/abgate"
)

// Exit codes of "sweep ab compare" and "sweep ab run" beyond exitOK, exitError and exitUsage.
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
