package main

import (
	"sweep/internal/cli"
)

// newOfficialCmd is "sweep official": run the selected points at official
// durations, or with --propose edit the official conc-lists from a
// discovery (official_propose.go).
func newOfficialCmd(ios *IOStreams) *Command {
	c := newOfficialRunCmd(ios, nil)
	c.Pick = cli.PickByFlag("propose", newOfficialProposeCmd(ios, nil), c)
	return c
}
