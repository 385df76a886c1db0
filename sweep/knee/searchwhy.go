package knee

import "fmt"

// The adaptive search's reasons (Step.Why, Step.Skipped, Step.Done) are
// worded here, from the numbers search.go's rules read; nothing here
// decides anything.

// verdictWhy is the verdict r for a person: "knee c32 (ok)", "knee c32
// (ambiguous)", "unsaturated (99.2 % likely)", "saturated at its first point c1",
// "too few usable points for a verdict".
func verdictWhy(r *Result) string {
	switch {
	case r.Status == StatusSaturatedAtMin:
		return fmt.Sprintf("saturated at its first point c%d", r.Knee)
	case r.HasKnee():
		return fmt.Sprintf("knee c%d (%s)", r.Knee, r.Status)
	case r.Status == StatusUnsaturated:
		if r.gateLikely > 0 {
			return fmt.Sprintf("unsaturated (%.1f %% likely)", 100*r.gateLikely)
		}
		return "unsaturated"
	}
	return "too few usable points for a verdict"
}

// doneWhy is what a search that ends on r says (Step.Done): its verdict,
// and for an ambiguous knee that the search runs no replicates of the
// points that would settle it.
func doneWhy(r *Result) string {
	v := verdictWhy(r)
	if r.Status == StatusAmbiguous && len(r.Settle) > 0 {
		v += fmt.Sprintf("; replicates of %s would settle it, and the adaptive search measures each point once", concList(r.Settle))
	}
	return v
}

// pct is a relative value in percent: 0.091 → "9.1 %".
func pct(f float64) string { return fmt.Sprintf("%.1f %%", 100*f) }

// againWhy is the reason of a probe at c measured again at the full
// length, because (why).
func againWhy(c int, why string) string {
	return fmt.Sprintf("c%d again at full length: %s", c, why)
}

// againEach is againWhy for each of cs.
func againEach(cs []int, why string) map[int]string {
	m := make(map[int]string, len(cs))
	for _, c := range cs {
		m[c] = againWhy(c, why)
	}
	return m
}

// gateWhy words a gain per doubling from below to top against the gate,
// with band two standard deviations of it: "gain 9.1 % per doubling
// from c24 to c32 lies within 2σ (±12.0 %) of the 10.0 % gate".
func gateWhy(below, top int, gain, band, gate float64) string {
	return fmt.Sprintf("gain %s per doubling from c%d to c%d lies within 2σ (±%s) of the %s gate", pct(gain), below, top, pct(band), pct(gate))
}
