package main

import (
	"context"
	"encoding/json"

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

func schemaListRun(_ context.Context, o *schemaListOptions) error {
	cat, err := schema.Embedded()
	if err != nil {
		return err
	}
	rows := cat.Summaries()
	if o.JSON {
		enc := json.NewEncoder(o.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	return schema.WriteSummaries(o.IO.Out, rows)
}
