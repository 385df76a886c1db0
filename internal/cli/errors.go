package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/spf13/pflag"

	"sweep/internal/usage"
)

// Exit codes decided by ExitCode.
const (
	ExitOK        = 0
	ExitError     = 1 // the command ran and failed (invalid input, failed stage)
	ExitUsage     = 2 // bad flags or arguments
	ExitCancelled = 130
)

// prog starts every message the framework prints.
const prog = "sweep"

// FlagError is a usage mistake: ExitCode prints it with a hint and
// returns ExitUsage. It is usage.Error, which libraries return for a
// mistake in what they were asked.
type FlagError = usage.Error

// FlagErrorf makes a FlagError.
func FlagErrorf(format string, a ...any) error { return usage.Errorf(format, a...) }

// IsUsage reports whether err is a usage mistake (a FlagError in its
// chain).
func IsUsage(err error) bool {
	_, ok := errors.AsType[*FlagError](err)
	return ok
}

// Refusef makes a usage error that refuses what was given and names the
// fix (usage.Refusef): ExitUsage, with no hint to run --help.
func Refusef(format string, a ...any) error { return usage.Refusef(format, a...) }

// CheckOutDir refuses a directory given to --flag that cannot be made
// (a usage error naming the fix: Refusef), before anything is made
// under it: the path or one of its parents is a file, or its parent
// directory does not exist (a typo should not create a tree somewhere).
// A path that does not exist yet is fine; whether it can be written is
// found when it is made.
func CheckOutDir(flag, path string) error {
	path = filepath.Clean(path)
	parent := filepath.Dir(path)
	for p := path; ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		switch {
		case err == nil && !st.IsDir() && p == path:
			return Refusef("--%s %s: it is a file, not a directory: give a directory (one that does not exist yet is made)", flag, path)
		case err == nil && !st.IsDir():
			return Refusef("--%s %s: %s is a file, not a directory: give a path under a directory", flag, path, p)
		case err == nil && p != path && p != parent:
			return Refusef("--%s %s: the parent directory %s does not exist: make it first, or give a path under a directory that exists", flag, path, parent)
		case err == nil:
			return nil
		case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return nil // unreadable: making it says why
		case filepath.Dir(p) == p:
			return nil
		}
	}
}

// ExitCodeError lets a command pick its exit code while still printing Err.
type ExitCodeError struct {
	Code int
	Err  error
}

func (e *ExitCodeError) Error() string { return e.Err.Error() }

func (e *ExitCodeError) Unwrap() error { return e.Err }

// ExitCode is the process's exit code for a command's error, printed to
// errOut: ExitOK for none (or a --help), ExitCancelled when ctx was
// cancelled, ExitUsage for a FlagError (with a hint to run --help, but
// for a refusal that names its fix: usage.IsRefusal), the code of an
// ExitCodeError, else ExitError.
func ExitCode(ctx context.Context, errOut io.Writer, err error) int {
	switch {
	case err == nil, errors.Is(err, pflag.ErrHelp):
		return ExitOK
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		fmt.Fprintln(errOut, prog+": cancelled")
		return ExitCancelled
	}
	fmt.Fprintf(errOut, "%s: %v\n", prog, err)
	if IsUsage(err) {
		if !usage.IsRefusal(err) {
			fmt.Fprintln(errOut, "run with --help for usage")
		}
		return ExitUsage
	}
	if ce, ok := errors.AsType[*ExitCodeError](err); ok && ce != nil {
		return ce.Code
	}
	return ExitError
}
