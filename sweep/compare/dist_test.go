package compare

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// t quantiles from a statistical table; F tail probabilities from a
// numerical integration of the F density (trapezoid, 2e6 steps).
func TestStudentT(t *testing.T) {
	for _, tc := range []struct{ p, df, want float64 }{
		{0.95, 1, 6.313752},
		{0.95, 2, 2.919986},
		{0.95, 5, 2.015048},
		{0.95, 10, 1.812461},
		{0.95, 30, 1.697261},
		{0.975, 4, 2.776445},
		{0.95, 1000, 1.646379},
		{0.05, 3, -2.353363},
	} {
		assert.InDelta(t, tc.want, studentT(tc.p, tc.df), 1e-5, "p=%g df=%g", tc.p, tc.df)
	}
}

func TestFSurvival(t *testing.T) {
	for _, tc := range []struct{ f, d1, d2, want float64 }{
		{3.0, 5, 10, 0.0655576},
		{1.0, 2, 2, 0.5},
		{10.0, 3, 20, 0.0003094},
	} {
		assert.InDelta(t, tc.want, fSurvival(tc.f, tc.d1, tc.d2), 2e-6, "F=%g (%g, %g)", tc.f, tc.d1, tc.d2)
	}
}
