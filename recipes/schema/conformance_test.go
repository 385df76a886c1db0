package schema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// converterVerdicts is testdata/aiperf-0.12.0-converter/verdicts.json: argvs (after
// "profile") with the verdict aiperf 0.12.0's own CLIConfig and converter gave them
// (testdata/aiperf-0.12.0-converter/README.md says how they were made).
type converterVerdicts struct {
	Cases []struct {
		Name    string   `json:"name"`
		Argv    []string `json:"argv"`
		Verdict string   `json:"verdict"` // "valid" or "invalid"
		Error   string   `json:"aiperf_error"`
		// Divergence, when set, says why sweep's verdict differs from aiperf's on
		// purpose or as a known gap; the test asserts it still differs.
		Divergence string `json:"divergence"`
	} `json:"cases"`
}

// TestAiperfConverterVerdicts compares the schema's verdict on every argv with the one
// aiperf 0.12.0's converter gave it.
func TestAiperfConverterVerdicts(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "aiperf-0.12.0-converter", "verdicts.json"))
	require.NoError(t, err)
	var v converterVerdicts
	require.NoError(t, json.Unmarshal(data, &v))
	require.NotEmpty(t, v.Cases)
	s := MustLoad("aiperf", "0.12.0")
	matched := 0
	for _, c := range v.Cases {
		t.Run(c.Name, func(t *testing.T) {
			require.Contains(t, []string{"valid", "invalid"}, c.Verdict)
			_, err := s.Parse(append([]string{"profile"}, slices.Clone(c.Argv)...))
			got := "valid"
			if err != nil {
				got = "invalid"
			}
			if c.Divergence != "" {
				assert.NotEqual(t, c.Verdict, got, "argv %q: listed as a divergence (%s) but sweep now agrees with aiperf: remove the divergence", c.Argv, c.Divergence)
				return
			}
			if assert.Equal(t, c.Verdict, got, "argv %q: aiperf 0.12.0 said %q; sweep: %v", c.Argv, c.Error, err) {
				matched++
			}
		})
	}
	t.Logf("aiperf 0.12.0 converter conformance: %d of %d verdicts match", matched, len(v.Cases))
}
