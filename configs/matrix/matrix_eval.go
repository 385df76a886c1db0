package matrix

import (
	"slices"
)

// minEvalConc is the lowest concurrency the default eval policy picks for
// fixed-seq-len rows.
const minEvalConc = 16

func is8k1k(r *Row) bool { return !r.Kind.Agentic() && r.ISL == 8192 && r.OSL == 1024 }

type evalPick struct {
	index int
	conc  int
}

// bestPick returns the first pick with the highest conc.
func bestPick(ps []evalPick) evalPick {
	best := ps[0]
	for _, p := range ps[1:] {
		if p.conc > best.conc {
			best = p
		}
	}
	return best
}

// orderedGroups groups values by key and remembers the order keys were
// first seen, so results never depend on map iteration order.
type orderedGroups[K comparable, V any] struct {
	index map[K]int
	lists [][]V // per group, in first-seen order: its values in the order added
}

func (g *orderedGroups[K, V]) add(k K, v V) {
	if g.index == nil {
		g.index = map[K]int{}
	}
	i, ok := g.index[k]
	if !ok {
		i = len(g.lists)
		g.index[k] = i
		g.lists = append(g.lists, nil)
	}
	g.lists[i] = append(g.lists[i], v)
}

// parallelismKeys writes the generator's multi-node parallelism key: the
// row as canonical JSON without conc, exp-name and the eval fields, so two
// rows have the same key exactly when InferenceX's frozen dicts of them
// compare equal. The zero value is ready to use.
type parallelismKeys struct{ buf []byte }

func (p *parallelismKeys) of(r *Row) string {
	p.buf = appendRowJSON(p.buf[:0], r, styleCanonical, parallelismSkip)
	return string(p.buf)
}

// markEvals applies InferenceX's default eval policy (mark_eval_entries):
//
//   - fixed-seq-len single-node 8k1k rows, grouped by model, runner,
//     framework, precision, isl, osl, spec-decoding and dp-attn: among rows
//     with conc >= 16, the rows at the highest and at the median conc;
//   - fixed-seq-len multi-node 8k1k rows, grouped by everything but conc,
//     exp-name and eval fields: the row holding the group's highest
//     eligible conc, with eval-conc set to it;
//   - with includeAgentic: single-node agentic rows, grouped by model,
//     runner, framework and precision, the row with the highest conc;
//     multi-node agentic rows as fixed-seq-len multi-node rows.
//
// Every row gets run-eval.
func markEvals(rows Matrix, includeAgentic bool) {
	type snKey struct {
		model, runner, framework, precision string
		isl, osl                            int
		spec                                string
		dpAttn                              bool
	}
	type agKey struct{ model, runner, framework, precision string }
	var (
		sn     orderedGroups[snKey, int]
		mn     orderedGroups[string, evalPick] // by parallelism key
		agSN   orderedGroups[agKey, evalPick]
		agMN   orderedGroups[string, evalPick]
		picked = make([]bool, len(rows))
		par    parallelismKeys
	)
	for i, r := range rows {
		switch r.Kind {
		case FixedSingleNode:
			if !is8k1k(r) || r.Conc < minEvalConc {
				continue
			}
			sn.add(snKey{r.Model, r.Runner, string(r.Framework), r.Precision, r.ISL, r.OSL, r.SpecDecoding, r.DPAttn}, i)
		case FixedMultiNode:
			if !is8k1k(r) {
				continue
			}
			if c, ok := maxEligibleEvalConc(r); ok {
				mn.add(par.of(r), evalPick{i, c})
			}
		case AgenticSingleNode:
			if includeAgentic {
				agSN.add(agKey{r.Model, r.Runner, string(r.Framework), r.Precision}, evalPick{i, r.Conc})
			}
		case AgenticMultiNode:
			if !includeAgentic {
				continue
			}
			if c, ok := maxEligibleEvalConc(r); ok {
				agMN.add(par.of(r), evalPick{i, c})
			}
		}
	}
	var concs []int
	for _, idxs := range sn.lists {
		concs = concs[:0]
		for _, i := range idxs {
			concs = append(concs, rows[i].Conc)
		}
		slices.Sort(concs)
		concs = slices.Compact(concs)
		hi, median := concs[len(concs)-1], concs[len(concs)/2]
		for _, i := range idxs {
			if c := rows[i].Conc; c == hi || c == median {
				picked[i] = true
			}
		}
	}
	for _, lists := range [...][][]evalPick{mn.lists, agMN.lists} {
		for _, ps := range lists {
			b := bestPick(ps)
			picked[b.index] = true
			rows[b.index].EvalConc = ptr(b.conc)
		}
	}
	for _, ps := range agSN.lists {
		picked[bestPick(ps).index] = true
	}
	for i, r := range rows {
		r.RunEval = ptr(picked[i])
	}
}

// maxEligibleEvalConc returns the highest of the row's concurrencies that
// is at least minEvalConc; ok is false when there is none.
func maxEligibleEvalConc(r *Row) (int, bool) {
	best, ok := 0, false
	for _, c := range r.ConcValues() {
		if c >= minEvalConc && (!ok || c > best) {
			best, ok = c, true
		}
	}
	return best, ok
}

// sortedUnion returns the sorted distinct values of a and b.
func sortedUnion(a, b []int) []int {
	out := make([]int, 0, len(a)+len(b))
	out = append(append(out, a...), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// markAllEvals widens eval selection to every eligible row
// (mark_all_eval_entries): every single-node agentic row and every 8k1k
// single-node row becomes an eval row; multi-node rows with the same
// topology are merged into one eval row holding all their concurrencies
// (agentic: eval-conc is the highest; fixed-seq-len: eval-all-concs).
// Rows at other sequence lengths pass through unchanged.
func markAllEvals(rows Matrix) Matrix {
	out := make(Matrix, 0, len(rows))
	merged := map[string]int{} // parallelism key -> index in out
	var par parallelismKeys
	for _, r := range rows {
		switch {
		case r.Kind == AgenticSingleNode:
			r.RunEval = ptr(true)
			out = append(out, r)
		case r.Kind == AgenticMultiNode:
			key := par.of(r)
			if i, ok := merged[key]; ok {
				e := out[i]
				e.Concs = sortedUnion(e.Concs, r.Concs)
				e.EvalConc = ptr(e.Concs[len(e.Concs)-1])
				continue
			}
			e := r.Clone()
			e.Concs = sortedUnion(nil, r.Concs)
			e.RunEval = ptr(true)
			if len(r.Concs) > 0 {
				e.EvalConc = ptr(slices.Max(r.Concs))
			}
			merged[key] = len(out)
			out = append(out, e)
		case !is8k1k(r):
			out = append(out, r)
		case r.Kind == FixedMultiNode:
			key := par.of(r)
			if i, ok := merged[key]; ok {
				out[i].Concs = sortedUnion(out[i].Concs, r.Concs)
				continue
			}
			e := r.Clone()
			e.Concs = sortedUnion(nil, r.Concs)
			e.RunEval = ptr(true)
			e.EvalAllConcs = ptr(true)
			e.EvalConc = nil
			merged[key] = len(out)
			out = append(out, e)
		default:
			r.RunEval = ptr(true)
			out = append(out, r)
		}
	}
	return out
}
