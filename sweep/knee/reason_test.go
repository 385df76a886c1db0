package knee

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBelowNeverRoundsUpToTheThreshold(t *testing.T) {
	for _, tc := range []struct {
		f, threshold float64
		want         string
	}{
		{0.896, 0.9, "89.6%"},
		{0.8999, 0.9, "89.9%"},
		{0.894, 0.9, "89%"},
		{0.73, 0.9, "73%"},
		{0.846, 0.85, "84.6%"},
	} {
		assert.Equal(t, tc.want, below(tc.f, tc.threshold), "below(%v, %v)", tc.f, tc.threshold)
	}
}
