package compare

import (
	"math"
	"sort"
	"sweep/internal/stats"
)

// frontierSteps is how many interactivities the frontier Δ is read at.
const frontierSteps = 5

// FrontierReport compares the two sides' throughput-interactivity Pareto
// frontiers: throughput per GPU (log-log interpolated between frontier
// points) at interactivities both cover. It is reported beside the
// verdict and never changes it.
type FrontierReport struct {
	Covered bool   `json:"covered"`
	Reason  string `json:"reason,omitempty"` // why not covered
	// IntvtyRange is the interactivity range (tok/s/user, p50) both
	// frontiers cover.
	IntvtyRange *[2]float64 `json:"intvty_range,omitempty"`
	// DeltaPct is the geometric mean change of throughput per GPU over At.
	DeltaPct *float64       `json:"delta_pct,omitempty"`
	At       []FrontierStep `json:"at,omitempty"`
}

// FrontierStep is both frontiers read at one interactivity.
type FrontierStep struct {
	Intvty   float64 `json:"intvty"`
	Base     float64 `json:"base"`
	Head     float64 `json:"head"`
	DeltaPct float64 `json:"delta_pct"`
}

type xy struct{ x, y float64 }

// paretoOf is a side's frontier over the concurrencies concs: per
// concurrency the mean interactivity and mean throughput per GPU of its
// valid full-length results (a short probe of the adaptive search is not
// a point's reading), then only the points
// no other point beats on both; sorted by interactivity (throughput then
// falls along it).
func paretoOf(s *side, m Metric, concs []int) []xy {
	tm := MetricTotal
	if m == MetricOutput {
		tm = MetricOutput
	}
	var pts []xy
	for _, c := range concs {
		var xs, ys []float64
		for _, smp := range s.byConc[c] {
			if smp.Excluded != "" || smp.Probe {
				continue
			}
			x, y := interactivity(smp), tm.value(smp)
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
	fb, fh := paretoOf(b, m, concs), paretoOf(h, m, concs)
	if len(fb) < 2 || len(fh) < 2 {
		return FrontierReport{Reason: "fewer than two frontier points with interactivity on a side"}
	}
	lo := math.Max(fb[0].x, fh[0].x)
	hi := math.Min(fb[len(fb)-1].x, fh[len(fh)-1].x)
	if !(lo < hi) {
		return FrontierReport{Reason: "the two frontiers cover no common interactivity"}
	}
	r := FrontierReport{Covered: true, IntvtyRange: &[2]float64{round(lo, 3), round(hi, 3)}}
	var sum float64
	for i := range frontierSteps {
		x := math.Exp(math.Log(lo) + float64(i)/float64(frontierSteps-1)*(math.Log(hi)-math.Log(lo)))
		yb, yh := at(fb, x), at(fh, x)
		sum += math.Log(yh / yb)
		r.At = append(r.At, FrontierStep{Intvty: round(x, 3), Base: round(yb, 3), Head: round(yh, 3), DeltaPct: round(100*(yh/yb-1), 3)})
	}
	r.DeltaPct = ptr(round(pct(sum/frontierSteps), 3))
	return r
}
