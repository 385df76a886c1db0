package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
)

// pow2Ticks labels a log2 axis at powers of two.
type pow2Ticks struct{}

// maxPow2Ticks bounds a log2 axis's ticks: 2^64 is beyond any
// concurrency.
const maxPow2Ticks = 64

func (pow2Ticks) Ticks(lo, hi float64) []plot.Tick {
	lo, hi, ok := log2Range(lo, hi)
	if !ok {
		return nil
	}
	var ts []plot.Tick
	for v := math.Pow(2, math.Floor(math.Log2(lo))); v <= hi*1.0001 && len(ts) < maxPow2Ticks; v *= 2 {
		if v >= lo*0.9999 {
			ts = append(ts, plot.Tick{Value: v, Label: fmt.Sprintf("%g", v)})
		}
	}
	return ts
}

// niceTicks labels a linear axis at 4 to 10 round values (1, 2 or 5 times
// a power of ten apart), each with the digits it needs and no more:
// "25000", "0.5". gonum's default marker labels 0..27000 as "0.00" and
// "25000.00" only.
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	base := math.Pow(10, math.Floor(math.Log10((hi-lo)/4)))
	step := base
	for _, m := range []float64{1, 2, 5, 10} {
		if step = base * m; (hi-lo)/step <= 10 {
			break
		}
	}
	decimals := max(0, -int(math.Floor(math.Log10(step))))
	var ts []plot.Tick
	for i := math.Ceil(lo/step - 1e-9); i*step <= hi+step*1e-9; i++ {
		v := i * step
		if v == 0 {
			v = 0 // never "-0"
		}
		label := strconv.FormatFloat(v, 'f', decimals, 64)
		if strings.Contains(label, ".") {
			label = strings.TrimRight(strings.TrimRight(label, "0"), ".")
		}
		ts = append(ts, plot.Tick{Value: v, Label: label})
		if mid := v + step/2; mid <= hi {
			ts = append(ts, plot.Tick{Value: mid}) // a minor tick
		}
	}
	return ts
}

// log2Scale maps x to log2 x on the axis.
type log2Scale struct{}

func (log2Scale) Normalize(lo, hi, x float64) float64 {
	lo, hi, ok := log2Range(lo, hi)
	if !ok {
		return 0.5
	}
	return (math.Log2(x) - math.Log2(lo)) / (math.Log2(hi) - math.Log2(lo))
}

// log2Range is the range a log2 axis draws for gonum's [lo, hi], and
// whether it can draw one. A log axis has no 0, but gonum pads an axis
// whose data is a single value by ±1, so an arm measured at c1 alone
// gets [0, 2]: a lower end at or below 0 is taken as a quarter of the
// upper one ([0.5, 2], c1 in the middle). (Its ticks once doubled 0
// forever: the report of such an arm grew to the machine's memory.)
func log2Range(lo, hi float64) (float64, float64, bool) {
	if !(hi > 0) || math.IsInf(hi, 0) || math.IsNaN(lo) {
		return 0, 0, false
	}
	if lo <= 0 {
		lo = hi / 4
	}
	return lo, hi, hi > lo
}
