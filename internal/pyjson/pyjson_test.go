package pyjson

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRound5(t *testing.T) {
	tests := []struct{ in, want float64 }{
		{0.123455, 0.12345}, // 0.123455 is stored below the tie
		{2.675e-3, 0.00267}, // as Python: the binary value is below the tie
		{1.000005, 1.00001}, // stored above the tie
		{-0.000004, -0},
		{520658.827611, 520658.82761},
		{1e-7, 0},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.in), func(t *testing.T) {
			assert.Equal(t, tc.want, Round5(tc.in))
		})
	}
}

func TestParse(t *testing.T) {
	f, ok := ParseFloat(" 1_000.5 ")
	assert.True(t, ok)
	assert.Equal(t, 1000.5, f)
	_, ok = ParseFloat("0x10")
	assert.False(t, ok)
	_, ok = ParseFloat("1__0")
	assert.False(t, ok)
	f, ok = ParseFloat("-Infinity")
	assert.True(t, ok)
	assert.True(t, math.IsInf(f, -1))
	i, ok := ParseInt("+42")
	assert.True(t, ok)
	assert.Equal(t, int64(42), i)
	_, ok = ParseInt("42.0")
	assert.False(t, ok)
	assert.Equal(t, "1e+16", FloatRepr(1e16))
	assert.Equal(t, "400.0", FloatRepr(400))
	assert.Equal(t, "1e-05", FloatRepr(0.00001))
}

// Expected values are Python 3.11's json.dumps of the same float.
func TestAppendPyFloat(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{1.0, "1.0"},
		{0.8, "0.8"},
		{1e-05, "1e-05"},
		{0.0001, "0.0001"},
		{1e16, "1e+16"},
		{1e15, "1000000000000000.0"},
		{123.456, "123.456"},
		{-0.5, "-0.5"},
		{0.30000000000000004, "0.30000000000000004"}, // 0.1+0.2 in float64
		{5e-324, "5e-324"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{0.0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{2.5e-7, "2.5e-07"},
		{12345678901234567.0, "1.2345678901234568e+16"},
		{0.001234, "0.001234"},
		{100.0, "100.0"},
		{1e22, "1e+22"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "Infinity"},
		{math.Inf(-1), "-Infinity"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, string(AppendFloat(nil, tc.in)), "json.dumps(%v)", tc.in)
	}
}

// Expected values are prometheus_client's floatToGoString (Python 3
// repr, then its exponent rewrite for positive values with more than six
// integer digits, including its "e+015" for 1e15).
func TestPromFloat(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0.1, "0.1"},
		{1.0, "1.0"},
		{2.5, "2.5"},
		{655360.0, "655360.0"},
		{1e6, "1e+06"},
		{2.62144e6, "2.62144e+06"},
		{1234567.0, "1.234567e+06"},
		{1e10, "1e+010"},
		{1e15, "1e+015"},
		{1e16, "1e+16"},
		{1e-05, "1e-05"},
		{0.0001, "0.0001"},
		{-1234567.0, "-1234567.0"},
		{-3, "-3.0"},
		{0.41, "0.41"},
		{5123.87, "5123.87"},
		{0.0, "0.0"},
		{5e-324, "5e-324"},
		{math.Inf(1), "+Inf"},
		{math.Inf(-1), "-Inf"},
		{math.NaN(), "NaN"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, PromFloat(tt.in), "%v", tt.in)
	}
}

func TestThousands(t *testing.T) {
	for in, want := range map[string]string{
		"0": "0", "999": "999", "1000": "1,000", "6740864": "6,740,864", "-1234567.891": "-1,234,567.891",
		"1234.50": "1,234.50", "123456": "123,456",
	} {
		assert.Equal(t, want, Thousands(in), "Thousands(%q)", in)
	}
}
