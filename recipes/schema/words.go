package schema

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

var (
	intWord   = regexp.MustCompile(`^\s*[+-]?\d+(_\d+)*\s*$`)
	floatWord = regexp.MustCompile(`^\s*[+-]?((\d+(_\d+)*)?\.?\d+(_\d+)*|\d+(_\d+)*\.)([eE][+-]?\d+)?\s*$`)
)

// parseIntWord accepts what Python's int() accepts for base 10.
func parseIntWord(s string) (int64, bool) {
	if !intWord.MatchString(s) {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(s), "_", ""), 10, 64)
	return n, err == nil
}

// parseFloatWord accepts what Python's float() accepts (decimal, exponent, inf, nan).
func parseFloatWord(s string) (float64, bool) {
	t := strings.ToLower(strings.TrimSpace(s))
	switch strings.TrimLeft(t, "+-") {
	case "inf", "infinity":
		if strings.HasPrefix(t, "-") {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	case "nan":
		return math.NaN(), true
	}
	if !floatWord.MatchString(s) {
		return 0, false
	}
	x, err := strconv.ParseFloat(strings.ReplaceAll(t, "_", ""), 64)
	return x, err == nil
}

// parseBoolWord is cyclopts' bool conversion.
func parseBoolWord(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "true", "t", "yes", "y", "1":
		return true, true
	case "false", "f", "no", "n", "0":
		return false, true
	}
	return false, false
}
