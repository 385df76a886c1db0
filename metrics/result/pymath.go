package result

import (
	"math"
	"math/big"
	"slices"
	"sweep/internal/pyjson"
	"sweep/internal/stats"
)

// This file holds the numeric rules InferenceX's aggregation gets from
// Python: statistics.mean and statistics.pstdev are exact (rational
// arithmetic, one correct rounding at the end), the percentile is linear
// interpolation between order statistics, and round(x, 5) rounds the exact
// binary value half to even. Reproducing them bit for bit keeps our numbers
// equal to InferenceX's after rounding, even at a rounding boundary.

// exactSum accumulates float64 values without rounding error (Shewchuk's
// non-overlapping expansion, the algorithm behind Python's math.fsum).
// Terms too large for the expansion to hold without overflowing go to an
// exact rational instead. The zero value is an empty sum.
type exactSum struct {
	partials []float64
	huge     *big.Rat // terms of magnitude >= hugeTerm, exactly
}

// hugeTerm is where terms leave the float expansion: 2^970, so even 2^50
// of them sum below the largest float64.
var hugeTerm = math.Ldexp(1, 970)

// add adds x exactly. x must be finite.
func (s *exactSum) add(x float64) {
	if math.Abs(x) >= hugeTerm {
		s.addRat(new(big.Rat).SetFloat64(x))
		return
	}
	i := 0
	for _, y := range s.partials {
		if math.Abs(x) < math.Abs(y) {
			x, y = y, x
		}
		hi := x + y
		lo := y - (hi - x)
		if lo != 0 {
			s.partials[i] = lo
			i++
		}
		x = hi
	}
	s.partials = append(s.partials[:i], x)
}

func (s *exactSum) addRat(r *big.Rat) {
	if s.huge == nil {
		s.huge = new(big.Rat)
	}
	s.huge.Add(s.huge, r)
}

// addSquare adds x*x exactly, split into its rounded product and the
// rounding error (math.FMA computes the error exactly); a square that
// would overflow or leave the expansion is added as an exact rational.
func (s *exactSum) addSquare(x float64) {
	if math.Abs(x) >= math.Sqrt(hugeTerm) {
		r := new(big.Rat).SetFloat64(x)
		s.addRat(r.Mul(r, r))
		return
	}
	p := x * x
	s.add(p)
	if e := math.FMA(x, x, -p); e != 0 {
		s.add(e)
	}
}

// rat returns the exact sum.
func (s *exactSum) rat() *big.Rat {
	r := new(big.Rat)
	var t big.Rat
	for _, p := range s.partials {
		r.Add(r, t.SetFloat64(p))
	}
	if s.huge != nil {
		r.Add(r, s.huge)
	}
	return r
}

// moments is the exact first and second moment of a sample, enough for
// Python's statistics.mean and statistics.pstdev.
type moments struct {
	n      int
	sx, sq exactSum
	// nonFinite is set by a NaN or infinite value: Python's result would
	// be nan or inf, which JSON cannot hold, so mean and pstdev are NaN and
	// the result writes them as null.
	nonFinite bool
}

func (m *moments) add(x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		m.nonFinite = true
		return
	}
	m.n++
	m.sx.add(x)
	m.sq.addSquare(x)
}

// mean is statistics.mean: the exact mean rounded once.
func (m *moments) mean() float64 {
	if m.nonFinite {
		return math.NaN()
	}
	if m.n == 0 {
		return 0
	}
	q := new(big.Rat).Quo(m.sx.rat(), new(big.Rat).SetInt64(int64(m.n)))
	f, _ := q.Float64()
	return f
}

// pstdev is statistics.pstdev: the correctly rounded square root of the
// exact population variance (n·Σx² − (Σx)²) / n². One value gives 0.
func (m *moments) pstdev() float64 {
	if m.nonFinite {
		return math.NaN()
	}
	if m.n < 2 {
		return 0
	}
	n := new(big.Rat).SetInt64(int64(m.n))
	sx := m.sx.rat()
	num := new(big.Rat).Mul(n, m.sq.rat())
	num.Sub(num, new(big.Rat).Mul(sx, sx))
	if num.Sign() <= 0 {
		return 0
	}
	num.Quo(num, new(big.Rat).Mul(n, n))
	return sqrtRat(num)
}

// sqrtRat returns the correctly rounded float64 square root of a positive
// rational: an integer square root with 2 extra bits and a sticky bit
// ("round to odd"), then one rounding to 53 bits.
func sqrtRat(r *big.Rat) float64 {
	a, b := r.Num(), r.Denom()
	// Scale so the integer root has at least 55 significant bits.
	shift := (110 - (a.BitLen() - b.BitLen())) / 2
	if shift < 0 {
		shift = 0
	}
	shift++
	num := new(big.Int).Lsh(a, uint(2*shift))
	quo, rem := new(big.Int).QuoRem(num, b, new(big.Int))
	root := new(big.Int).Sqrt(quo)
	exact := rem.Sign() == 0 && new(big.Int).Mul(root, root).Cmp(quo) == 0
	root.Lsh(root, 1)
	if !exact {
		root.SetBit(root, 0, 1)
	}
	f, _ := new(big.Float).SetMantExp(new(big.Float).SetInt(root), -shift-1).Float64()
	return f
}

// Stats is InferenceX's six-number summary of a sample: mean, linear
// percentiles 50/75/90/95 and population standard deviation. Each field is
// nil when the statistic is absent (an empty sample has no fields at all;
// interactivity keeps only the positive ones).
type Stats struct {
	Mean *pyjson.Rounded `json:"mean,omitempty"`
	P50  *pyjson.Rounded `json:"p50,omitempty"`
	P75  *pyjson.Rounded `json:"p75,omitempty"`
	P90  *pyjson.Rounded `json:"p90,omitempty"`
	P95  *pyjson.Rounded `json:"p95,omitempty"`
	Std  *pyjson.Rounded `json:"std,omitempty"`
}

// statsOf computes Stats over values (order does not matter; values is
// sorted in place). Empty input gives the empty Stats.
func statsOf(values []float64) Stats {
	if len(values) == 0 {
		return Stats{}
	}
	var m moments
	for _, v := range values {
		m.add(v)
	}
	slices.Sort(values)
	return Stats{
		Mean: pyjson.RoundedPtr(m.mean()),
		P50:  pyjson.RoundedPtr(stats.Percentile(values, 50)),
		P75:  pyjson.RoundedPtr(stats.Percentile(values, 75)),
		P90:  pyjson.RoundedPtr(stats.Percentile(values, 90)),
		P95:  pyjson.RoundedPtr(stats.Percentile(values, 95)),
		Std:  pyjson.RoundedPtr(m.pstdev()),
	}
}
