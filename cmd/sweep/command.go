package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/spf13/pflag"

	"sweep/internal/textdiff"
)

// IOStreams carries every input and output of a command; tests use buffers.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer // results
	ErrOut io.Writer // progress, warnings, errors
}

// Command is one subcommand: a name, its help and a function that parses
// its own flags and runs.
type Command struct {
	Name  string // as typed after "sweep"
	Short string // one line for the command list
	Long  string // shown by "sweep NAME --help" above the flags
	// Args names the positional arguments in the usage line, e.g.
	// "TOOL[@VERSION] [FLAG...]"; empty for commands that take none.
	Args string
	// Flags returns a fresh flag set bound to a fresh options value and the
	// function that runs with those options after parsing.
	Flags func() (*pflag.FlagSet, func(ctx context.Context, args []string) error)
	// Sub lists subcommands ("sweep matrix test-config"); a command with
	// Sub has no Flags of its own.
	Sub []*Command
	// Pick, when set, chooses the command that parses args (a command
	// with two modes whose flags differ, e.g. "official --propose").
	Pick func(args []string) *Command
	// Batch marks short-lived commands that run with the batch garbage
	// collector setting (raiseGCPercent); subcommands inherit it.
	Batch bool
}

// batchRunning is set while a batch command (Command.Batch) runs: such a
// command holds no process or partial file, so a signal ends it at once.
var batchRunning atomic.Bool

// dispatch walks the command tree along args and runs the leaf.
func dispatch(ctx context.Context, ios *IOStreams, c *Command, path, args []string) error {
	if len(c.Sub) > 0 {
		if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
			if len(args) > 1 && args[0] == "help" {
				return dispatch(ctx, ios, c, path, append(args[1:], "--help"))
			}
			printCommandList(ios.Out, c, path)
			return nil
		}
		for _, s := range c.Sub {
			if s.Name == args[0] {
				s.Batch = s.Batch || c.Batch
				return dispatch(ctx, ios, s, append(path, s.Name), args[1:])
			}
		}
		hint := ""
		if close := textdiff.Closest(args[0], strings.Split(subNames(c), ", "), 1, max(2, len(args[0])/3)); len(close) > 0 {
			hint = fmt.Sprintf("; did you mean %q?", close[0])
		}
		return flagErrorf("unknown command %q for %q%s (known: %s)", args[0], strings.Join(path, " "), hint, subNames(c))
	}
	if c.Pick != nil {
		c = c.Pick(args)
	}
	if c.Batch {
		raiseGCPercent()
		batchRunning.Store(true)
		defer batchRunning.Store(false)
	}
	fs, runF := c.Flags()
	fs.SetOutput(ios.ErrOut)
	fs.SortFlags = false
	fs.Usage = func() { printLeafHelp(ios.Out, c, path, fs) }
	guardFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return flagParseError(fs, strings.Join(path, " "), err)
	}
	return runF(ctx, fs.Args())
}

func subNames(c *Command) string {
	names := make([]string, 0, len(c.Sub))
	for _, s := range c.Sub {
		names = append(names, s.Name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func printCommandList(w io.Writer, c *Command, path []string) {
	if c.Long != "" {
		fmt.Fprintf(w, "%s\n\n", strings.TrimSpace(c.Long))
	}
	fmt.Fprintf(w, "Usage:\n  %s <command> [flags]\n\nCommands:\n", strings.Join(path, " "))
	width := 0
	for _, s := range c.Sub {
		width = max(width, len(s.Name))
	}
	for _, s := range c.Sub {
		fmt.Fprintf(w, "  %-*s  %s\n", width, s.Name, s.Short)
	}
	fmt.Fprintf(w, "\nRun '%s <command> --help' for a command's flags.\n", strings.Join(path, " "))
}

func printLeafHelp(w io.Writer, c *Command, path []string, fs *pflag.FlagSet) {
	fmt.Fprintf(w, "%s\n\n", c.Short)
	if c.Long != "" {
		fmt.Fprintf(w, "%s\n\n", strings.TrimSpace(c.Long))
	}
	usage := strings.Join(path, " ") + " [flags]"
	if c.Args != "" {
		usage += " " + c.Args
	}
	fmt.Fprintf(w, "Usage:\n  %s\n", usage)
	if fs.HasFlags() {
		fmt.Fprintf(w, "\nFlags:\n%s", fs.FlagUsages())
	}
}
