// Package pyjson writes strings and writes and reads numbers the way
// Python does, for the files sweep must produce byte for byte as
// InferenceX's Python tools do (matrix and changelog JSON, recipe
// fingerprints, aggregate results) and for the Python-written values it
// reads (aiperf artifacts, environment).
//
//	pyjson.AppendString(b, "ü", true) // "\u00fc", json.dumps' ensure_ascii
//	pyjson.AppendFloat(b, 1e16)       // "1e+16", as json.dumps writes it
//	pyjson.FloatRepr(400)             // "400.0", Python's repr(float)
//	pyjson.PromFloat(2.5e6)           // "2.5e+06", prometheus_client's floatToGoString
//	pyjson.Round5(x)                  // round(x, 5)
//	pyjson.ParseFloat(" 1_000.5")     // float(s)
//	pyjson.ParseInt("+42")            // int(s)
//	pyjson.Thousands("6740864.50")    // "6,740,864.50", the format spec ","
package pyjson

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Round5 is Python's round(x, 5) for a finite float: the exact binary value
// rounded half to even at the fifth decimal.
func Round5(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 5, 64), 64)
	if err != nil {
		return x
	}
	return r
}

// ParseFloat is Python's float() applied to a string: surrounding whitespace,
// a sign, "inf"/"infinity"/"nan" and underscores between digits are
// accepted; hexadecimal literals are not.
func ParseFloat(s string) (float64, bool) {
	s = strings.TrimFunc(s, unicode.IsSpace)
	if s == "" {
		return 0, false
	}
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 {
		return 0, false
	}
	if strings.HasPrefix(body, "0x") || strings.HasPrefix(body, "0X") {
		return 0, false
	}
	if strings.Contains(s, "_") {
		var ok bool
		if s, ok = stripDigitUnderscores(s); !ok {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, true // Python overflows to ±inf or underflows to 0 too
		}
		return 0, false
	}
	return f, true
}

// ParseInt is Python's int() applied to a string: whitespace, a sign and
// underscores between digits; no decimal point or exponent.
func ParseInt(s string) (int64, bool) {
	s = strings.TrimFunc(s, unicode.IsSpace)
	if strings.Contains(s, "_") {
		var ok bool
		if s, ok = stripDigitUnderscores(s); !ok {
			return 0, false
		}
	}
	body := strings.TrimLeft(s, "+-")
	if body == "" || len(s)-len(body) > 1 {
		return 0, false
	}
	for _, r := range body {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// stripDigitUnderscores removes underscores that sit between two digits and
// fails on any other underscore, as Python's numeric parsers do.
func stripDigitUnderscores(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '_' {
			b.WriteByte(s[i])
			continue
		}
		if i == 0 || i == len(s)-1 || !isDigit(s[i-1]) || !isDigit(s[i+1]) {
			return "", false
		}
	}
	return b.String(), true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// FloatRepr is Python's repr(float): the shortest round-trip digits, in
// fixed notation for decimal exponents -4..15 and scientific otherwise;
// the non-finite values are nan, inf and -inf.
func FloatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return string(AppendFloat(nil, f))
}

// PromFloat is prometheus_client's floatToGoString, the text Python
// engines write for sample values and histogram bounds: repr(f), with Go's
// exponent form from 1e6 up for positive values ("1e+06", not
// "1000000.0"), and +Inf, -Inf and NaN for the non-finite values.
func PromFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	s := string(AppendFloat(nil, f))
	if dot := strings.IndexByte(s, '.'); f > 0 && dot > 6 {
		mant := strings.TrimRight(s[:1]+"."+s[1:dot]+s[dot+1:], "0.")
		return mant + "e+0" + strconv.Itoa(dot-1)
	}
	return s
}

// AppendFloat appends f the way Python's json module writes a float:
// repr(f), so the shortest digits that round-trip, in fixed notation when
// the decimal exponent is in [-4, 16) ("0.8", "1.0", "1e-05", "1e+16"),
// and NaN, Infinity and -Infinity for the non-finite values.
func AppendFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	}
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64) // -d.ddde±XX
	neg := e[0] == '-'
	if neg {
		e = e[1:]
	}
	mant, exp := e, 0
	for i, c := range e {
		if c == 'e' {
			mant = e[:i]
			exp, _ = strconv.Atoi(string(e[i+1:]))
			break
		}
	}
	digits := make([]byte, 0, len(mant))
	for _, c := range mant {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	if neg {
		b = append(b, '-')
	}
	if exp < -4 || exp >= 16 {
		b = append(b, digits[0])
		if len(digits) > 1 {
			b = append(b, '.')
			b = append(b, digits[1:]...)
		}
		b = append(b, 'e')
		if exp < 0 {
			b = append(b, '-')
			exp = -exp
		} else {
			b = append(b, '+')
		}
		if exp < 10 {
			b = append(b, '0')
		}
		return strconv.AppendInt(b, int64(exp), 10)
	}
	if exp < 0 {
		b = append(b, '0', '.')
		for i := -1; i > exp; i-- {
			b = append(b, '0')
		}
		return append(b, digits...)
	}
	intPart := exp + 1
	if len(digits) <= intPart {
		b = append(b, digits...)
		for i := len(digits); i < intPart; i++ {
			b = append(b, '0')
		}
		return append(b, '.', '0')
	}
	b = append(b, digits[:intPart]...)
	b = append(b, '.')
	return append(b, digits[intPart:]...)
}

// Float is a float64 that marshals as Python's json module writes a float
// (AppendFloat): an integral value keeps its ".0" ("3.0", not "3"), as in
// the JSON values InferenceX's scripts pass to engines.
type Float float64

// MarshalJSON implements json.Marshaler. NaN and the infinities are not
// JSON, and are refused as encoding/json refuses them.
func (f Float) MarshalJSON() ([]byte, error) {
	x := float64(f)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil, fmt.Errorf("pyjson.Float: %v is not a JSON number", x)
	}
	return AppendFloat(nil, x), nil
}

// Rounded is a number in the aggregate result. It marshals the way
// InferenceX's round_floats leaves it: rounded to 5 decimals (Python's
// round), integral values without a fraction. A NaN or infinity, which
// InferenceX would write as a non-JSON token, is written as null.
type Rounded float64

// MarshalJSON implements json.Marshaler.
func (f Rounded) MarshalJSON() ([]byte, error) {
	x := float64(f)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return []byte("null"), nil
	}
	r := Round5(x)
	if r == 0 {
		return []byte("0.0"), nil
	}
	if a := math.Abs(r); a >= 1e-4 && a < 1e21 {
		return strconv.AppendFloat(nil, r, 'f', -1, 64), nil
	}
	return strconv.AppendFloat(nil, r, 'g', -1, 64), nil
}

// RoundedPtr returns a pointer to Rounded(x).
func RoundedPtr(x float64) *Rounded {
	f := Rounded(x)
	return &f
}

// OptRounded converts an optional float64 (nil stays nil).
func OptRounded(x *float64) *Rounded {
	if x == nil {
		return nil
	}
	return RoundedPtr(*x)
}

// Thousands puts commas between the thousands of a decimal number's
// integer part, as Python's format spec "," does (f"{n:,}",
// f"{x:,.2f}"): "-1234567.891" is "-1,234,567.891".
func Thousands(num string) string {
	sign, digits := "", num
	if strings.HasPrefix(digits, "-") {
		sign, digits = "-", digits[1:]
	}
	intPart, frac, hasFrac := strings.Cut(digits, ".")
	var b strings.Builder
	b.WriteString(sign)
	for i := range len(intPart) {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(intPart[i])
	}
	if hasFrac {
		b.WriteString("." + frac)
	}
	return b.String()
}

// SplitLines splits on the line boundaries Python's str.splitlines knows.
func SplitLines(s string) []string {
	if s == "" {
		return nil
	}
	var lines []string
	start := 0
	for i, r := range s {
		switch r {
		case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			if r == '\n' && i > 0 && s[i-1] == '\r' {
				start = i + 1
				continue
			}
			lines = append(lines, s[start:i])
			start = i + utf8.RuneLen(r)
		}
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}
