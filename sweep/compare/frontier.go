package compare

import (
	"fmt"
	"math"
	"sort"

	"sweep/internal/stats"
	"sweep/sweep/knee"
)

// frontierSteps is how many interactivities the frontier Δ is read at.
const frontierSteps = 5

// FrontierReport compares the two sides' throughput-interactivity Pareto
// frontiers: throughput per GPU (log-log interpolated between frontier
// points) at interactivities both cover, on the axis of the report's
// charts (P90 E2E-normalised interactivity; median 1/ITL where a paired
// point lacks it). It says how far each frontier reaches and compares
// their peaks, so a high-throughput region only one side reaches is not
// lost from view. It is reported beside the verdict and never changes
// it; with a metric other than throughput (total, output) there is none.
type FrontierReport struct {
	Covered bool   `json:"covered"`
	Reason  string `json:"reason,omitempty"` // why not covered
	// Axis is the interactivity the frontiers are drawn against
	// (knee.AxisE2ENormP90 or knee.AxisMedian), "" without frontiers.
	Axis knee.Axis `json:"axis,omitempty"`
	// IntvtyRange is the interactivity range (tok/s/user) both
	// frontiers cover: the range DeltaPct is read over.
	IntvtyRange *[2]float64 `json:"intvty_range,omitempty"`
	// BaseRange and HeadRange are the interactivity ranges each side's
	// frontier covers.
	BaseRange *[2]float64 `json:"base_range,omitempty"`
	HeadRange *[2]float64 `json:"head_range,omitempty"`
	// BasePeak and HeadPeak are each frontier's highest throughput per
	// GPU (its low-interactivity end), PeakDeltaPct their change: a
	// high-throughput region HEAD no longer reaches lies outside
	// IntvtyRange, so DeltaPct does not show it and PeakDeltaPct does.
	BasePeak     float64  `json:"base_peak,omitempty"`
	HeadPeak     float64  `json:"head_peak,omitempty"`
	PeakDeltaPct *float64 `json:"peak_delta_pct,omitempty"`
	// DeltaPct is the geometric mean change of throughput per GPU over At.
	DeltaPct *float64       `json:"delta_pct,omitempty"`
	At       []FrontierStep `json:"at,omitempty"`
	// Coverage says in words what the frontier Δ covers and what lies
	// outside it.
	Coverage string `json:"coverage,omitempty"`
}

// FrontierStep is both frontiers read at one interactivity.
type FrontierStep struct {
	Intvty   float64 `json:"intvty"`
	Base     float64 `json:"base"`
	Head     float64 `json:"head"`
	DeltaPct float64 `json:"delta_pct"`
}

type xy struct{ x, y float64 }

// frontierSamples are the results a side's frontier reads at a
// concurrency: its valid full-length ones (a short probe of the adaptive
// search is not a point's reading).
func frontierSamples(s *side, c int) []*knee.Sample {
	var out []*knee.Sample
	for _, smp := range s.byConc[c] {
		if smp.Excluded == "" && !smp.Probe {
			out = append(out, smp)
		}
	}
	return out
}

// frontierAxis is the axis both sides' frontiers are drawn against over
// concs: P90 E2E-normalised interactivity when every result read has it,
// else median 1/ITL.
func frontierAxis(b, h *side, concs []int) knee.Axis {
	for _, s := range []*side{b, h} {
		for _, c := range concs {
			for _, smp := range frontierSamples(s, c) {
				if x := interactivity(smp, knee.AxisE2ENormP90); x == nil {
					return knee.AxisMedian
				}
			}
		}
	}
	return knee.AxisE2ENormP90
}

// paretoOf is a side's frontier over the concurrencies concs: per
// concurrency the mean interactivity on axis and mean throughput per GPU
// of its frontier samples, then only the points no other point beats on
// both; sorted by interactivity (throughput then falls along it).
func paretoOf(s *side, m Metric, axis knee.Axis, concs []int) []xy {
	var pts []xy
	for _, c := range concs {
		var xs, ys []float64
		for _, smp := range frontierSamples(s, c) {
			x, y := interactivity(smp, axis), m.value(smp)
			if x == nil || y == nil {
				continue
			}
			xs, ys = append(xs, *x), append(ys, *y)
		}
		if len(xs) > 0 {
			pts = append(pts, xy{stats.Mean(xs), stats.Mean(ys)})
		}
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].x < pts[j].x })
	var front []xy
	best := math.Inf(-1)
	for i := len(pts) - 1; i >= 0; i-- {
		if pts[i].y > best {
			front = append(front, pts[i])
			best = pts[i].y
		}
	}
	for i, j := 0, len(front)-1; i < j; i, j = i+1, j-1 {
		front[i], front[j] = front[j], front[i]
	}
	return front
}

// at interpolates the frontier at x, linearly in log-log.
func at(f []xy, x float64) float64 {
	i := sort.Search(len(f), func(i int) bool { return f[i].x >= x })
	switch {
	case i == 0:
		return f[0].y
	case i == len(f):
		return f[len(f)-1].y
	}
	a, b := f[i-1], f[i]
	t := (math.Log(x) - math.Log(a.x)) / (math.Log(b.x) - math.Log(a.x))
	return math.Exp(math.Log(a.y) + t*(math.Log(b.y)-math.Log(a.y)))
}

// frontier compares the two sides' frontiers over the paired
// concurrencies concs only: both drawn through the same concurrencies, so
// a side measured at fewer of them (an adaptive discovery against a full
// grid) does not read lower where its frontier cuts a chord between
// points the other side has (identical engines read 20 % apart that way).
func frontier(b, h *side, m Metric, concs []int) FrontierReport {
	if m != MetricTotal && m != MetricOutput {
		return FrontierReport{Reason: fmt.Sprintf("the frontier compares throughput per GPU; --metric %s is compared per point only", m)}
	}
	axis := frontierAxis(b, h, concs)
	fb, fh := paretoOf(b, m, axis, concs), paretoOf(h, m, axis, concs)
	if len(fb) < 2 || len(fh) < 2 {
		return FrontierReport{Axis: axis, Reason: "fewer than two frontier points with interactivity on a side"}
	}
	r := FrontierReport{Axis: axis,
		BaseRange: &[2]float64{roundSig(fb[0].x, 4), roundSig(fb[len(fb)-1].x, 4)},
		HeadRange: &[2]float64{roundSig(fh[0].x, 4), roundSig(fh[len(fh)-1].x, 4)},
		BasePeak:  roundSig(fb[0].y, 6), HeadPeak: roundSig(fh[0].y, 6),
		PeakDeltaPct: ptr(round(100*(fh[0].y/fb[0].y-1), 3))}
	lo := math.Max(fb[0].x, fh[0].x)
	hi := math.Min(fb[len(fb)-1].x, fh[len(fh)-1].x)
	if !(lo < hi) {
		r.Reason = "the two frontiers cover no common interactivity"
		r.Coverage = coverage(r, fb, fh, lo, hi)
		return r
	}
	r.Covered = true
	r.IntvtyRange = &[2]float64{roundSig(lo, 4), roundSig(hi, 4)}
	var sum float64
	for i := range frontierSteps {
		x := math.Exp(math.Log(lo) + float64(i)/float64(frontierSteps-1)*(math.Log(hi)-math.Log(lo)))
		yb, yh := at(fb, x), at(fh, x)
		sum += math.Log(yh / yb)
		r.At = append(r.At, FrontierStep{Intvty: roundSig(x, 4), Base: roundSig(yb, 6), Head: roundSig(yh, 6), DeltaPct: round(100*(yh/yb-1), 3)})
	}
	r.DeltaPct = ptr(round(pct(sum/frontierSteps), 3))
	r.Coverage = coverage(r, fb, fh, lo, hi)
	return r
}

// coverage says over which interactivities the frontier Δ is read and
// which part of a side's frontier lies outside them: "Δ over 41.8–168.6
// tok/s/user; only BASE reaches below 41.8 (15.0–41.8, up to 23011.1
// tok/s/GPU); peak 23011.1 → 20525.3 tok/s/GPU (-10.80 %)". A reach
// narrower than the figures print (14.98 beside 15.02: "15.0–15.0") is
// none: it is left out, and the peaks are compared all the same.
func coverage(r FrontierReport, fb, fh []xy, lo, hi float64) string {
	var s string
	if r.Covered {
		s = fmt.Sprintf("Δ over %s–%s tok/s/user", num(lo), num(hi))
	} else {
		s = "no common interactivity"
	}
	for _, sd := range []struct {
		name string
		f    []xy
	}{{"BASE", fb}, {"HEAD", fh}} {
		f := sd.f
		if f[0].x < lo && num(f[0].x) != num(lo) {
			s += fmt.Sprintf("; only %s reaches below %s (%s–%s, up to %s tok/s/GPU)", sd.name, num(lo), num(f[0].x), num(lo), num(f[0].y))
		}
		if f[len(f)-1].x > hi && num(f[len(f)-1].x) != num(hi) {
			s += fmt.Sprintf("; only %s reaches above %s (%s–%s)", sd.name, num(hi), num(hi), num(f[len(f)-1].x))
		}
	}
	return s + fmt.Sprintf("; peak %s → %s tok/s/GPU (%+.2f %%)", num(fb[0].y), num(fh[0].y), *r.PeakDeltaPct)
}

// num prints a frontier figure with one decimal, or three below 10.
func num(v float64) string {
	if math.Abs(v) < 10 {
		return fmt.Sprintf("%.3g", v)
	}
	return fmt.Sprintf("%.1f", v)
}
