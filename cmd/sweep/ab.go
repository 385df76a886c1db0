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

// newABCmd groups the accuracy A/B commands.
func newABCmd(ios *IOStreams) *Command {
	return &Command{
		Name:  "ab",
		Short: "Compare the BFCL function-calling accuracy of two serving arms of one model",
		Long: `Accuracy A/B gate: two serving arms of one model (a router in front of vLLM
against vLLM directly, two images, two vendors) answer BFCL, and the gate
fails only on a drop beyond a tolerance that the data can support.`,
		Sub: []*Command{
			newABCompareCmd(ios, nil),
			newABRunCmd(ios, nil),
			newABCalibrateCmd(ios, nil),
			newABLegsCmd(ios, nil),
		},
	}
}

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
