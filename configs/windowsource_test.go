package configs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseWindowProvenance: a bad row of the table is named at its line,
// with the key and what was expected.
func TestParseWindowProvenance(t *testing.T) {
	const header = "# a comment\nkey,provenance,evidence\n"
	for _, tc := range []struct {
		name, in string
		want     []string // errors, in order; none: reads
	}{
		{name: "good", in: header + "a,knee,\"PR 1: \"\"at the knee\"\"\"\nb,unknown,PR 2: nothing\n"},
		{name: "bad provenance", in: header + "a,kne,PR 1\n", want: []string{`t.csv:3:3: a: provenance "kne", want one of knee, cap, mirrored, other-kv, unknown`}},
		{name: "no evidence", in: header + "a,knee, \n", want: []string{"t.csv:3: a: no evidence; name the InferenceX PR and quote it, or say that it says nothing"}},
		{name: "repeated key", in: header + "a,knee,PR 1\nb,cap,PR 2\na,cap,PR 3\n", want: []string{"t.csv:5: a: repeats line 3; keep one row per key"}},
		{name: "every bad row", in: header + "a,x,PR 1\n,knee,PR 2\n", want: []string{`t.csv:3:3: a: provenance "x", want one of knee, cap, mirrored, other-kv, unknown`, "t.csv:4: empty key: give the config key the row is for"}},
		{name: "header", in: "key,kind,evidence\n", want: []string{`t.csv:1:1: header "key,kind,evidence", want "key,provenance,evidence"`}},
		{name: "columns", in: header + "a,knee\n", want: []string{"t.csv:3:1: wrong number of fields: want 3, key,provenance,evidence (quote an evidence holding a comma)"}},
		{name: "empty", in: "", want: []string{"t.csv: empty: want a header key,provenance,evidence and a row per key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := ParseWindowProvenance(Source{Name: "t.csv", Data: []byte(tc.in)})
			if len(tc.want) == 0 {
				require.NoError(t, err)
				require.Equal(t, []WindowSource{{Key: "a", Provenance: "knee", Evidence: "PR 1: \"at the knee\"", Line: 3}, {Key: "b", Provenance: "unknown", Evidence: "PR 2: nothing", Line: 4}}, rows)
				return
			}
			require.Error(t, err)
			var got []string
			for _, e := range Errors(err) {
				got = append(got, e.Error())
			}
			assert.Equal(t, tc.want, got, "input:\n%s", tc.in)
		})
	}
}

// TestDefaultWindowProvenance: the embedded table reads, its first row
// the measured key's windows, chosen at a knee.
func TestDefaultWindowProvenance(t *testing.T) {
	rows, err := DefaultWindowProvenance()
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	assert.Equal(t, "qwen3.5-fp8-mi325x-sglang-agentic-mtp", rows[0].Key)
	assert.Equal(t, WindowAtKnee, rows[0].Provenance)
}
