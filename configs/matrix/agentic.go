package matrix

import (
	"fmt"
	"slices"
	"strings"

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

// SelectPoint is the one rule sweep run and an A/B leg's config-key arm
// pick a point's row by: the rows of m at the point (at: its layout and
// concurrency) whose KV offloading is kv (configs.KVOffloadModes; ""
// any). Rows there of one KV offloading are one point, and the first is
// its row. Rows that differ in KV offloading (a key with a kv:none and a
// kv:dram search space at one concurrency) are no row to take silently:
// they are a *KVChoiceError listing them, and the kv of one picks it. No
// row at the point is a nil row and no error; the caller lists the points
// there are (KVPicks names the kv of those that need one).
func (m Matrix) SelectPoint(at func(*Row) bool, kv string) (*Row, error) {
	var match Matrix
	for _, r := range m {
		if at(r) && (kv == "" || r.KVOffloading == kv) {
			match = append(match, r)
		}
	}
	if len(match) == 0 {
		return nil, nil
	}
	if slices.ContainsFunc(match, func(r *Row) bool { return r.KVOffloading != match[0].KVOffloading }) {
		return nil, &KVChoiceError{Rows: match}
	}
	return match[0], nil
}

// KVChoiceError is SelectPoint's refusal of a point whose rows differ in
// KV offloading when none was asked for. Rows are the point's rows in the
// matrix's order, each picked by its own KVOffloading; callers word the
// refusal with the setting that picks one (sweep run's --kv-offloading,
// a leg arm's kv-offloading).
type KVChoiceError struct {
	Rows Matrix
}

func (e *KVChoiceError) Error() string {
	picks := make([]string, len(e.Rows))
	for i, r := range e.Rows {
		picks[i] = fmt.Sprintf("kv-offloading %s (%s)", r.KVOffloading, r.ExpName)
	}
	return fmt.Sprintf("%d rows of one point differ in KV offloading; name the kv-offloading of one: %s", len(e.Rows), strings.Join(picks, ", "))
}

// KVPicks gives each row of m the KV offloading that picks it among the
// rows of its point (point: a row's layout and concurrency as one
// string): its own where another row of that point has another, "" where
// every row of its point has its KV offloading, so none is needed.
func (m Matrix) KVPicks(point func(*Row) string) func(*Row) string {
	modes := map[string]map[string]bool{}
	for _, r := range m {
		p := point(r)
		if modes[p] == nil {
			modes[p] = map[string]bool{}
		}
		modes[p][r.KVOffloading] = true
	}
	return func(r *Row) string {
		if len(modes[point(r)]) < 2 {
			return ""
		}
		return r.KVOffloading
	}
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
