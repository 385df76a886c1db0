package recipes

import (
	"strings"

	"sweep/configs/matrix"
)

// PlanMultiNode plans multi-node and disaggregated agentic rows as
// InferenceX's multi-node launchers run them. A row that cannot be planned
// is a *PlanError problem; one that sweep does not cover yet wraps
// ErrNotSupported with the exact reason.
func PlanMultiNode(rows matrix.Matrix, opts PlanOptions) ([]MultiNodePoint, error) {
	cfg, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		if err := CheckRunner(row, cfg.Runners, cfg.RunnerName); err != nil {
			return nil, err
		}
	}
	var out []MultiNodePoint
	var probs []*Problem
	for i, r := range rows {
		p, err := cfg.planMultiNode(r)
		if err != nil {
			probs = append(probs, &Problem{Index: i, ConfigKey: r.ConfigKey, Point: describe(r), Role: "recipe", Err: err})
			continue
		}
		out = append(out, p)
	}
	if len(probs) > 0 {
		return nil, &PlanError{Problems: mergeNotSupported(probs)}
	}
	return out, nil
}

func (o *planConfig) planMultiNode(r *matrix.Row) (MultiNodePoint, error) {
	if !r.Kind.Agentic() {
		return MultiNodePoint{}, notSupported("fixed-seq-len scenario; sweep plans agentic-coding points only")
	}
	if r.Kind != matrix.AgenticMultiNode || r.Prefill == nil || r.Decode == nil {
		return MultiNodePoint{}, notSupported("framework %s on a single-node row: InferenceX runs it only through a multi-node launcher", r.Framework)
	}
	runner := o.RunnerName
	if runner == "" {
		runner = RunnerName(r, o.Runners)
	}
	runner = strings.TrimPrefix(runner, "cluster:")
	launcher, _, _ := strings.Cut(runner, "_")
	p := MultiNodePoint{Row: *r.Clone(), Launcher: launcher, Disagg: r.Disagg, ResultFilename: MultiNodeResultFilename(r, runner)}
	if r.Disagg {
		p.KVTransfer = r.KVP2PTransfer
	}
	var err error
	switch {
	case strings.HasSuffix(string(r.Framework), "-disagg"):
		err = o.planAMDDisagg(&p, runner)
	default:
		err = planSrtSlurm(&p, runner)
	}
	if err != nil {
		return MultiNodePoint{}, err
	}
	for _, role := range p.Roles {
		p.Nodes += role.Nodes
		p.GPUs += role.GPUs
	}
	return p, nil
}
