// Package cli is sweep's command framework: a tree of commands that each
// bind a fresh pflag flag set, one dispatcher that gives every command the
// same flag rules (a single-value flag given twice is refused, an unknown
// flag or command names the closest real ones), argparse-style list flags
// ("--config-keys a b c"), usage errors and exit codes, and the handling of
// SIGINT, SIGTERM and SIGHUP.
//
//	root := &cli.Command{Name: "sweep", Sub: []*cli.Command{...}}
//	err := cli.Dispatch(ctx, ios, root, []string{"sweep"}, os.Args[1:], nil)
//	os.Exit(cli.ExitCode(ctx, ios.ErrOut, err))
package cli

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
	// Batch marks short-lived commands: Dispatch runs its batch function
	// before them (sweep's batch garbage collector setting) and a signal
	// ends them at once (HandleSignals); subcommands inherit it.
	Batch bool
}

// batchRunning is set while a batch command (Command.Batch) runs: such a
// command holds no process or partial file, so a signal ends it at once.
var batchRunning atomic.Bool

// Dispatch walks the command tree c along args and runs the leaf; path is
// the command path so far (usage lines and messages name it). batch, when
// not nil, runs before a Batch command.
func Dispatch(ctx context.Context, ios *IOStreams, c *Command, path, args []string, batch func()) error {
	if len(c.Sub) > 0 {
		if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
			if len(args) > 1 && args[0] == "help" {
				return Dispatch(ctx, ios, c, path, append(args[1:], "--help"), batch)
			}
			printCommandList(ios.Out, c, path)
			return nil
		}
		for _, s := range c.Sub {
			if s.Name == args[0] {
				s.Batch = s.Batch || c.Batch
				return Dispatch(ctx, ios, s, append(path, s.Name), args[1:], batch)
			}
		}
		hint := ""
		if close := textdiff.Closest(args[0], strings.Split(subNames(c), ", "), 1, max(2, len(args[0])/3)); len(close) > 0 {
			hint = fmt.Sprintf("; did you mean %q?", close[0])
		}
		return FlagErrorf("unknown command %q for %q%s (known: %s)", args[0], strings.Join(path, " "), hint, subNames(c))
	}
	if c.Pick != nil {
		c = c.Pick(args)
	}
	if c.Batch {
		if batch != nil {
			batch()
		}
		batchRunning.Store(true)
		defer batchRunning.Store(false)
	}
	fs, runF := c.Flags()
	// Named for the messages of its parse errors (flagParseError): the
	// command path after prog, which ExitCode prints first.
	fs.Init(strings.Join(path[min(1, len(path)):], " "), pflag.ContinueOnError)
	fs.SetOutput(ios.ErrOut)
	fs.SortFlags = false
	fs.Usage = func() { printLeafHelp(ios.Out, c, path, fs) }
	guardFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return flagParseError(fs, err)
	}
	return runF(ctx, fs.Args())
}

// PickByFlag is a Command.Pick for a command with a second mode: the
// command with, when args give --name (before a "--"), else without.
func PickByFlag(name string, with, without *Command) func(args []string) *Command {
	return func(args []string) *Command {
		for _, a := range args {
			if a == "--" {
				break
			}
			if a == "--"+name || strings.HasPrefix(a, "--"+name+"=") {
				return with
			}
		}
		return without
	}
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

// WrapWords joins words with spaces into lines of at most 78 columns, for
// lists in help texts.
func WrapWords(words []string) string {
	var b strings.Builder
	line := 0
	for _, f := range words {
		if line+len(f)+1 > 78 {
			b.WriteString("\n")
			line = 0
		}
		if line > 0 {
			b.WriteString(" ")
			line++
		}
		b.WriteString(f)
		line += len(f)
	}
	return b.String()
}
