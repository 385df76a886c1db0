package main

import (
	"context"
	"strings"
)

// newOfficialCmd is "sweep official": run the selected points at official
// durations, or with --propose edit the official conc-lists from a
// discovery (official_propose.go).
func newOfficialCmd(ios *IOStreams, runF func(context.Context, *officialOptions) error) *Command {
	propose := newOfficialProposeCmd(ios, nil)
	c := newOfficialRunCmd(ios, runF)
	c.Pick = func(args []string) *Command {
		for _, a := range args {
			if a == "--" {
				break
			}
			if a == "--propose" || strings.HasPrefix(a, "--propose=") {
				return propose
			}
		}
		return c
	}
	return c
}
