package matrix

import (
	"fmt"
	"slices"

	"sweep/configs"
)

// AgenticRows resolves key patterns as every command does (ResolveKeys:
// an unknown key or a pattern that matches none is a *KeyError), checks
// that the keys' configs can run on their runners (configs.CheckHardware)
// and returns their agentic-coding rows, only the concurrencies conc when
// given, with the resolved keys.
func (g *Generator) AgenticRows(patterns []string, conc []int, evals EvalOptions) (Matrix, []string, error) {
	ms, err := ResolveKeys(g.Masters, patterns)
	if err != nil {
		return nil, nil, err
	}
	keys := make([]string, len(ms))
	for i, m := range ms {
		keys[i] = m.Key
	}
	if err := configs.CheckHardware(g.Masters, g.Runners, keys...); err != nil {
		return nil, nil, fmt.Errorf("the configs cannot run on their runners:\n%w", err)
	}
	rows, err := g.TestConfig(TestConfigOptions{ConfigKeys: keys, Conc: conc, ScenarioTypes: []string{"agentic-coding"}, EvalOptions: evals})
	if err != nil {
		return nil, nil, err
	}
	return rows, keys, nil
}

// ArmLayout is the layout --tp, --ep and --dp-attn select a row by, in
// sweep run, discover and plan alike: a multi-node row's prefill
// workers' (its own TP and EP are 0), any other row's own.
func (r *Row) ArmLayout() configs.Parallelism {
	if r.Kind == AgenticMultiNode && r.Prefill != nil {
		return r.Prefill.Parallelism
	}
	return r.Parallelism
}

// SelectArms keeps the rows of the arms with one of the tensor parallel
// sizes tp, the expert parallel sizes ep and, when dpAttn is set, that
// DP-attention setting (empty lists: any), of their ArmLayout. arms lists
// every arm of m in sweep run's flags ("--tp 8 --ep 8 --dp-attn", "(prefill)"
// after a multi-node arm's), for saying what there is when nothing is kept.
func (m Matrix) SelectArms(tp, ep []int, dpAttn *bool) (kept Matrix, arms []string) {
	for _, r := range m {
		l := r.ArmLayout()
		if (len(tp) == 0 || slices.Contains(tp, l.TP)) && (len(ep) == 0 || slices.Contains(ep, l.EP)) && (dpAttn == nil || *dpAttn == l.DPAttn) {
			kept = append(kept, r)
		}
		arm := fmt.Sprintf("--tp %d --ep %d", l.TP, l.EP)
		if l.DPAttn {
			arm += " --dp-attn"
		}
		if r.Kind == AgenticMultiNode {
			arm += " (prefill)"
		}
		if !slices.Contains(arms, arm) {
			arms = append(arms, arm)
		}
	}
	return kept, arms
}

// HasAgenticMultiNode reports whether m holds a disaggregated multi-node
// agentic row.
func (m Matrix) HasAgenticMultiNode() bool {
	return slices.ContainsFunc(m, func(r *Row) bool { return r.Kind == AgenticMultiNode })
}
