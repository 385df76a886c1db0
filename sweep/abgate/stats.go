package abgate

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sweep/internal/stats"
)

// z90 is the standard normal quantile of a two-sided 90 % interval.
const z90 = 1.6448536269514722

// zPower80 is (z_0.95 + z_0.80)²: the sample-size factor of a one-sided
// 5 % test with 80 % power (bfcl-ab.md §5.3).
const zPower80 = 6.182557

// stratum is one category's paired per-case differences d_i = p_B,i − p_A,i
// of pass fractions (each in [−1, 1]).
type stratum []float64

// bootstrapCI draws resamples stratified paired bootstrap replicates of
// the pooled (weighted) mean difference: within each stratum, cases are
// drawn with replacement, each carrying both arms' verdicts. It returns
// the two-sided 90 % percentile interval of the pooled mean and of each
// stratum's mean. The same seed gives the same intervals.
//
// It draws resamples × cases indices (10⁴ × 4441 for each comparison of
// an A/A calibration of BFCL), which the race detector, with nothing to
// check in one goroutine's arithmetic on its own slices, made 20 times
// slower through math/rand/v2's Rand: the indices are uint64N's, drawn
// here without its instrumentation.
//
//go:norace
func bootstrapCI(strata []stratum, resamples int, seed uint64) (pooled [2]float64, per [][2]float64) {
	n := 0
	for _, s := range strata {
		n += len(s)
	}
	per = make([][2]float64, len(strata))
	if n == 0 || resamples <= 0 {
		return pooled, per
	}
	src := rand.NewPCG(seed, 0x9e3779b97f4a7c15)
	pooledDraws := make([]float64, resamples)
	perDraws := make([][]float64, len(strata))
	for k := range strata {
		perDraws[k] = make([]float64, resamples)
	}
	for b := range resamples {
		total := 0.0
		for k, s := range strata {
			sum := 0.0
			m := uint64(len(s))
			for range m {
				sum += s[uint64N(src, m)]
			}
			total += sum
			if m > 0 {
				perDraws[k][b] = sum / float64(m)
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

// uint64N returns rand.New(src).Uint64N(n), as math/rand/v2's Rand draws
// it on a 64-bit platform (a mask when n is a power of two, else Lemire's
// multiply with rejection), so bootstrapCI's intervals are those it drew
// through Rand.IntN; they are now the same on a 32-bit platform too. It
// takes the concrete PCG so that the generator inlines into it.
//
//go:norace
func uint64N(src *rand.PCG, n uint64) uint64 {
	if n&(n-1) == 0 {
		return src.Uint64() & (n - 1)
	}
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}

// percentileInterval returns the 5th and 95th percentiles of xs (sorted
// in place), interpolated linearly between order statistics.
func percentileInterval(xs []float64) [2]float64 {
	slices.Sort(xs)
	return [2]float64{stats.Percentile(xs, 5), stats.Percentile(xs, 95)}
}

// mcnemarWorse is McNemar's exact one-sided p-value for "B is worse":
// with b cases A-pass/B-fail and c cases A-fail/B-pass, P(X ≥ b) for
// X ~ Binomial(b+c, ½). It is 1 when there are no discordant cases.
func mcnemarWorse(b, c int) float64 {
	n := b + c
	if b <= 0 {
		return 1
	}
	// log-space sum of C(n, k) / 2^n for k = b..n
	lgN, _ := math.Lgamma(float64(n + 1))
	logHalf := float64(n) * math.Log(0.5)
	terms := make([]float64, 0, n-b+1)
	for k := b; k <= n; k++ {
		lk, _ := math.Lgamma(float64(k + 1))
		lnk, _ := math.Lgamma(float64(n - k + 1))
		terms = append(terms, lgN-lk-lnk+logHalf)
	}
	top := slices.Max(terms)
	sum := 0.0
	for _, t := range terms {
		sum += math.Exp(t - top)
	}
	return min(1, math.Exp(top+math.Log(sum)))
}

// replicatesFor80Power is the number of replicates per arm that detect a
// true drop of tolerance (a fraction, e.g. 0.02) in the pooled mean with a
// one-sided 5 % test and 80 % power, R ≥ 6.18·V₁/δ² (bfcl-ab.md §5.3).
// V₁, the one-replicate variance of the pooled difference, is measured
// from the data: under no difference E[d_i²] = f_i/R, so V₁ =
// R·Σd_i²/N². It also returns the measured flip rate f = R·Σd_i²/N.
// reps is the (effective) number of replicates per arm behind strata.
func replicatesFor80Power(strata []stratum, reps, tolerance float64) (need int, flipRate float64) {
	n, ss := 0, 0.0
	for _, s := range strata {
		n += len(s)
		for _, d := range s {
			ss += d * d
		}
	}
	if n == 0 || tolerance <= 0 {
		return 0, 0
	}
	flipRate = reps * ss / float64(n)
	return replicatesForVariance(flipRate/float64(n), tolerance), flipRate
}

// replicatesForVariance is R ≥ 6.18·V₁/δ², at least 1, for the
// one-replicate variance v1 of the pooled difference.
func replicatesForVariance(v1, tolerance float64) int {
	return max(1, int(math.Ceil(zPower80*v1/(tolerance*tolerance))))
}

// replicatesFromCalibration is replicatesFor80Power with the A/A-measured
// flip rates of cal in place of the differences between the arms: V₁ =
// Σ_c n_c f_c / N² over the strata's categories (names). flipRate is the
// pooled A/A rate; missing names the first category cal has no rate for
// (then the other results are zero).
func replicatesFromCalibration(strata []stratum, names []string, cal *Calibration, tolerance float64) (need int, flipRate float64, missing string) {
	n, flips := 0, 0.0
	for k, s := range strata {
		f, ok := cal.FlipRate(names[k])
		if !ok {
			return 0, 0, names[k]
		}
		n += len(s)
		flips += float64(len(s)) * f
	}
	if n == 0 || tolerance <= 0 {
		return 0, 0, ""
	}
	flipRate = flips / float64(n)
	return replicatesForVariance(flipRate/float64(n), tolerance), flipRate, ""
}
