package synth_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"sweep/sweep/knee"
	"sweep/sweep/testkit/synth"
)

// TestKeySweepRoundTrip writes the key sweep as result files and reads it
// back: five arms, the knees of the noise-free curves within one doubling.
// With SYNTH_OUT set, the files stay there (to try sweep knees/report).
func TestKeySweepRoundTrip(t *testing.T) {
	dir := os.Getenv("SYNTH_OUT")
	if dir == "" {
		dir = t.TempDir()
	}
	cases := synth.KeySweep(11)
	for _, c := range cases {
		_, err := synth.WriteDir(filepath.Join(dir, c.ID), c.Arm, true)
		require.NoError(t, err)
	}
	arms, err := knee.Read(t.Context(), dir)
	require.NoError(t, err)
	require.Len(t, arms, len(cases))
	for i, a := range arms {
		r := knee.Analyze(a, knee.Options{})
		require.Equal(t, knee.StatusOK, cases[i].Truth)
		require.NotZero(t, r.Knee, r.Reason)
		ratio := float64(r.Knee) / float64(cases[i].TrueKnee)
		require.True(t, ratio >= 0.5 && ratio <= 2, "arm %s: knee c%d, true c%d", a.Identity.Label(), r.Knee, cases[i].TrueKnee)
	}
}
