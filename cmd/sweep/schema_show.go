package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"sweep/internal/plural"
	"sweep/recipes/schema"
)

// schemaShowOptions are the inputs of "sweep schema show".
type schemaShowOptions struct {
	IO     *IOStreams
	Schema string
	Flags  []string // empty: every flag
}

func newSchemaShowCmd(ios *IOStreams, runF func(context.Context, *schemaShowOptions) error) *Command {
	if runF == nil {
		runF = schemaShowRun
	}
	return &Command{
		Name:  "show",
		Args:  "TOOL[@VERSION] [FLAG...]",
		Short: "Show a schema's flags, or everything known about some of them",
		Long:  helpText("schema_show"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &schemaShowOptions{IO: ios}
			fs := pflag.NewFlagSet("schema show", pflag.ContinueOnError)
			fs.SetInterspersed(false) // FLAG arguments look like flags
			return fs, func(ctx context.Context, args []string) error {
				if len(args) == 0 {
					return flagErrorf("schema show needs TOOL[@VERSION]")
				}
				o.Schema, o.Flags = toolArgs(args)
				return runF(ctx, o)
			}
		},
	}
}

func schemaShowRun(_ context.Context, o *schemaShowOptions) error {
	s, err := resolveSchema(o.Schema)
	if err != nil {
		return err
	}
	if len(o.Flags) == 0 {
		tw := tabwriter.NewWriter(o.IO.Out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "FLAG\tTYPE\tDEFAULT\tALSO")
		for _, f := range s.Flags {
			also := strings.Join(f.Spellings()[1:], " ")
			typ := flagTypeText(&f)
			if f.Removed != "" {
				typ += " (removed)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Name, typ, defaultText(f.Default), also)
		}
		return tw.Flush()
	}
	var missing []string
	for i, name := range o.Flags {
		f, ok := s.Lookup(name)
		if !ok {
			line := fmt.Sprintf("%s has no flag %s", s.ID(), name)
			if sug := s.Suggest(name); sug != "" {
				line += fmt.Sprintf(" (did you mean %s?)", sug)
			}
			fmt.Fprintln(o.IO.Out, line)
			missing = append(missing, name)
			continue
		}
		if i > 0 {
			fmt.Fprintln(o.IO.Out)
		}
		showFlag(o.IO, s, f)
	}
	if len(missing) > 0 {
		return &exitCodeError{Code: exitError, Err: fmt.Errorf("%s: unknown flag(s) %s", s.ID(), strings.Join(missing, ", "))}
	}
	return nil
}

func flagTypeText(f *schema.Flag) string {
	switch {
	case f.Type == schema.List:
		item := f.Item
		if item == "" {
			item = schema.String
		}
		return "list[" + string(item) + "]"
	case f.Sweep:
		return string(f.Type) + " or comma sweep"
	}
	return string(f.Type)
}

func defaultText(d any) string {
	if d == nil {
		return "-"
	}
	if b, err := json.Marshal(d); err == nil {
		return strings.Trim(string(b), `"`)
	}
	return fmt.Sprint(d)
}

func showFlag(ios *IOStreams, s *schema.Schema, f *schema.Flag) {
	w := ios.Out
	fmt.Fprintf(w, "%s  (%s)\n", f.Name, s.ID())
	if sp := f.Spellings(); len(sp) > 1 {
		fmt.Fprintf(w, "  spellings: %s\n", strings.Join(sp, ", "))
	}
	fmt.Fprintf(w, "  type:      %s\n", flagTypeText(f))
	if len(f.Choices) > 0 {
		how := "exact match"
		switch {
		case f.OpenChoices:
			how = "examples; any value is accepted"
		case s.Family == schema.Cyclopts && !f.Exact:
			how = "any case, '-' and '_' equal"
		}
		fmt.Fprintf(w, "  choices:   %s (%s)\n", strings.Join(f.Choices, ", "), how)
	}
	fmt.Fprintf(w, "  default:   %s\n", defaultText(f.Default))
	var bounds []string
	for _, b := range []struct {
		op string
		v  *float64
	}{{">", f.Gt}, {">=", f.Ge}, {"<", f.Lt}, {"<=", f.Le}} {
		if b.v != nil {
			bounds = append(bounds, fmt.Sprintf("%s %g", b.op, *b.v))
		}
	}
	if f.MinItems > 0 {
		bounds = append(bounds, "at least "+plural.Count(f.MinItems, "item", "items"))
	}
	if len(bounds) > 0 {
		fmt.Fprintf(w, "  bounds:    %s\n", strings.Join(bounds, ", "))
	}
	var traits []string
	if f.Repeatable {
		traits = append(traits, "repeat to add items")
	}
	if f.Multi {
		traits = append(traits, "several values per occurrence")
	}
	if f.Comma {
		traits = append(traits, "comma-separated values")
	}
	if f.Sweep {
		traits = append(traits, "a comma list runs a sweep")
	}
	if f.Dotted {
		traits = append(traits, "also --flag.key value")
	}
	if len(traits) > 0 {
		fmt.Fprintf(w, "  values:    %s\n", strings.Join(traits, "; "))
	}
	if f.Group != "" {
		fmt.Fprintf(w, "  group:     %s\n", f.Group)
	}
	if f.Deprecated != "" {
		fmt.Fprintf(w, "  deprecated: %s\n", f.Deprecated)
	}
	if f.Removed != "" {
		fmt.Fprintf(w, "  removed:   %s\n", f.Removed)
	}
	if f.Note != "" {
		fmt.Fprintf(w, "  note:      %s\n", f.Note)
	}
	for _, r := range s.Rules {
		if slices.Contains(r.Flags, f.Name) || slices.Contains(r.Needs, f.Name) {
			fmt.Fprintf(w, "  rule %s (%s): %s\n", r.ID, r.Kind, r.Message)
		}
	}
	for _, sc := range s.Scenarios {
		for _, l := range sc.Locks {
			if l.Flag == f.Name || l.Flag == "" && l.Kind == schema.LockSingle && f.Sweep {
				fmt.Fprintf(w, "  scenario %s (%s): %s\n", sc.Name, l.Kind, l.Message)
			}
		}
	}
}
