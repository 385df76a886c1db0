package knee

import (
	"sort"
)

// Axis is the interactivity statistic a frontier is drawn against.
type Axis string

// Axes (InferenceX's default x-axis is E2E-normalised interactivity at
// P90; the median 1/ITL view is the classic one).
const (
	AxisE2ENormP90 Axis = "e2e_norm_intvty_p90"
	AxisMedian     Axis = "intvty_p50"
)

// Title names the axis for a chart or table.
func (a Axis) Title() string {
	if a == AxisMedian {
		return "interactivity, median 1/ITL (tok/s/user)"
	}
	return "interactivity, P90 E2E-normalised (tok/s/user)"
}

// ParetoPoint is one usable point of one arm on the throughput/GPU vs
// interactivity plane.
type ParetoPoint struct {
	Result     *Result
	Conc       int
	Intvty     float64 // on the frontier's axis
	Throughput float64 // per GPU, the analysis metric
	OnFrontier bool
}

// Frontier is the upper-right Pareto frontier of the arms of one config
// key: a point is on it when no other point has both higher (or equal)
// interactivity and higher throughput per GPU.
type Frontier struct {
	Group  string // the config key side of the arms (Identity.GroupLabel)
	Axis   Axis
	Points []ParetoPoint // every usable point of every arm, on and off the frontier
}

// OnFrontier returns the frontier points by interactivity descending.
func (f *Frontier) OnFrontier() []ParetoPoint {
	var out []ParetoPoint
	for _, p := range f.Points {
		if p.OnFrontier {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Intvty > out[j].Intvty })
	return out
}

// Contributes reports whether r has a point on the frontier.
func (f *Frontier) Contributes(r *Result) bool {
	for _, p := range f.Points {
		if p.OnFrontier && p.Result == r {
			return true
		}
	}
	return false
}

// Frontiers groups results by config key and computes each group's
// frontier on axis (peers' §2.5): points without a positive interactivity
// are left out; sort by interactivity descending, ties by throughput
// descending, and keep a point when its throughput is strictly above every
// throughput kept so far.
func Frontiers(rs []*Result, axis Axis) []*Frontier {
	var out []*Frontier
	by := map[string]*Frontier{}
	for _, r := range rs {
		k := r.Arm.Identity.GroupKey()
		f := by[k]
		if f == nil {
			f = &Frontier{Group: r.Arm.Identity.GroupLabel(), Axis: axis}
			by[k] = f
			out = append(out, f)
		}
		for _, p := range r.Points {
			if !p.Usable {
				continue
			}
			iv := p.E2ENormP90
			if axis == AxisMedian {
				iv = p.Intvty
			}
			if iv == nil || *iv <= 0 {
				continue
			}
			f.Points = append(f.Points, ParetoPoint{Result: r, Conc: p.Conc, Intvty: *iv, Throughput: *p.Throughput})
		}
	}
	for _, f := range out {
		idx := make([]int, len(f.Points))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool {
			pa, pb := f.Points[idx[a]], f.Points[idx[b]]
			if pa.Intvty != pb.Intvty {
				return pa.Intvty > pb.Intvty
			}
			return pa.Throughput > pb.Throughput
		})
		best := 0.0
		for _, i := range idx {
			if p := &f.Points[i]; p.Throughput > best {
				p.OnFrontier, best = true, p.Throughput
			}
		}
	}
	return out
}
