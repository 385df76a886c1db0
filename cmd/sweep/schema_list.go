package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"sweep/recipes/schema"
)

// schemaListOptions are the inputs of "sweep schema list".
type schemaListOptions struct {
	IO   *IOStreams
	JSON bool
}

func newSchemaListCmd(ios *IOStreams, runF func(context.Context, *schemaListOptions) error) *Command {
	if runF == nil {
		runF = schemaListRun
	}
	return &Command{
		Name:  "list",
		Short: "List the embedded schemas: tool, version, flag counts, rules and scenarios",
		Long:  helpText("schema_list"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &schemaListOptions{IO: ios}
			fs := pflag.NewFlagSet("schema list", pflag.ContinueOnError)
			fs.BoolVar(&o.JSON, "json", false, "print a JSON array instead of a table")
			return fs, func(ctx context.Context, args []string) error {
				if len(args) > 0 {
					return flagErrorf("schema list takes no arguments, got %q", args)
				}
				return runF(ctx, o)
			}
		},
	}
}

type schemaListRow struct {
	Tool      string   `json:"tool"`
	Version   string   `json:"version"`
	Default   bool     `json:"default"`
	Complete  bool     `json:"complete"`
	Flags     int      `json:"flags"`
	Spellings int      `json:"spellings"`
	Rules     int      `json:"rules"`
	Scenarios []string `json:"scenarios"`
}

func schemaListRun(_ context.Context, o *schemaListOptions) error {
	cat, err := schema.Embedded()
	if err != nil {
		return err
	}
	var rows []schemaListRow
	for _, s := range cat.All() {
		r := schemaListRow{Tool: s.Tool, Version: s.Version, Default: s.Default, Complete: s.Complete, Flags: len(s.Flags), Rules: len(s.Rules), Scenarios: []string{}}
		for _, f := range s.Flags {
			r.Spellings += len(f.Spellings())
		}
		for _, sc := range s.Scenarios {
			r.Scenarios = append(r.Scenarios, sc.Name)
		}
		rows = append(rows, r)
	}
	if o.JSON {
		enc := json.NewEncoder(o.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tVERSION\tDEFAULT\tFLAGS\tSPELLINGS\tRULES\tSCENARIOS\tCOVERAGE")
	for _, r := range rows {
		def, cov, scen := "", "partial", "-"
		if r.Default {
			def = "yes"
		}
		if r.Complete {
			cov = "complete"
		}
		if len(r.Scenarios) > 0 {
			scen = strings.Join(r.Scenarios, ",")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", r.Tool, r.Version, def, r.Flags, r.Spellings, r.Rules, scen, cov)
	}
	return tw.Flush()
}
