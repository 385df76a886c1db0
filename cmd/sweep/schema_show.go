package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
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
		return s.WriteFlagTable(o.IO.Out)
	}
	missing := s.WriteFlags(o.IO.Out, o.Flags)
	if len(missing) > 0 {
		return &exitCodeError{Code: exitError, Err: fmt.Errorf("%s: unknown flag(s) %s", s.ID(), strings.Join(missing, ", "))}
	}
	return nil
}
