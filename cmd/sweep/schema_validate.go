package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/pflag"

	"sweep/internal/plural"
	"sweep/recipes/schema"
)

// schemaValidateOptions are the inputs of "sweep schema validate".
type schemaValidateOptions struct {
	IO     *IOStreams
	Schema string   // TOOL or TOOL@VERSION
	Args   []string // the command line after the program name
	JSON   bool
}

func newSchemaValidateCmd(ios *IOStreams, runF func(context.Context, *schemaValidateOptions) error) *Command {
	if runF == nil {
		runF = schemaValidateRun
	}
	return &Command{
		Name:  "validate",
		Args:  "TOOL[@VERSION] [--] COMMAND...",
		Short: "Check a command line against a tool's schema; print it normalised or list every problem",
		Long:  helpText("schema_validate"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &schemaValidateOptions{IO: ios}
			fs := pflag.NewFlagSet("schema validate", pflag.ContinueOnError)
			fs.BoolVar(&o.JSON, "json", false, "print the normalised argv (or the problems) as JSON")
			// Everything after TOOL belongs to the checked command, flags included.
			fs.SetInterspersed(false)
			return fs, func(ctx context.Context, args []string) error {
				if len(args) == 0 {
					return flagErrorf("schema validate needs TOOL[@VERSION] and the command line after '--'")
				}
				o.Schema, o.Args = toolArgs(args)
				return runF(ctx, o)
			}
		},
	}
}

func schemaValidateRun(_ context.Context, o *schemaValidateOptions) error {
	s, err := resolveSchema(o.Schema)
	if err != nil {
		return err
	}
	p, perr := s.Parse(s.TrimProgram(o.Args))
	probs := schema.Problems(perr)
	if o.JSON {
		enc := json.NewEncoder(o.IO.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(s.NewValidation(p, perr)); err != nil {
			return err
		}
	} else {
		for _, w := range p.Warnings {
			fmt.Fprintln(o.IO.ErrOut, w.Error())
		}
		if perr == nil {
			if p.Help {
				fmt.Fprintf(o.IO.ErrOut, "%s: --help requested; the tool prints its help and exits 0\n", s.ID())
			}
			fmt.Fprintln(o.IO.Out, schema.ShellJoin(p.Args()))
			return nil
		}
		for _, e := range probs {
			fmt.Fprintln(o.IO.Out, e.Error())
		}
	}
	if perr != nil {
		return &exitCodeError{Code: exitError, Err: fmt.Errorf("%s: %s in the command line", s.ID(), plural.Count(len(probs), "problem", "problems"))}
	}
	return nil
}
