package main

import (
	"slices"

	"sweep/configs/matrix"
	"sweep/recipes"
)

// planMultiNode prints the plan of multi-node agentic rows: roles, nodes,
// GPUs, worker and router commands, and the submission (sbatch or srtctl
// apply) as the runner's launcher does it. rows[multi] is the first
// multi-node row; a selection that mixes single-node and multi-node keys
// is a usage error (their plans have different shapes).
func (o *planOptions) planMultiNode(rows matrix.Matrix, multi int) error {
	if single := slices.IndexFunc(rows, func(r *matrix.Row) bool { return !recipes.IsMultiNodeRow(r) }); single >= 0 {
		return flagErrorf("--config-keys selects single-node (%s) and multi-node (%s) keys; plan them separately",
			rows[single].ConfigKey, rows[multi].ConfigKey)
	}
	points, err := recipes.PlanMultiNode(rows, o.Plan)
	if err != nil {
		return planFailure(err)
	}
	if o.Format == "json" {
		return writeIndentedJSON(o.IO.Out, points)
	}
	return recipes.WriteMultiNodeText(o.IO.Out, points)
}
