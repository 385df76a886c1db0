package matrix

import (
	"math/big"
	"strconv"
	"strings"
)

// dramGB computes int(Decimal(mib) * 1048576 * Decimal(str(util)) * gpus /
// gpusPerNode / 1e9) with Python's default decimal context: each step's
// exact result rounded to 28 significant digits, half to even.
func dramGB(mib int64, util float64, gpus, gpusPerNode int) int {
	u, ok := parseDecimal(strconv.FormatFloat(util, 'e', -1, 64)) // str(util) has the same digits
	if !ok || gpusPerNode <= 0 {
		return 0
	}
	one := big.NewInt(1)
	v := decimal{big.NewInt(mib), 0}
	v = decRound(new(big.Int).Mul(v.coef, big.NewInt(1<<20)), one, v.exp)
	v = decRound(new(big.Int).Mul(v.coef, u.coef), one, v.exp+u.exp)
	v = decRound(new(big.Int).Mul(v.coef, big.NewInt(int64(gpus))), one, v.exp)
	v = decRound(v.coef, big.NewInt(int64(gpusPerNode)), v.exp)
	v = decRound(v.coef, big.NewInt(1_000_000_000), v.exp)
	return int(v.trunc().Int64())
}

// decPrecision is the precision of Python's default decimal context.
const decPrecision = 28

// decimal is the value coef × 10^exp.
type decimal struct {
	coef *big.Int
	exp  int
}

// parseDecimal reads s ("-1.25e-05") as Decimal(s) does, exactly.
func parseDecimal(s string) (decimal, bool) {
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil {
			return decimal{}, false
		}
		mant, exp = s[:i], e
	}
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		exp -= len(mant) - i - 1
		mant = mant[:i] + mant[i+1:]
	}
	c, ok := new(big.Int).SetString(mant, 10)
	if !ok {
		return decimal{}, false
	}
	return decimal{c, exp}, true
}

// decRound returns num/den × 10^exp rounded to decPrecision significant
// digits, half to even, as every operation of Python's decimal module
// rounds its exact result. den must be positive.
func decRound(num, den *big.Int, exp int) decimal {
	neg := num.Sign() < 0
	num = new(big.Int).Abs(num)
	if num.Sign() == 0 {
		return decimal{num, exp}
	}
	// Scale num so the integer quotient has more than decPrecision digits.
	if k := decPrecision + 1 + numDigits(den) - numDigits(num); k > 0 {
		num.Mul(num, pow10(k))
		exp -= k
	}
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	// Drop the digits past the precision; low + r/den is what is dropped.
	d := numDigits(q) - decPrecision
	scale := pow10(d)
	q, low := q.QuoRem(q, scale, new(big.Int))
	exp += d
	// Round up when the dropped part (low*den + r) / (scale*den) is above
	// one half, or exactly one half and q is odd.
	dropped := low.Mul(low, den)
	dropped.Add(dropped, r).Lsh(dropped, 1)
	switch c := dropped.Cmp(scale.Mul(scale, den)); {
	case c > 0, c == 0 && q.Bit(0) == 1:
		q.Add(q, big.NewInt(1))
		if numDigits(q) > decPrecision { // carried to 10^decPrecision
			q.Quo(q, big.NewInt(10))
			exp++
		}
	}
	if neg {
		q.Neg(q)
	}
	return decimal{q, exp}
}

// trunc is int(d): d truncated toward zero.
func (d decimal) trunc() *big.Int {
	if d.exp >= 0 {
		return new(big.Int).Mul(d.coef, pow10(d.exp))
	}
	return new(big.Int).Quo(d.coef, pow10(-d.exp))
}

// rat returns d as a rational number.
func (d decimal) rat() *big.Rat {
	if d.exp >= 0 {
		return new(big.Rat).SetInt(d.trunc())
	}
	return new(big.Rat).SetFrac(d.coef, pow10(-d.exp))
}

// pow10 returns a new 10^n.
func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// numDigits returns the number of decimal digits of x >= 0 (1 for 0).
func numDigits(x *big.Int) int {
	return len(x.Text(10))
}
