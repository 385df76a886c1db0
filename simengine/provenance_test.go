package simengine

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// windowProvenanceFile says, for each planned single-node agentic key,
// where its official windows came from by InferenceX's own account (its
// header says how it was read and what each provenance means).
var windowProvenanceFile = filepath.Join("..", "testdata", "simengine", "window-provenance.csv")

// Window provenances (window-provenance.csv's provenance column).
// kneeWindow is the one whose windows InferenceX chose at a measured knee;
// the agreement of the simulated engine with what was measured is read on
// those.
const kneeWindow = "knee"

var windowProvenances = []string{kneeWindow, "cap", "mirrored", "other-kv", "unknown"}

// windowSource is one key's row of window-provenance.csv.
type windowSource struct {
	key, provenance, evidence string
	line                      int
}

// readWindowProvenance reads a window-provenance table (r, named file in
// its errors): a header key,provenance,evidence, then one row per key,
// each provenance one of windowProvenances with its evidence; lines
// starting with # are comments. The rows come back in file order; every
// bad row is named at its line.
func readWindowProvenance(file string, r io.Reader) ([]windowSource, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = 3
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", file, err)
	}
	if want := []string{"key", "provenance", "evidence"}; !slices.Equal(header, want) {
		line, _ := cr.FieldPos(0)
		return nil, fmt.Errorf("%s:%d: header %q, want %q", file, line, strings.Join(header, ","), strings.Join(want, ","))
	}
	var rows []windowSource
	var errs []error
	seen := map[string]int{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		line, _ := cr.FieldPos(0)
		s := windowSource{key: rec[0], provenance: rec[1], evidence: strings.TrimSpace(rec[2]), line: line}
		switch {
		case s.key == "":
			errs = append(errs, fmt.Errorf("%s:%d: empty key: give the config key the row is for", file, line))
		case seen[s.key] > 0:
			errs = append(errs, fmt.Errorf("%s:%d: key %s: repeats line %d; keep one row per key", file, line, s.key, seen[s.key]))
		case !slices.Contains(windowProvenances, s.provenance):
			errs = append(errs, fmt.Errorf("%s:%d: key %s: provenance %q, want one of %s", file, line, s.key, s.provenance, strings.Join(windowProvenances, ", ")))
		case s.evidence == "":
			errs = append(errs, fmt.Errorf("%s:%d: key %s: no evidence; name the InferenceX PR and quote it, or say that it says nothing", file, line, s.key))
		}
		seen[s.key] = line
		rows = append(rows, s)
	}
	return rows, errors.Join(errs...)
}

// windowProvenance reads windowProvenanceFile.
func windowProvenance(t testing.TB) []windowSource {
	t.Helper()
	f, err := os.Open(windowProvenanceFile)
	require.NoError(t, err)
	defer f.Close()
	rows, err := readWindowProvenance(windowProvenanceFile, f)
	require.NoError(t, err)
	return rows
}

// TestReadWindowProvenance: a bad row of the table is named at its line,
// with the key and what was expected.
func TestReadWindowProvenance(t *testing.T) {
	const header = "# a comment\nkey,provenance,evidence\n"
	for _, tc := range []struct {
		name, in string
		want     []string // error substrings; none: reads
	}{
		{name: "good", in: header + "a,knee,\"PR 1: \"\"at the knee\"\"\"\nb,unknown,PR 2: nothing\n"},
		{name: "bad provenance", in: header + "a,kne,PR 1\n", want: []string{"t.csv:3: key a: provenance \"kne\", want one of knee, cap, mirrored, other-kv, unknown"}},
		{name: "no evidence", in: header + "a,knee, \n", want: []string{"t.csv:3: key a: no evidence"}},
		{name: "repeated key", in: header + "a,knee,PR 1\nb,cap,PR 2\na,cap,PR 3\n", want: []string{"t.csv:5: key a: repeats line 3"}},
		{name: "every bad row", in: header + "a,x,PR 1\n,knee,PR 2\n", want: []string{"t.csv:3: key a: provenance \"x\"", "t.csv:4: empty key"}},
		{name: "header", in: "key,kind,evidence\n", want: []string{"t.csv:1: header \"key,kind,evidence\", want \"key,provenance,evidence\""}},
		{name: "columns", in: header + "a,knee\n", want: []string{"t.csv: record on line 3: wrong number of fields"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := readWindowProvenance("t.csv", strings.NewReader(tc.in))
			if len(tc.want) == 0 {
				require.NoError(t, err)
				require.Equal(t, []windowSource{{key: "a", provenance: "knee", evidence: "PR 1: \"at the knee\"", line: 3}, {key: "b", provenance: "unknown", evidence: "PR 2: nothing", line: 4}}, rows)
				return
			}
			require.Error(t, err)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}
