package compare

import (
	"fmt"
	"slices"
	"strings"

	"sweep/sweep/knee"
	"sweep/sweep/run"
)

// engineFlags is the engine flags recorded beside a result file
// (run.EngineFlags) less the volatile ones (run.VolatileFlags); nil when
// there is none.
func engineFlags(resultFile string) map[string]string {
	flags := run.EngineFlags(resultFile)
	for _, name := range run.VolatileFlags {
		delete(flags, name)
	}
	return flags
}

// sideFlags is the engine flags of a point's first result that has its
// command recorded.
func sideFlags(ss []*knee.Sample) map[string]string {
	for _, s := range ss {
		if f := engineFlags(s.File); f != nil {
			return f
		}
	}
	return nil
}

// flagDiffs lists how the engine flags differ from base to head at the
// paired points, each difference with the concurrencies it holds at:
// "--mem-fraction-static 0.8 → 0.85 (every paired point)". Points
// without a recorded command on either side are skipped.
func flagDiffs(b, h *side, concs []int) []string {
	at := map[string][]int{}
	var order []string
	compared := 0
	for _, c := range concs {
		fb, fh := sideFlags(b.byConc[c]), sideFlags(h.byConc[c])
		if fb == nil || fh == nil {
			continue
		}
		compared++
		var diffs []string
		for k, v := range fb {
			hv, ok := fh[k]
			switch {
			case !ok:
				diffs = append(diffs, fmt.Sprintf("%s removed", flagText(k, v)))
			case hv != v:
				diffs = append(diffs, fmt.Sprintf("%s %s → %s", k, orBare(v), orBare(hv)))
			}
		}
		for k, v := range fh {
			if _, ok := fb[k]; !ok {
				diffs = append(diffs, fmt.Sprintf("%s added", flagText(k, v)))
			}
		}
		for _, d := range diffs {
			if _, seen := at[d]; !seen {
				order = append(order, d)
			}
			at[d] = append(at[d], c)
		}
	}
	slices.Sort(order)
	out := make([]string, 0, len(order))
	for _, d := range order {
		where := "every paired point"
		if len(at[d]) < compared {
			where = "conc " + strings.Trim(strings.Join(strings.Fields(fmt.Sprint(at[d])), ", "), "[]")
		}
		out = append(out, fmt.Sprintf("engine flag %s (%s)", d, where))
	}
	return out
}

func flagText(k, v string) string {
	if v == "" {
		return k
	}
	return k + " " + v
}

func orBare(v string) string {
	if v == "" {
		return "(bare)"
	}
	return v
}
