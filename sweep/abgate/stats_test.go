package abgate

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMcNemarWorse(t *testing.T) {
	// Exact values of P(X >= b), X ~ Binomial(b+c, 1/2), from integer
	// binomial sums: sum_{k=b}^{n} C(n, k) / 2^n.
	tests := []struct {
		name string
		b, c int
		want float64
	}{
		{"no discordant cases", 0, 0, 1},
		{"only B better", 0, 4, 1},
		{"one A better", 1, 0, 0.5},
		{"3 of 4: (C(4,3)+C(4,4))/16", 3, 1, 5.0 / 16},
		{"5 of 10: 638/1024", 5, 5, 319.0 / 512},
		{"inconclusive sample, 16 of 28", 16, 12, 0.28579409420490265},
		{"regression sample, 191 of 238", 191, 47, 4.433963771174903e-22},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mcnemarWorse(tc.b, tc.c)
			assert.InEpsilon(t, tc.want, got, 1e-9, "mcnemarWorse(%d, %d)", tc.b, tc.c)
		})
	}
}

// discordant builds a stratum of n cases: aBetter cases at −1, bBetter at
// +1, the rest 0.
func discordant(n, aBetter, bBetter int) stratum {
	s := make(stratum, n)
	for i := range aBetter {
		s[i] = -1
	}
	for i := range bBetter {
		s[aBetter+i] = 1
	}
	return s
}

func TestBootstrapCI(t *testing.T) {
	t.Run("no difference gives a zero-width interval", func(t *testing.T) {
		got, per := bootstrapCI([]stratum{discordant(100, 0, 0), discordant(16, 0, 0)}, 2000, 1)
		assert.Equal(t, [2]float64{0, 0}, got)
		assert.Equal(t, [][2]float64{{0, 0}, {0, 0}}, per)
	})
	t.Run("every case worse", func(t *testing.T) {
		got, _ := bootstrapCI([]stratum{discordant(50, 50, 0)}, 2000, 1)
		assert.Equal(t, [2]float64{-1, -1}, got)
	})
	t.Run("seeded and reproducible", func(t *testing.T) {
		s := []stratum{discordant(200, 16, 12), discordant(1053, 182, 33)}
		a, _ := bootstrapCI(s, 3000, 42)
		b, _ := bootstrapCI(s, 3000, 42)
		c, _ := bootstrapCI(s, 3000, 43)
		assert.Equal(t, a, b)
		assert.NotEqual(t, a, c)
	})
	t.Run("agrees with the normal interval", func(t *testing.T) {
		// 200 cases, 16 A-better and 12 B-better: mean −0.02, and the
		// standard error of the mean is sqrt((28/200 − 0.02²)/200).
		se := math.Sqrt((28.0/200 - 0.0004) / 200)
		got, per := bootstrapCI([]stratum{discordant(200, 16, 12)}, 10000, 7)
		assert.InDelta(t, -0.02-z90*se, got[0], 0.006)
		assert.InDelta(t, -0.02+z90*se, got[1], 0.006)
		assert.Equal(t, got, per[0], "one stratum: the pooled interval is the stratum's")
	})
	t.Run("stratified: weights are case counts", func(t *testing.T) {
		// A 16-case stratum all worse beside 984 unchanged cases moves the
		// pooled mean by exactly 16/1000 in every resample.
		got, _ := bootstrapCI([]stratum{discordant(16, 16, 0), discordant(984, 0, 0)}, 1000, 3)
		assert.InDelta(t, -0.016, got[0], 1e-12)
		assert.InDelta(t, -0.016, got[1], 1e-12)
	})
}

// TestUint64N: bootstrapCI's draws are math/rand/v2's Rand.Uint64N on the
// same PCG, so its intervals are those it gave through rand.Rand: powers
// of two, n near 2⁶⁴ where Lemire's rejection loops, and the stratum
// sizes of the calibration's categories.
func TestUint64N(t *testing.T) {
	if strconv.IntSize == 32 {
		t.Skip("rand.Rand draws below 2³² another way on 32-bit platforms")
	}
	for _, n := range []uint64{1, 2, 3, 7, 64, 200, 1053, 4441, 1<<32 + 1, 1<<62 + 3, 1<<63 + 1, math.MaxUint64} {
		t.Run(strconv.FormatUint(n, 10), func(t *testing.T) {
			want := rand.New(rand.NewPCG(42, 0x9e3779b97f4a7c15))
			got := rand.NewPCG(42, 0x9e3779b97f4a7c15)
			for i := range 2000 {
				if w, g := want.Uint64N(n), uint64N(got, n); w != g {
					t.Fatalf("draw %d of [0, %d): got %d, want rand.Rand's %d", i, n, g, w)
				}
			}
		})
	}
}

// bootstrapThroughRand is bootstrapCI as it drew its cases through
// rand.Rand.IntN, before uint64N.
func bootstrapThroughRand(strata []stratum, resamples int, seed uint64) (pooled [2]float64, per [][2]float64) {
	n := 0
	for _, s := range strata {
		n += len(s)
	}
	per = make([][2]float64, len(strata))
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	pooledDraws := make([]float64, resamples)
	perDraws := make([][]float64, len(strata))
	for k := range strata {
		perDraws[k] = make([]float64, resamples)
	}
	for b := range resamples {
		total := 0.0
		for k, s := range strata {
			sum := 0.0
			for range len(s) {
				sum += s[rng.IntN(len(s))]
			}
			total += sum
			if len(s) > 0 {
				perDraws[k][b] = sum / float64(len(s))
			}
		}
		pooledDraws[b] = total / float64(n)
	}
	pooled = percentileInterval(pooledDraws)
	for k := range strata {
		per[k] = percentileInterval(perDraws[k])
	}
	return pooled, per
}

func TestBootstrapCIAsThroughRand(t *testing.T) {
	if strconv.IntSize == 32 {
		t.Skip("rand.Rand draws below 2³² another way on 32-bit platforms")
	}
	strata := []stratum{discordant(200, 16, 12), {}, discordant(1, 1, 0), discordant(64, 3, 5), halfStratum(1053, 90), discordant(4441, 130, 128)}
	for _, seed := range []uint64{1, 7, 42} {
		wantPooled, wantPer := bootstrapThroughRand(strata, 500, seed)
		pooled, per := bootstrapCI(strata, 500, seed)
		assert.Equal(t, wantPooled, pooled, "seed %d", seed)
		assert.Equal(t, wantPer, per, "seed %d", seed)
	}
}

// BenchmarkBootstrapCI is one comparison of an A/A calibration of BFCL:
// 4441 cases in 17 categories (here one), 10⁴ resamples.
func BenchmarkBootstrapCI(b *testing.B) {
	strata := []stratum{discordant(4441, 130, 128)}
	for b.Loop() {
		bootstrapCI(strata, DefaultResamples, 1)
	}
}

func TestReplicatesFor80Power(t *testing.T) {
	tests := []struct {
		name     string
		strata   []stratum
		reps     float64
		tol      float64
		wantNeed int
		wantFlip float64
	}{
		// bfcl-ab.md §5.3: one 200-case category at f = 13 % needs 11 for
		// δ = 2 pp; at f = 14 %: ceil(6.1826 × 0.14/200 / 0.0004) = 11.
		{"200 cases, 14 % flips", []stratum{discordant(200, 16, 12)}, 1, 0.02, 11, 0.14},
		// 400 cases, 5 % flips: 6.1826 × 0.05/400 / 0.0004 = 1.93 → 2.
		{"400 cases, 5 % flips", []stratum{discordant(400, 10, 10)}, 1, 0.02, 2, 0.05},
		// 16 cases, 5 % ≈ 1 flip of 16: 6.1826 × (1/16)/16 / 0.0004 = 60.4 → 61.
		{"16 cases, one flip", []stratum{discordant(16, 1, 0)}, 1, 0.02, 61, 1.0 / 16},
		// Two replicates: d = ±0.5 on 40 of 200 cases; f = 2 × 40 × 0.25 / 200 = 0.1.
		{"two replicates", []stratum{halfStratum(200, 40)}, 2, 0.02, 8, 0.1},
		{"no flips", []stratum{discordant(100, 0, 0)}, 1, 0.02, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			need, f := replicatesFor80Power(tc.strata, tc.reps, tc.tol)
			assert.Equal(t, tc.wantNeed, need)
			assert.InDelta(t, tc.wantFlip, f, 1e-12)
		})
	}
}

func halfStratum(n, k int) stratum {
	s := make(stratum, n)
	for i := range k {
		s[i] = 0.5
		if i%2 == 0 {
			s[i] = -0.5
		}
	}
	return s
}
