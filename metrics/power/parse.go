package power

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The column and number patterns of InferenceX's aggregate_power (ASCII
// digits only: Python's \d also matches other scripts' digits, which no
// SMI tool writes).
var (
	powerColRE     = regexp.MustCompile(`(?i)power`)
	powerExcludeRE = regexp.MustCompile(`(?i)limit|cap|max|min`)
	timestampColRE = regexp.MustCompile(`(?i)time`)
	gpuIndexColRE  = regexp.MustCompile(`(?i)^(index|gpu|gpu_id|gpu_index|card|device)$`)
	numberRE       = regexp.MustCompile(`-?[0-9]+(?:\.[0-9]+)?`)
	numberFullRE   = regexp.MustCompile(`^-?[0-9]+(?:\.[0-9]+)?$`)
	// smiTimeRE is strptime's pattern for "%Y/%m/%d %H:%M:%S" with an
	// optional ".%f", as nvidia-smi writes its timestamp column.
	smiTimeRE = regexp.MustCompile(`^([0-9]{4})/(1[0-2]|0[1-9]|[1-9])/(3[01]|[12][0-9]|0[1-9]|[1-9]| [1-9])\s+` +
		`(2[0-3]|[0-1][0-9]|[0-9]):([0-5][0-9]|[0-9]):(6[0-1]|[0-5][0-9]|[0-9])(?:\.([0-9]{1,6}))?$`)
)

// columns is the header's timestamp, power and GPU-identity column ("" when
// absent), picked as _detect_columns does: the first name containing
// "time"; the first containing "power" but none of limit/cap/max/min; the
// first that is exactly one of the identity names.
type columns struct{ timestamp, power, gpu string }

func detectColumns(header []string) columns {
	var c columns
	for _, h := range header {
		if c.timestamp == "" && timestampColRE.MatchString(h) {
			c.timestamp = h
		}
		if c.power == "" && powerColRE.MatchString(h) && !powerExcludeRE.MatchString(h) {
			c.power = h
		}
		if c.gpu == "" && gpuIndexColRE.MatchString(strings.TrimSpace(h)) {
			c.gpu = h
		}
	}
	return c
}

// parseSampleTime is _parse_timestamp: a plain number is epoch seconds (or
// milliseconds above 1e12); nvidia-smi's "YYYY/MM/DD HH:MM:SS.fff" and a
// zone-less ISO time are wall-clock times in loc (the process's own zone
// in InferenceX); an ISO time with a zone is absolute.
func parseSampleTime(s string, loc *time.Location) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	if numberFullRE.MatchString(s) {
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, false
		}
		if n > 1e12 {
			return n / 1000, true
		}
		return n, true
	}
	if m := smiTimeRE.FindStringSubmatch(s); m != nil {
		day := strings.TrimSpace(m[3])
		t, ok := civil(atoi(m[1]), atoi(m[2]), atoi(day), atoi(m[4]), atoi(m[5]), atoi(m[6]), fraction(m[7]))
		if ok {
			return t.naiveTimestamp(loc), true
		}
	}
	iso := s
	if strings.Contains(s, " ") && !strings.Contains(s, "T") {
		iso = strings.Replace(s, " ", "T", 1)
	}
	t, ok := parseISO(iso)
	if !ok {
		return 0, false
	}
	if !t.aware {
		return t.naiveTimestamp(loc), true
	}
	return t.awareTimestamp(), true
}

// parsePower is _parse_power: the first number in the cell ("412.34 W"),
// none for an empty cell or N/A.
func parsePower(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "", "[n/a]", "n/a", "na":
		return 0, false
	}
	m := numberRE.FindString(s)
	if m == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(m, 64)
	return f, err == nil
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// fraction turns up to six fraction digits into microseconds.
func fraction(digits string) int {
	if digits == "" {
		return 0
	}
	if len(digits) > 6 {
		digits = digits[:6]
	}
	return atoi(digits + strings.Repeat("0", 6-len(digits)))
}

// clock is a civil date and time as Python's datetime holds it, with an
// optional UTC offset in seconds.
type clock struct {
	year, month, day, hour, min, sec, usec int
	aware                                  bool
	offset                                 int // seconds east of UTC when aware
}

// civil validates the fields as datetime() does.
func civil(year, month, day, hour, min, sec, usec int) (clock, bool) {
	if year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || min > 59 || sec > 59 {
		return clock{}, false
	}
	if day > time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day() {
		return clock{}, false
	}
	return clock{year: year, month: month, day: day, hour: hour, min: min, sec: sec, usec: usec}, true
}

// naiveTimestamp is datetime.timestamp() of a naive time: the local
// mktime seconds plus microsecond / 1e6, two roundings as CPython does.
func (c clock) naiveTimestamp(loc *time.Location) float64 {
	secs := time.Date(c.year, time.Month(c.month), c.day, c.hour, c.min, c.sec, 0, loc).Unix()
	return float64(secs) + float64(c.usec)/1e6
}

// awareTimestamp is datetime.timestamp() of an aware time: the exact
// microseconds since the epoch divided by 10**6, rounded once.
func (c clock) awareTimestamp() float64 {
	secs := time.Date(c.year, time.Month(c.month), c.day, c.hour, c.min, c.sec, 0, time.UTC).Unix() - int64(c.offset)
	return float64(secs*1_000_000+int64(c.usec)) / 1e6
}

// isoRE is the part of Python 3.11's datetime.fromisoformat that aiperf's
// and SMI tools' timestamps use: YYYY-MM-DD, optionally a one-character
// separator and HH[:MM[:SS[.f...]]], optionally Z or ±HH:MM[:SS[.ffffff]]
// (colons optional in the offset). Week dates and the basic (colon-less)
// time forms are not accepted.
var isoRE = regexp.MustCompile(`^([0-9]{4})-([0-9]{2})-([0-9]{2})` +
	`(?:.([0-9]{2})(?::([0-9]{2})(?::([0-9]{2})(?:[.,]([0-9]+))?)?)?` +
	`(Z|[+-][0-9]{2}(?::?[0-9]{2}(?::?[0-9]{2}(?:\.[0-9]{1,6})?)?)?)?)?$`)

// parseISO parses an ISO 8601 time as fromisoformat does for the forms
// isoRE accepts.
func parseISO(s string) (clock, bool) {
	m := isoRE.FindStringSubmatch(s)
	if m == nil {
		return clock{}, false
	}
	c, ok := civil(atoi(m[1]), atoi(m[2]), atoi(m[3]), atoi(m[4]), atoi(m[5]), atoi(m[6]), fraction(m[7]))
	if !ok {
		return clock{}, false
	}
	switch z := m[8]; {
	case z == "":
	case z == "Z":
		c.aware = true
	default:
		digits := strings.ReplaceAll(z[1:], ":", "")
		off := atoi(digits[:2]) * 3600
		if len(digits) >= 4 {
			if atoi(digits[2:4]) > 59 {
				return clock{}, false
			}
			off += atoi(digits[2:4]) * 60
		}
		if len(digits) >= 6 {
			off += atoi(digits[4:6])
		}
		if off >= 86400 {
			return clock{}, false
		}
		if z[0] == '-' {
			off = -off
		}
		c.aware, c.offset = true, off
	}
	return c, true
}
