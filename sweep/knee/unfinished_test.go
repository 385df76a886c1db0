package knee

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnfinishedPointsInVerdict: the points its sweep has not finished
// (an interrupted discovery: Arm.Unfinished) are named in the verdict,
// which never advises extending a grid the sweep did not finish: an arm
// still gaining at c32 whose c40..c64 did not run was told to "extend
// the grid upward". The verdict itself is the one the measured points
// give.
func TestUnfinishedPointsInVerdict(t *testing.T) {
	arm := func(n int, unfinished ...int) *Arm {
		a := armOf(auditConcs[:n], auditTput[:n])
		a.Unfinished = unfinished
		return a
	}
	failedAt40 := arm(4, 48, 64)
	failedAt40.Samples = append(failedAt40.Samples, Sample{Conc: 40, Excluded: "error rate 14% > 10%"})
	for _, tc := range []struct {
		name       string
		arm        *Arm
		want, not  []string
		unfinished []int
	}{
		{"interrupted at c40, grid to c64", arm(4, 40, 48, 64),
			[]string{"still gaining 21% per doubling at c32 (gate 10%): the sweep has not finished c40, c48, c64 above it (interrupted or not run): resume it (rerun its command) to measure them"},
			[]string{"extend the grid upward", "provisional"}, []int{40, 48, 64}},
		{"finished at c32", arm(4), []string{"extend the grid upward"}, []string{"has not finished"}, nil},
		{"a knee with c64 not run", arm(6, 64),
			[]string{"c32 reaches 92% of the peak on the fit", "; provisional: the sweep has not finished c64 (interrupted or not run): resume it (rerun its command)"},
			nil, []int{64}},
		{"c40 failed, c48 and c64 not run", failedAt40,
			[]string{"c40 above failed", "; provisional: the sweep has not finished c48, c64"}, []string{"extend the grid upward"}, []int{48, 64}},
		{"too few points, the rest not run", arm(2, 24, 32, 40, 48, 64),
			[]string{"2 usable concurrencies (need 3); provisional: the sweep has not finished c24, c32, c40, c48, c64"}, nil, []int{24, 32, 40, 48, 64}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Analyze(tc.arm, Options{})
			for _, w := range tc.want {
				assert.Contains(t, r.Reason, w)
			}
			for _, n := range tc.not {
				assert.NotContains(t, r.Reason, n)
			}
			assert.Equal(t, tc.unfinished, r.Unfinished)
			finished := *tc.arm
			finished.Unfinished = nil
			f := Analyze(&finished, Options{})
			assert.Equal(t, f.Status, r.Status, "the verdict is the measured points'")
			assert.Equal(t, f.Knee, r.Knee)
			assert.Equal(t, f.Peak, r.Peak)

			data, err := json.Marshal(r)
			require.NoError(t, err)
			var got map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(data, &got))
			if tc.unfinished == nil {
				assert.NotContains(t, got, "unfinished_conc")
			} else {
				var concs []int
				require.NoError(t, json.Unmarshal(got["unfinished_conc"], &concs))
				assert.Equal(t, tc.unfinished, concs)
			}
		})
	}
}
