package recipes

import (
	"fmt"

	"sweep/configs/matrix"
)

// Unsupported returns why sweep cannot plan the row yet ("" when it can
// route it to a recipe). The reason names the row's kind or engine.
func Unsupported(r *matrix.Row) string {
	fw := r.Framework
	switch {
	case IsMultiNodeRow(r):
		return fmt.Sprintf("multi-node or disaggregated serving (framework %s); PlanMultiNode plans it (sweep plan), single-node plans and runs cover single-node SGLang and vLLM engines only", fw)
	case !r.Kind.Agentic():
		return "fixed-seq-len scenario; sweep plans agentic-coding points only"
	case !fw.Runs():
		return fmt.Sprintf("engine %s (framework %s); sweep has SGLang and vLLM recipes only", fw.Facts().Display, fw)
	}
	return ""
}

// unsupportedProblems returns one problem per config key for the rows
// Unsupported rejects, and the indexes of those rows.
func unsupportedProblems(rows matrix.Matrix) ([]*Problem, map[int]bool) {
	type group struct {
		first int
		n     int
		why   string
	}
	groups := map[string]*group{}
	var order []string
	skip := map[int]bool{}
	for i, r := range rows {
		why := Unsupported(r)
		if why == "" {
			continue
		}
		skip[i] = true
		id := r.ConfigKey + "\x00" + why
		g, ok := groups[id]
		if !ok {
			g = &group{first: i, why: why}
			groups[id] = g
			order = append(order, id)
		}
		g.n++
	}
	probs := make([]*Problem, 0, len(order))
	for _, id := range order {
		g := groups[id]
		probs = append(probs, &Problem{
			Index: g.first, ConfigKey: rows[g.first].ConfigKey, Point: fmt.Sprintf("(%d point(s))", g.n),
			Role: "recipe", Err: fmt.Errorf("%w: %s", ErrNotSupported, g.why),
		})
	}
	return probs, skip
}
