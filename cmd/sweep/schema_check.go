package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"sweep/internal/inputfile"
	"sweep/recipes/schema"
)

// schemaCheckOptions are the inputs of "sweep schema check".
type schemaCheckOptions struct {
	IO       *IOStreams
	Schema   string
	HelpFile string        // a recorded --help output
	Exec     string        // a program to run with --help
	ExecArgs []string      // arguments between the program and the help request
	Timeout  time.Duration // for Exec
	Columns  int           // terminal width given to Exec (COLUMNS)
	Verbose  bool
}

func newSchemaCheckCmd(ios *IOStreams, runF func(context.Context, *schemaCheckOptions) error) *Command {
	if runF == nil {
		runF = schemaCheckRun
	}
	return &Command{
		Name:  "check",
		Args:  "TOOL[@VERSION]",
		Short: "Compare a schema with a tool's --help and list flags added, removed or changed",
		Long:  helpText("schema_check"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &schemaCheckOptions{IO: ios}
			fs := pflag.NewFlagSet("schema check", pflag.ContinueOnError)
			fs.StringVar(&o.HelpFile, "help-file", "", "read the help text from `FILE` (\"-\" for stdin)")
			fs.StringVar(&o.Exec, "exec", "", "run `PATH` [ARGS after --] with the tool's subcommand and --help")
			fs.DurationVar(&o.Timeout, "timeout", 2*time.Minute, "time limit for --exec")
			fs.IntVar(&o.Columns, "columns", 250, "terminal width (COLUMNS) given to --exec; wide output keeps one row per option")
			fs.BoolVarP(&o.Verbose, "verbose", "v", false, "also list help rows a partial schema does not cover")
			return fs, func(ctx context.Context, args []string) error {
				if len(args) == 0 {
					return flagErrorf("schema check needs TOOL[@VERSION]")
				}
				o.Schema = args[0]
				o.ExecArgs = args[1:]
				if (o.HelpFile == "") == (o.Exec == "") {
					return flagErrorf("schema check needs exactly one of --help-file or --exec")
				}
				if o.Timeout <= 0 {
					return flagErrorf("schema check: --timeout %s: want a positive duration such as 2m (the time --exec's program has to print its help)", o.Timeout)
				}
				if o.HelpFile != "" && len(o.ExecArgs) > 0 {
					return flagErrorf("arguments after TOOL are only for --exec, got %q", o.ExecArgs)
				}
				return runF(ctx, o)
			}
		},
	}
}

func schemaCheckRun(ctx context.Context, o *schemaCheckOptions) error {
	s, err := resolveSchema(o.Schema)
	if err != nil {
		return err
	}
	var text []byte
	source := o.HelpFile
	switch {
	case o.HelpFile == "-":
		if text, err = inputfile.ReadFrom(o.IO.In, "stdin", inputfile.Text); err != nil {
			return inputError(fmt.Errorf("--help-file -: read help from stdin: %w", err))
		}
		source = "stdin"
	case o.HelpFile != "":
		if text, err = inputfile.Read(o.HelpFile, inputfile.Text); err != nil {
			return inputError(fmt.Errorf("--help-file: %w", err))
		}
	default:
		if text, source, err = s.RunHelp(ctx, o.Exec, o.ExecArgs, o.Timeout, o.Columns); err != nil {
			return err
		}
	}
	rows, err := schema.ParseHelp(s.Family, string(text))
	if err != nil && o.HelpFile != "" {
		// A recorded help that is not one is an input error, not drift.
		return inputError(fmt.Errorf("--help-file %s: %w: give the recorded output of the tool's --help", source, err))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	d := s.Compare(rows)
	for _, l := range d.Lines() {
		fmt.Fprintln(o.IO.Out, l)
	}
	if o.Verbose {
		for _, h := range d.Uncovered {
			fmt.Fprintf(o.IO.Out, "not covered: %s (help line %d)\n", strings.Join(h.Names, " "), h.Line)
		}
	}
	summary := d.Summary(source, len(rows))
	if d.Empty() {
		fmt.Fprintln(o.IO.ErrOut, summary+", no drift")
		return nil
	}
	return &exitCodeError{Code: exitError, Err: fmt.Errorf("%s: drift: %d added, %d removed, %d changed", summary, len(d.Added), len(d.Removed), len(d.Changed))}
}
