package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/cli"
)

// TestReportCompareInputErrors: sweep report --compare checks --tolerance
// as sweep compare does, reads HEAD as sweep compare reads it (one
// without results, or with a result cut short, is refused, not drawn as
// an INCOMPLETE comparison) and exits 2 on a results directory that
// cannot be read, as sweep compare does.
func TestReportCompareInputErrors(t *testing.T) {
	base := stageResults(t, "minimaxm3_tp2_")
	cut := stageResults(t, "minimaxm3_tp2_")
	cutFile := breakResult(t, cut, cutResult)
	empty := t.TempDir()
	missing := filepath.Join(t.TempDir(), "missing")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"tolerance 0", []string{"--compare", base, "--tolerance", "0"}, "--tolerance 0: want a percentage in (0, 100)"},
		{"tolerance -20", []string{"--compare", base, "--tolerance", "-20"}, "--tolerance -20: want"},
		{"tolerance 1000", []string{"--compare", base, "--tolerance", "1000"}, "--tolerance 1000: want"},
		{"tolerance NaN", []string{"--compare", base, "--tolerance", "NaN"}, "--tolerance NaN: want"},
		{"tolerance without compare", []string{"--tolerance", "3"}, "--tolerance goes with --compare"},
		{"empty HEAD", []string{"--compare", empty}, "HEAD " + empty + " holds no result file"},
		{"missing HEAD", []string{"--compare", missing}, "HEAD " + missing + ": " + missing + " does not exist"},
		{"HEAD cut short", []string{"--compare", cut}, cutFile + ":1:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "report")
			code, stdout, stderr := runCLI(t, append([]string{"report", base, "--out", out}, tc.args...)...)
			assert.Equal(t, exitUsage, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			assert.Contains(t, stderr, tc.want)
			assert.NoDirExists(t, out, "no report is written")
		})
	}
	code, _, stderr := runCLI(t, "report", missing)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, missing+" does not exist (give the directory holding the result files)")

	// The same results compared are drawn, whatever the verdict.
	out := filepath.Join(t.TempDir(), "report")
	code, stdout, stderr := runCLI(t, "report", base, "--compare", base, "--tolerance", "3", "--out", out)
	require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	summary, err := os.ReadFile(filepath.Join(out, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(summary), "## Comparison with HEAD")
	assert.Contains(t, string(summary), "-3 % of total")
}

// TestReportUnwritableOut: a report it could not write (a read-only
// disk, no permission) exited 1 quoting the failed write alone; it
// exits 2 naming the directory and the fix, as sweep discover does of a
// sweep directory it cannot make. Any other failure (a full disk) stays
// what it is.
func TestReportUnwritableOut(t *testing.T) {
	dir := "results"
	write := func(errno syscall.Errno) error {
		return fmt.Errorf("write %s/report/index.html: %w", dir, &fs.PathError{Op: "open", Path: dir + "/report/.index.html.tmp", Err: errno})
	}
	for _, tc := range []struct {
		name  string
		out   string
		err   error
		usage bool
		want  string
	}{
		{"read-only, the default", filepath.Join(dir, "report"), write(syscall.EROFS), true,
			"the report's directory results/report (RESULTS_DIR/report without --out): write results/report/index.html: open results/report/.index.html.tmp: read-only file system; give --out a directory this user can make and write"},
		{"no permission, --out", "elsewhere", write(syscall.EACCES), true,
			"--out elsewhere: write results/report/index.html: open results/report/.index.html.tmp: permission denied; give --out a directory this user can make and write"},
		{"a full disk", "elsewhere", write(syscall.ENOSPC), false,
			"write results/report/index.html: open results/report/.index.html.tmp: no space left on device"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := (&reportOptions{Dir: dir, Out: tc.out}).writeError(tc.err)
			assert.Equal(t, tc.want, err.Error())
			assert.Equal(t, tc.usage, cli.IsUsage(err))
		})
	}

	// Where this host has a directory root may not write in (sysfs), the
	// command says so.
	out := "/sys/sweep-report-test"
	if err := os.Mkdir(out, 0o755); !errors.Is(err, fs.ErrPermission) {
		if err == nil {
			require.NoError(t, os.Remove(out))
		}
		t.Skipf("mkdir %s: %v: no unwritable directory to try", out, err)
	}
	code, stdout, stderr := runCLI(t, "report", stageResults(t, "minimaxm3_tp2_"), "--out", out)
	assert.Equal(t, exitUsage, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr, "--out "+out+": ")
	assert.Contains(t, stderr, "; give --out a directory this user can make and write")
}
