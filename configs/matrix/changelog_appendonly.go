package matrix

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"sweep/configs"
)

// appendOnlyDelta returns the points of head that base does not have, as
// process_changelog.py's append_only_delta does. Rows are grouped into
// curves by every field but conc, exp-name and recipe-fingerprint. Every
// base curve and each of its concurrencies must still be in head; head may
// add concurrencies to a curve and add whole curves. Each added point must
// belong to a visual series (model, runner, scenario, sequence lengths,
// offload on/off, spec-decoding, worker hardware, ...) that the base draws
// with exactly one image, the same as the point's.
func appendOnlyDelta(base, head Matrix) (Matrix, error) {
	type curve struct {
		concs []int
	}
	collect := func(rows Matrix) (map[string]*curve, []string) {
		m := map[string]*curve{}
		var order []string
		for _, r := range rows {
			k := curveKey(r)
			c, ok := m[k]
			if !ok {
				c = &curve{}
				m[k] = c
				order = append(order, k)
			}
			for _, x := range r.ConcValues() {
				if !slices.Contains(c.concs, x) {
					c.concs = append(c.concs, x)
				}
			}
		}
		return m, order
	}
	baseCurves, baseOrder := collect(base)
	headCurves, _ := collect(head)
	if len(baseCurves) == 0 {
		return nil, errors.New("append-only requires an existing curve in the base revision")
	}
	for _, k := range baseOrder {
		if _, ok := headCurves[k]; !ok {
			return nil, errors.New("append-only may not remove or modify existing generated recipes")
		}
	}
	for _, k := range baseOrder {
		var removed []int
		for _, c := range baseCurves[k].concs {
			if !slices.Contains(headCurves[k].concs, c) {
				removed = append(removed, c)
			}
		}
		if len(removed) > 0 {
			slices.Sort(removed)
			return nil, fmt.Errorf("append-only may not remove existing concurrency points: %v", pyIntList(removed))
		}
	}
	emitted := map[string][]int{}
	isNew := func(k string, c int) bool {
		if bc, ok := baseCurves[k]; ok && slices.Contains(bc.concs, c) {
			return false
		}
		return !slices.Contains(emitted[k], c)
	}
	var delta Matrix
	for _, r := range head {
		k := curveKey(r)
		if !r.Kind.MultiNode() {
			if isNew(k, r.Conc) {
				delta = append(delta, r)
				emitted[k] = append(emitted[k], r.Conc)
			}
			continue
		}
		var added []int
		for _, c := range r.Concs {
			if isNew(k, c) {
				added = append(added, c)
				emitted[k] = append(emitted[k], c)
			}
		}
		if len(added) > 0 {
			d := r.Clone()
			d.Concs = added
			delta = append(delta, d)
		}
	}
	if len(delta) == 0 {
		return nil, errors.New("append-only did not add any generated points")
	}
	images := map[visualSeries][]string{}
	for _, r := range base {
		s := seriesOf(r)
		if !slices.Contains(images[s], r.Image) {
			images[s] = append(images[s], r.Image)
		}
	}
	for _, r := range delta {
		if imgs := images[seriesOf(r)]; len(imgs) != 1 || imgs[0] != r.Image {
			return nil, fmt.Errorf("append-only additions must belong to an existing visual curve with one unchanged non-null image; %s (%s, runner %s, image %s) has no such curve in the base",
				r.ExpName, r.ScenarioType(), r.Runner, r.Image)
		}
	}
	return delta, nil
}

// pyIntList formats ints as Python prints a list: [1, 2].
func pyIntList(xs []int) string {
	return string(appendIntList(nil, xs, stylePython))
}

// curveKey identifies a row's curve: every field but conc, exp-name and
// recipe-fingerprint.
func curveKey(r *Row) string {
	return string(appendRowJSON(nil, r, styleCanonical, fingerprintSkip))
}

// visualSeries is the dashboard curve a row is drawn on.
type visualSeries struct {
	model, modelPrefix, precision, framework, runner string
	disagg                                           bool
	scenario                                         string // agentic_traces or single_turn
	isl, osl                                         int    // 0 for agentic rows
	offload                                          bool
	spec                                             string // "" for agentic rows
	prefillHW, decodeHW                              string // "\x00" when absent
}

func seriesOf(r *Row) visualSeries {
	s := visualSeries{
		model: r.Model, modelPrefix: r.ModelPrefix, precision: r.Precision,
		framework: string(r.Framework), runner: r.Runner, disagg: r.Disagg,
		prefillHW: "\x00", decodeHW: "\x00",
	}
	if r.Kind.Agentic() {
		s.scenario = "agentic_traces"
		s.offload = r.KVOffloading != "" && r.KVOffloading != configs.KVOffloadNone
	} else {
		s.scenario = "single_turn"
		s.isl, s.osl = r.ISL, r.OSL
		s.spec = r.SpecDecoding
	}
	if r.Prefill != nil && r.Prefill.Hardware != nil {
		s.prefillHW = *r.Prefill.Hardware
	}
	if r.Decode != nil && r.Decode.Hardware != nil {
		s.decodeHW = *r.Decode.Hardware
	}
	return s
}

// scenarioOrder is the order InferenceX processes scenarios in.
var scenarioOrder = [...]string{configs.ScenarioFixedSeqLen, configs.ScenarioAgenticCoding}

// checkAppendOnlyScope rejects base-to-head edits of master configs
// outside what the append-only entries selected (validate_append_only_scope):
// configs that were not selected must be unchanged; a selected config must
// keep its set of scenarios; its top-level fields may only change when
// every scenario it has is selected; unselected scenarios must be
// unchanged. Changes inside selected scenarios are judged by
// appendOnlyDelta on the generated rows.
func checkAppendOnlyScope(base, head *configs.Masters, selected map[string][]string) error {
	keys := slices.Clone(base.Keys())
	for _, k := range head.Keys() {
		if _, ok := base.Lookup(k); !ok {
			keys = append(keys, k)
		}
	}
	var changed []string
	for _, k := range keys {
		if _, ok := selected[k]; ok {
			continue
		}
		b, _ := base.Lookup(k)
		h, _ := head.Lookup(k)
		if rawEqual(masterRaw(b), masterRaw(h)) {
			continue
		}
		changed = append(changed, k)
	}
	if len(changed) > 0 {
		slices.Sort(changed)
		return fmt.Errorf("append-only change edits configs its changelog entries do not select: %s", strings.Join(changed, ", "))
	}
	for _, k := range slices.Sorted(maps.Keys(selected)) {
		b, _ := base.Lookup(k)
		h, _ := head.Lookup(k)
		bs, hs := scenarioRaws(b), scenarioRaws(h)
		if !slices.Equal(slices.Sorted(maps.Keys(bs)), slices.Sorted(maps.Keys(hs))) {
			return fmt.Errorf("append-only added or removed a scenario in config %q", k)
		}
		unselected := false
		for s := range bs {
			if !slices.Contains(selected[k], s) {
				unselected = true
			}
		}
		bt, ht := masterRaw(b), masterRaw(h)
		delete(bt, "scenarios")
		delete(ht, "scenarios")
		if unselected && !rawEqual(bt, ht) {
			return fmt.Errorf("append-only changed config-wide fields of %q that can affect scenarios outside its changelog scope", k)
		}
		for _, s := range scenarioOrder {
			if _, ok := bs[s]; !ok || slices.Contains(selected[k], s) {
				continue
			}
			if !rawEqual(bs[s], hs[s]) {
				return fmt.Errorf("append-only changed a scenario outside its changelog scope: %q / %q", k, s)
			}
		}
	}
	return nil
}

func rawEqual(a, b any) bool {
	ja, errA := CanonicalJSON(a)
	jb, errB := CanonicalJSON(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// masterRaw returns a master entry as the plain data its YAML holds (the
// dict InferenceX compares), nil for a nil entry.
func masterRaw(m *configs.Master) map[string]any {
	if m == nil {
		return nil
	}
	out := map[string]any{
		"image": m.Image, "model": m.Model, "model-prefix": m.ModelPrefix,
		"runner": m.Runner, "precision": m.Precision, "framework": m.Framework,
		"multinode": m.Multinode,
	}
	if m.Disagg != nil {
		out["disagg"] = *m.Disagg
	}
	if m.Router != nil {
		out["router"] = componentRaw(m.Router)
	}
	if m.KVP2PTransfer != nil {
		out["kv-p2p-transfer"] = *m.KVP2PTransfer
	}
	sc := map[string]any{}
	for k, v := range scenarioRaws(m) {
		sc[k] = v
	}
	out["scenarios"] = sc
	return out
}

// scenarioRaws returns the scenarios present in a master entry.
func scenarioRaws(m *configs.Master) map[string]any {
	out := map[string]any{}
	if m.Scenarios.FixedSeqLen != nil {
		items := make([]any, 0, len(m.Scenarios.FixedSeqLen))
		for _, c := range m.Scenarios.FixedSeqLen {
			items = append(items, map[string]any{"isl": c.ISL, "osl": c.OSL, "search-space": searchSpaceRaw(c.SearchSpace)})
		}
		out[configs.ScenarioFixedSeqLen] = items
	}
	if m.Scenarios.AgenticCoding != nil {
		items := make([]any, 0, len(m.Scenarios.AgenticCoding))
		for _, c := range m.Scenarios.AgenticCoding {
			item := map[string]any{"search-space": searchSpaceRaw(c.SearchSpace)}
			if c.DRAMUtilization != nil {
				item["dram-utilization"] = *c.DRAMUtilization
			}
			items = append(items, item)
		}
		out[configs.ScenarioAgenticCoding] = items
	}
	return out
}

func searchSpaceRaw(ss []*configs.SearchSpace) []any {
	out := make([]any, 0, len(ss))
	for _, s := range ss {
		m := map[string]any{}
		putInt := func(k string, p *int) {
			if p != nil {
				m[k] = *p
			}
		}
		putStr := func(k string, p *string) {
			if p != nil {
				m[k] = *p
			}
		}
		putInt("tp", s.TP)
		putInt("pp", s.PP)
		putInt("dcp-size", s.DCPSize)
		putInt("pcp-size", s.PCPSize)
		putInt("ep", s.EP)
		if s.DPAttn != nil {
			m["dp-attn"] = *s.DPAttn
		}
		putStr("spec-decoding", s.SpecDecoding)
		if s.ConcList != nil {
			m["conc-list"] = s.ConcList
		}
		putInt("conc-start", s.ConcStart)
		putInt("conc-end", s.ConcEnd)
		putStr("kv-offloading", s.KVOffloading)
		if b := s.KVOffloadBackend; b != nil {
			bm := map[string]any{"name": b.Name}
			if b.Version != nil {
				bm["version"] = *b.Version
			}
			m["kv-offload-backend"] = bm
		}
		if s.Router != nil {
			m["router"] = componentRaw(s.Router)
		}
		putStr("kv-p2p-transfer", s.KVP2PTransfer)
		if s.Prefill != nil {
			m["prefill"] = workerRaw(s.Prefill)
		}
		if s.Decode != nil {
			m["decode"] = workerRaw(s.Decode)
		}
		out = append(out, m)
	}
	return out
}

func componentRaw(c *configs.Component) map[string]any {
	return map[string]any{"name": c.Name, "version": c.Version}
}

func workerRaw(w *configs.Worker) map[string]any {
	m := map[string]any{}
	for _, k := range w.Keys {
		switch k {
		case "num-worker":
			m[k] = w.NumWorker
		case "tp":
			m[k] = w.TP
		case "pp":
			m[k] = w.PPValue()
		case "dcp-size":
			m[k] = w.DCPSizeValue()
		case "pcp-size":
			m[k] = w.PCPSizeValue()
		case "ep":
			m[k] = w.EP
		case "dp-attn":
			m[k] = w.DPAttn
		case "hardware":
			if w.Hardware != nil {
				m[k] = *w.Hardware
			} else {
				m[k] = nil
			}
		case "additional-settings":
			if w.AdditionalSettings != nil {
				m[k] = w.AdditionalSettings
			} else {
				m[k] = nil
			}
		}
	}
	return m
}
