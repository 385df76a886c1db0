package knee

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFailedPointAmongHealthyIsNoCliff: a failed point or a rising error
// rate past the knee is a sign of a cliff only when no healthy point lies
// above it (a usable point with no cliff sign of its own: on the plateau,
// its error rate not rising). A crash among healthy points is a failure,
// listed with the excluded points, not a cliff: `sweep knees` said
// "cliff: c16 failed" for an arm whose c32 and c64 read on the plateau,
// and "cliff: c4 error rate 3.2%" for one whose c16 and c24 (its peak)
// read healthy.
func TestFailedPointAmongHealthyIsNoCliff(t *testing.T) {
	concs := []int{1, 2, 4, 8, 16, 32, 64}
	plateau := []float64{1000, 1900, 3300, 3400, 3420, 3430, 3440}
	// point changes the sample at conc: failed (excluded), fallen to a
	// share of its reading, or with an error rate (the others' 0.5 %).
	type point struct {
		conc   int
		failed bool
		share  float64 // 0: as on the plateau
		errs   float64
	}
	for _, tc := range []struct {
		name   string
		points []point
		want   []string
	}{
		{"healthy", nil, nil},
		{"failed among healthy", []point{{conc: 16, failed: true}}, nil},
		{"two failed, then healthy", []point{{conc: 16, failed: true}, {conc: 32, failed: true}}, nil},
		{"failed at the top", []point{{conc: 64, failed: true}}, []string{"c64 failed"}},
		{"failed, then failed to the top", []point{{conc: 16, failed: true}, {conc: 32, failed: true}, {conc: 64, failed: true}},
			[]string{"c16 failed", "c32 failed", "c64 failed"}},
		{"failed, then fallen off", []point{{conc: 16, failed: true}, {conc: 32, share: 0.5}, {conc: 64, share: 0.4}},
			[]string{"c32 throughput", "c64 throughput", "c16 failed"}},
		{"failed, then errors rising", []point{{conc: 16, failed: true}, {conc: 32, errs: 0.06}, {conc: 64, errs: 0.08}},
			[]string{"c16 failed", "c32 error rate", "c64 error rate"}},
		{"errors rising among healthy", []point{{conc: 16, errs: 0.06}}, nil},
		{"errors rising, then failed, then healthy", []point{{conc: 16, errs: 0.06}, {conc: 32, failed: true}}, nil},
		{"errors rising at the top", []point{{conc: 64, errs: 0.06}}, []string{"c64 error rate"}},
		{"errors rising, then failed to the top", []point{{conc: 16, errs: 0.06}, {conc: 32, failed: true}, {conc: 64, failed: true}},
			[]string{"c16 error rate", "c32 failed", "c64 failed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Arm{}
			for i, c := range concs {
				v := plateau[i]
				s := Sample{Conc: c, TotalTPS: &v, ErrorRate: 0.005}
				if j := slices.IndexFunc(tc.points, func(p point) bool { return p.conc == c }); j >= 0 {
					p := tc.points[j]
					switch {
					case p.failed:
						s = Sample{Conc: c, Excluded: "server crashed (no successful request)"}
					case p.share > 0:
						v *= p.share
					case p.errs > 0:
						s.ErrorRate = p.errs
					}
				}
				a.Samples = append(a.Samples, s)
			}
			r := Analyze(a, Options{})
			assert.Equal(t, 4, r.Knee, "knee (reason: %s)", r.Reason)
			var got []string // the wanted prefixes r.Cliff has, in its order
			for _, c := range r.Cliff {
				for _, w := range tc.want {
					if strings.HasPrefix(c, w) {
						got = append(got, w)
					}
				}
			}
			assert.Equal(t, tc.want, got, "cliff %q", r.Cliff)
			assert.Len(t, r.Cliff, len(tc.want), "cliff %q", r.Cliff)
		})
	}
}
