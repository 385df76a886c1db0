package schema

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"sweep/internal/plural"
)

// TypeText is the flag's type as `sweep schema show` prints it:
// "list[int]", "int or comma sweep", "bool", ...
func (f *Flag) TypeText() string {
	switch {
	case f.Type == List:
		item := f.Item
		if item == "" {
			item = String
		}
		return "list[" + string(item) + "]"
	case f.Sweep:
		return string(f.Type) + " or comma sweep"
	}
	return string(f.Type)
}

// defaultText is a default value as JSON without quotes, "-" for none.
func defaultText(d any) string {
	if d == nil {
		return "-"
	}
	if b, err := json.Marshal(d); err == nil {
		return strings.Trim(string(b), `"`)
	}
	return fmt.Sprint(d)
}

// WriteFlagTable writes one line per flag of s: its name, type
// (TypeText, "(removed)" for a removed flag), default and other
// spellings.
func (s *Schema) WriteFlagTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FLAG\tTYPE\tDEFAULT\tALSO")
	for _, f := range s.Flags {
		also := strings.Join(f.Spellings()[1:], " ")
		typ := f.TypeText()
		if f.Removed != "" {
			typ += " (removed)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Name, typ, defaultText(f.Default), also)
	}
	return tw.Flush()
}

// WriteFlag writes everything s knows of its flag f: spellings, type,
// choices, default, bounds, value traits, group, deprecation, removal,
// note, and the rules and scenario locks that name it.
func (s *Schema) WriteFlag(w io.Writer, f *Flag) {
	fmt.Fprintf(w, "%s  (%s)\n", f.Name, s.ID())
	if sp := f.Spellings(); len(sp) > 1 {
		fmt.Fprintf(w, "  spellings: %s\n", strings.Join(sp, ", "))
	}
	fmt.Fprintf(w, "  type:      %s\n", f.TypeText())
	if len(f.Choices) > 0 {
		how := "exact match"
		switch {
		case f.OpenChoices:
			how = "examples; any value is accepted"
		case s.Family == Cyclopts && !f.Exact:
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
	if f.elemType() == Path {
		traits = append(traits, map[bool]string{true: "a path the tool reads", false: "a path the tool writes (a plan's must lie in its result directory)"}[f.Reads])
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
			if l.Flag == f.Name || l.Flag == "" && l.Kind == LockSingle && f.Sweep {
				fmt.Fprintf(w, "  scenario %s (%s): %s\n", sc.Name, l.Kind, l.Message)
			}
		}
	}
}
