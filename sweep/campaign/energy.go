package campaign

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"sweep/metrics/power"
	"sweep/sweep/knee"
	"sweep/sweep/run"
)

// EnergyLeftOutWhy says why a point whose power was measured is left out
// of the energy lines (sweep knees, a discovery's summary) and the
// report's energy table when its measurement is not valid, where they
// list such points (EnergyLeftOut).
const EnergyLeftOutWhy = "the power adapter, as InferenceX's, integrates every GPU the node's monitor recorded and expects TP×PP×PCP of them, so a point that shares its node with GPUs it does not use is never valid unless only its GPUs are integrated"

// EnergyLeftOut says, arm by arm, which points the energy lines and
// table leave out and why, one line per arm and reason ("ARM c4, c8:
// REASONS"): each measured point whose power lane ran but whose
// measurement is invalid, grouped by its reasons as the point's
// power_validation.json gives them (power.ReadOutcome, GPU counts named),
// with the fix for a point that shares its node (run.AllocatedFix). A
// failed point is listed with the failed points, not here.
func EnergyLeftOut(rs []*knee.Result) []string {
	var out []string
	for _, r := range rs {
		var whys []string               // distinct reasons, in the order first met
		points := map[string][]string{} // reason: the points it holds for
		for _, s := range r.Arm.Samples {
			if s.File == "" || s.Excluded != "" || s.Superseded {
				continue
			}
			o, ok := power.ReadOutcome(filepath.Dir(s.File))
			if !ok || o.Valid {
				continue
			}
			why := strings.Join(o.Explained(), ", ")
			if fix := run.AllocatedFix(o); fix != "" {
				why += "; " + fix
			}
			if _, seen := points[why]; !seen {
				whys = append(whys, why)
			}
			if c := r.PointName(s.Conc); !slices.Contains(points[why], c) {
				points[why] = append(points[why], c)
			}
		}
		for _, why := range whys {
			out = append(out, fmt.Sprintf("%s %s: %s", r.Arm.Identity.Label(), strings.Join(points[why], ", "), why))
		}
	}
	return out
}

// writeEnergyLeftOut prints, under the energy lines knee.WriteTable
// prints, the points they leave out (EnergyLeftOut) under "energy left
// out (power measured, not valid: EnergyLeftOutWhy)"; nothing when there
// is none.
func writeEnergyLeftOut(w io.Writer, rs []*knee.Result) error {
	left := EnergyLeftOut(rs)
	if len(left) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nenergy left out (power measured, not valid: %s):\n", EnergyLeftOutWhy)
	for _, l := range left {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
