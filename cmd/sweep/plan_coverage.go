package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"sweep/configs/matrix"
	"sweep/recipes"
)

// noAgenticRows is the coverage reason of a key without agentic-coding rows.
const noAgenticRows = "not supported yet: no agentic-coding scenario (fixed-seq-len only); sweep plans agentic-coding points only"

// planCoverage prints, for every key --config-keys names (default all),
// whether its points plan, and why not.
func planCoverage(ctx context.Context, o *planOptions) error {
	g, err := o.Inputs.generator()
	if err != nil {
		return err
	}
	patterns := o.ConfigKeys
	if len(patterns) == 0 {
		patterns = []string{"*"}
	}
	rows, keys, err := agenticRows(g, patterns, o.Conc, matrix.EvalOptions{NoEvals: !o.Eval, EvalsOnly: o.Eval})
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	opts := o.Plan
	opts.Runners = g.Runners
	cov, err := recipes.Coverage(rows, keys, noAgenticRows, opts)
	if err != nil {
		return err
	}
	if o.Format == "json" {
		return writeIndentedJSON(o.IO.Out, cov)
	}
	return writeCoverage(o, cov)
}

// writeCoverage prints the coverage table and a summary line per group:
// keys with agentic rows, then the others.
func writeCoverage(o *planOptions, cov []recipes.KeyCoverage) error {
	tw := tabwriter.NewWriter(o.IO.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tSTATUS\tPOINTS\tREASON")
	count := map[recipes.Status]int{}
	other := 0
	for _, c := range cov {
		if c.Points == 0 && c.Reason == noAgenticRows {
			other++
			continue
		}
		count[c.Status]++
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", c.Key, c.Status, c.Points, c.Reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(o.IO.Out, "\n%d agentic keys: %d %s, %d %s, %d %s; %d other keys without agentic-coding rows (%s)\n",
		len(cov)-other, count[recipes.Planned], recipes.Planned, count[recipes.NotSupported], recipes.NotSupported,
		count[recipes.Failing], recipes.Failing, other, noAgenticRows)
	return err
}
