package loadgen

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestNPRandMatchesNumPy: np.random.default_rng(42).random(3) is
// [0.7739560485559633, 0.4388784397520523, 0.8585979199113825] (the
// values NumPy's own documentation prints, to 8 digits).
func TestNPRandMatchesNumPy(t *testing.T) {
	r := newNPRand(42)
	for _, want := range []float64{0.77395605, 0.43887844, 0.85859792} {
		assert.InDelta(t, want, r.float64(), 5e-9)
	}
}
