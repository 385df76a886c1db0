package loadgen

import (
	"slices"
	"sweep/internal/stats"
)

// percentiles aiperf reports for every record metric, in its key order.
var percentiles = []struct {
	key string
	p   float64
}{{"p1", 1}, {"p5", 5}, {"p10", 10}, {"p25", 25}, {"p50", 50}, {"p75", 75}, {"p90", 90}, {"p95", 95}, {"p99", 99}}

// field is one key/value of an ordered JSON object.
type field struct {
	Key   string
	Value any
}

// object is a JSON object that keeps its key order (aiperf's exports are
// ordered, which keeps diffs against real files readable).
type object []field

// get is the value of the last field named key (as a JSON decoder would
// keep it), or nil.
func (o object) get(key string) any {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].Key == key {
			return o[i].Value
		}
	}
	return nil
}

// recordStats is the stats block of a record metric: unit, avg, p1..p99,
// min, max, std, count, sum.
func recordStats(unit string, xs []float64) object {
	s := slices.Clone(xs)
	slices.Sort(s)
	mean, std := stats.Mean(s), stats.PopStd(s)
	o := object{{"unit", unit}, {"avg", num(mean)}}
	for _, p := range percentiles {
		o = append(o, field{p.key, num(stats.Percentile(s, p.p))})
	}
	var sum float64
	for _, x := range s {
		sum += x
	}
	o = append(o, field{"min", num(s[0])}, field{"max", num(s[len(s)-1])}, field{"std", num(std)},
		field{"count", len(s)}, field{"sum", rawFloat(sum)})
	return o
}

// single is the block of a derived or aggregate metric: unit and avg.
func single(unit string, v float64) object {
	return object{{"unit", unit}, {"avg", rawFloat(v)}}
}

// num is a float written the way aiperf writes a stat: integral values
// as integers where numpy kept ints, null for NaN/Inf.
type num float64

// rawFloat is a float always written with a fractional part (Python
// float), e.g. 64.0; null for NaN/Inf.
type rawFloat float64
