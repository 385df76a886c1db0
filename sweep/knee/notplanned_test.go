package knee

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestNotPlannedPointsInVerdict: an arm still gaining at the top of a
// discovery narrowed with --conc-list, whose grid in the config goes on
// (Arm.NotPlanned), was told to "extend the grid upward"; the verdict
// says the config's grid goes beyond the discovery and names the points
// not measured. Points left out below the top change nothing, and the
// verdict is the measured points'.
func TestNotPlannedPointsInVerdict(t *testing.T) {
	for _, tc := range []struct {
		name       string
		notPlanned []int
		want, not  string
	}{
		{"c40..c64 left out", []int{40, 48, 64},
			"still gaining 21% per doubling at c32 (gate 10%): the config's grid goes beyond this discovery: c40, c48, c64 not measured (its --conc-list left them out); discover them to find the knee",
			"extend the grid upward"},
		{"only points below the top left out", []int{2}, "extend the grid upward", "the config's grid goes beyond"},
		{"none left out", nil, "extend the grid upward", "the config's grid goes beyond"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := armOf(auditConcs[:4], auditTput[:4])
			a.NotPlanned = tc.notPlanned
			r := Analyze(a, Options{})
			assert.Contains(t, r.Reason, tc.want)
			assert.NotContains(t, r.Reason, tc.not)
			if tc.not == "extend the grid upward" {
				assert.NotContains(t, r.Reason, "replicate", "the points not measured above settle it, as unfinished ones do")
			}
			plain := armOf(auditConcs[:4], auditTput[:4])
			f := Analyze(plain, Options{})
			assert.Equal(t, f.Status, r.Status, "the verdict is the measured points'")
			assert.Equal(t, StatusUnsaturated, r.Status)
		})
	}
}
