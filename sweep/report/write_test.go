package report

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/usage"
	"sweep/sweep/compare"
	"sweep/sweep/knee"
)

// TestStaleChartsRemoved: a report written where an earlier one with a
// comparison was leaves no comparison chart behind (they stayed, linked
// from nothing); files the report does not name so are left.
func TestStaleChartsRemoved(t *testing.T) {
	rep, out := buildKeySweep(t)
	head, _ := buildKeySweep(t)
	arms := make([]*knee.Arm, len(rep.Results))
	for i, r := range rep.Results {
		arms[i] = r.Arm
	}
	plain := *rep
	plain.Charts = slices.Clone(rep.Charts)
	require.NoError(t, rep.AddComparison(head.Results, compare.Compare(arms, arms, compare.Options{})))
	_, err := rep.Write(out)
	require.NoError(t, err)
	charts := filepath.Join(out, ChartsDir)
	require.FileExists(t, filepath.Join(charts, "compare-arm1-conc.png"))
	mine := []string{"notes.png", "compare-arm1-conc.jpg", "g1-custom.svg", "compare-arm1-conc.png.bak"}
	for _, n := range mine {
		require.NoError(t, os.WriteFile(filepath.Join(charts, n), []byte("x"), 0o644))
	}

	_, err = plain.Write(out)
	require.NoError(t, err)
	entries, err := os.ReadDir(charts)
	require.NoError(t, err)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	var want []string
	for _, c := range plain.Charts {
		want = append(want, c.Name+".png", c.Name+".svg")
	}
	assert.ElementsMatch(t, append(want, mine...), got)
}

// TestChartNamesMatchTheirPattern: every chart the report draws has a
// name chartName matches, so that a later report can tell its own
// charts (and remove those it no longer draws).
func TestChartNamesMatchTheirPattern(t *testing.T) {
	for _, f := range reportFigures(t) {
		name := f.name
		if strings.HasPrefix(name, "compare-") { // reportFigures' own names for them
			name = strings.Replace(name, "compare-", "compare-arm1-", 1)
		}
		assert.Regexp(t, chartName, name)
	}
	for _, n := range []string{"notes", "g1-custom", "compare-arm1", "xg1-ttft", "g1-ttft-old"} {
		assert.NotRegexp(t, chartName, n)
	}
}

// TestWriteOnlyIntoItsOwnDirectory: a report replaces only its own
// summary.md and index.html (rewriting a report is the usual way), and
// never writes through a symbolic link (DIR/report -> ../elsewhere wrote
// the user's files there); each refusal is a usage error (exit 2) that
// leaves the user's files as they were.
func TestWriteOnlyIntoItsOwnDirectory(t *testing.T) {
	rep, _ := buildKeySweep(t)
	tests := []struct {
		name    string
		setup   func(t *testing.T, out string) (keep string) // a file that must stay as it is
		wantErr string                                       // "" to write
	}{
		{"new directory", func(t *testing.T, out string) string { return "" }, ""},
		{"a report's own", func(t *testing.T, out string) string {
			_, err := rep.Write(out)
			require.NoError(t, err)
			return ""
		}, ""},
		{"user's index.html", func(t *testing.T, out string) string {
			return mkFile(t, filepath.Join(out, PageFile), "<html>mine</html>")
		}, "index.html exists and is not a report page (sweep report replaces only its own)"},
		{"user's summary.md", func(t *testing.T, out string) string {
			return mkFile(t, filepath.Join(out, SummaryFile), "# my notes\n")
		}, "summary.md exists and is not a report summary"},
		{"symlink out of the directory", func(t *testing.T, out string) string {
			elsewhere := filepath.Join(filepath.Dir(out), "elsewhere")
			keep := mkFile(t, filepath.Join(elsewhere, PageFile), "<html>mine</html>")
			require.NoError(t, os.Symlink(elsewhere, out))
			return keep
		}, "is a symbolic link (to "},
		{"charts a symlink", func(t *testing.T, out string) string {
			elsewhere := filepath.Join(filepath.Dir(out), "elsewhere")
			keep := mkFile(t, filepath.Join(elsewhere, "g1-ttft.svg"), "mine")
			require.NoError(t, os.MkdirAll(out, 0o755))
			require.NoError(t, os.Symlink(elsewhere, filepath.Join(out, ChartsDir)))
			return keep
		}, "charts is a symbolic link"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "report")
			keep := tt.setup(t, out)
			var before []byte
			if keep != "" {
				before, _ = os.ReadFile(keep)
			}
			_, err := rep.Write(out)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
			_, isUsage := errors.AsType[*usage.Error](err)
			assert.True(t, isUsage, "%T %v", err, err)
			after, _ := os.ReadFile(keep)
			assert.Equal(t, string(before), string(after))
		})
	}
}

func mkFile(t *testing.T, path, data string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
	return path
}
