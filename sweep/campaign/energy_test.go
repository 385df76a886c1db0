package campaign_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/metrics/power"
	"sweep/sweep/campaign"
	"sweep/sweep/knee"
	"sweep/sweep/testkit/synth"
)

// TestKneesEnergyNamesPointsLeftOut: sweep knees and a discovery's
// summary (Knees.WriteTable) list, under the energy lines of the valid
// points, each measured point whose power lane ran and whose measurement
// is invalid, by arm and reason, with its GPU counts and, for a point
// that shares its node, the fix, in the words of the report's energy
// section (campaign.EnergyLeftOut). They listed the valid points only and
// said nothing of the others (a packed TP2 or TP4 arm on an 8-GPU node:
// expected_gpu_count_mismatch at every point). A point whose lane did
// not run, or whose measurement is valid, is not listed.
func TestKneesEnergyNamesPointsLeftOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results")
	_, err := synth.WriteDir(dir, synth.KeySweep(11)[0].Arm, true)
	require.NoError(t, err)
	arms, err := knee.Read(t.Context(), dir)
	require.NoError(t, err)
	require.Len(t, arms, 1)
	var files []string // the measured points' results, by concurrency
	for _, s := range arms[0].Samples {
		if s.Excluded == "" && !s.Superseded {
			files = append(files, s.File)
		}
	}
	require.GreaterOrEqual(t, len(files), 5)
	// lane writes the verdict a point's power lane leaves beside its
	// result and, for a valid one, the energy it puts in the result.
	lane := func(f string, valid bool, reasons ...string) {
		t.Helper()
		observed := []string{"0", "1", "2", "3", "4", "5", "6", "7"}
		if valid {
			observed = observed[:2] // the arm is TP2
		}
		require.NoError(t, synth.WritePowerLane(filepath.Dir(f), valid, 2, observed, reasons...))
		if !valid {
			return
		}
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(data, &m))
		m["power_metric_schema_version"], m["power_valid"], m["joules_per_output_token"] = 2, 1, 100/m["conc"].(float64)
		data, err = json.Marshal(m)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(f, data, 0o644))
	}
	lane(files[0], true)
	lane(files[1], false, power.ReasonGPUCountMismatch)
	lane(files[2], false, "telemetry_file_missing")
	lane(files[3], false, power.ReasonGPUCountMismatch)
	// files[4:]: the lane did not run

	k, err := campaign.ReadKnees(t.Context(), dir, knee.Options{})
	require.NoError(t, err)
	var text strings.Builder
	require.NoError(t, k.WriteTable(&text))
	out := text.String()
	i := strings.Index(out, "\nenergy per output token")
	require.True(t, i >= 0, "the energy lines of the valid point:\n%s", out)
	energy := out[i:]
	if j := strings.Index(energy, "\nexcluded points:\n"); j >= 0 {
		energy = energy[:j]
	}
	checkGolden(t, "knees-energy-left-out.golden", energy)

	// The same lines as the report's energy section lists (one home).
	left := campaign.EnergyLeftOut(k.Results)
	require.Len(t, left, 2, "one line per arm and reason: %q", left)
	for _, l := range left {
		assert.Contains(t, energy, "\n  "+l+"\n")
	}
}
