package matrix

import (
	"hash/maphash"
	"slices"
)

// rowGroups groups rows that are equal in every field outside a skip set
// (the same relation as equal canonical JSON without those fields, which
// is how InferenceX compares frozen row dicts), in first-seen order,
// without building keys: rows are bucketed by a few identifying fields and
// compared field by field.
type rowGroups struct {
	skip   fieldSet
	seed   maphash.Seed
	table  []int32  // open addressing by bucket hash: group + 1, 0 empty
	reps   []*Row   // a representative row per group
	hashes []uint64 // per group: its bucket hash
	last   int      // group of the previous row, -1 at first
}

func newRowGroups(skip fieldSet, sizeHint int) *rowGroups {
	g := &rowGroups{skip: skip, seed: maphash.MakeSeed(), last: -1}
	g.rehash(sizeHint)
	return g
}

// rehash sizes the table for n groups (at most half full) and re-inserts
// the groups.
func (g *rowGroups) rehash(n int) {
	size := 16
	for size < 2*n {
		size *= 2
	}
	g.table = make([]int32, size)
	for i, h := range g.hashes {
		slot := g.slot(h)
		for g.table[slot] != 0 {
			slot = (slot + 1) & (len(g.table) - 1)
		}
		g.table[slot] = int32(i + 1)
	}
}

// slot is the table position a bucket hash starts probing at.
func (g *rowGroups) slot(h uint64) int {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return int(h & uint64(len(g.table)-1))
}

// bucket hashes a few fields that tell most rows apart; rows of one group
// always share a bucket.
func (g *rowGroups) bucket(r *Row) uint64 {
	h := maphash.String(g.seed, r.Model)
	if !g.skip.has(fRunner) {
		h = h*31 + maphash.String(g.seed, r.Runner)
	}
	h = h*31 + maphash.String(g.seed, r.Image)
	for _, v := range [...]int{int(r.Kind), r.ISL, r.OSL, r.TP, r.EP} {
		h = h*31 + uint64(v)
	}
	for _, w := range [...]*Worker{r.Prefill, r.Decode} {
		if w != nil {
			h = h*31 + uint64(w.NumWorker)
			h = h*31 + uint64(w.TP)
			h = h*31 + uint64(w.EP)
		}
	}
	return h
}

// group returns the index of r's group, adding a group when r is the first
// of its kind.
func (g *rowGroups) group(r *Row) int {
	b := g.bucket(r)
	// Consecutive rows often come from the same search-space entry.
	if g.last >= 0 && g.hashes[g.last] == b && rowsEqual(g.reps[g.last], r, g.skip) {
		return g.last
	}
	slot := g.slot(b)
	for {
		v := g.table[slot]
		if v == 0 {
			break
		}
		if i := int(v - 1); g.hashes[i] == b && rowsEqual(g.reps[i], r, g.skip) {
			g.last = i
			return i
		}
		slot = (slot + 1) & (len(g.table) - 1)
	}
	i := len(g.reps)
	g.reps = append(g.reps, r)
	g.hashes = append(g.hashes, b)
	g.table[slot] = int32(i + 1)
	g.last = i
	if 2*len(g.reps) > len(g.table) {
		g.rehash(len(g.reps))
	}
	return i
}

// rowsEqual reports whether a and b have the same kind and the same
// present fields with equal values, fields in skip aside.
func rowsEqual(a, b *Row, skip fieldSet) bool {
	if a.Kind != b.Kind {
		return false
	}
	for f := range numFields {
		if skip.has(f) {
			continue
		}
		pa, pb := a.present(f), b.present(f)
		if pa != pb {
			return false
		}
		if pa && !fieldEqual(a, b, f) {
			return false
		}
	}
	return true
}

func fieldEqual(a, b *Row, f field) bool {
	switch f {
	case fImage:
		return a.Image == b.Image
	case fModel:
		return a.Model == b.Model
	case fModelPrefix:
		return a.ModelPrefix == b.ModelPrefix
	case fPrecision:
		return a.Precision == b.Precision
	case fFramework:
		return a.Framework == b.Framework
	case fRunner:
		return a.Runner == b.Runner
	case fSpecDecoding:
		return a.SpecDecoding == b.SpecDecoding
	case fISL:
		return a.ISL == b.ISL
	case fOSL:
		return a.OSL == b.OSL
	case fMaxModelLen:
		return a.MaxModelLen == b.MaxModelLen
	case fTP:
		return a.TP == b.TP
	case fPP:
		return a.PP == b.PP
	case fDCPSize:
		return a.DCPSize == b.DCPSize
	case fPCPSize:
		return a.PCPSize == b.PCPSize
	case fEP:
		return a.EP == b.EP
	case fDPAttn:
		return a.DPAttn == b.DPAttn
	case fPrefill:
		return workersEqual(a.Prefill, b.Prefill)
	case fDecode:
		return workersEqual(a.Decode, b.Decode)
	case fConc:
		if a.Kind.MultiNode() {
			return slices.Equal(a.Concs, b.Concs)
		}
		return a.Conc == b.Conc
	case fKVOffloading:
		return a.KVOffloading == b.KVOffloading
	case fKVOffloadBackend:
		x, y := a.KVOffloadBackend, b.KVOffloadBackend
		return x.Name == y.Name && optEqual(x.Version, y.Version)
	case fTotalCPUDRAMGB:
		return a.TotalCPUDRAMGB == b.TotalCPUDRAMGB
	case fDuration:
		return a.Duration == b.Duration
	case fExpName:
		return a.ExpName == b.ExpName
	case fDisagg:
		return a.Disagg == b.Disagg
	case fScenarioType:
		return true // follows Kind
	case fRouter:
		return *a.Router == *b.Router
	case fKVP2PTransfer:
		return a.KVP2PTransfer == b.KVP2PTransfer
	case fRunEval:
		return *a.RunEval == *b.RunEval
	case fEvalOnly:
		return *a.EvalOnly == *b.EvalOnly
	case fEvalConc:
		return *a.EvalConc == *b.EvalConc
	case fEvalAllConcs:
		return *a.EvalAllConcs == *b.EvalAllConcs
	case fRecipeFingerprint:
		return a.RecipeFingerprint == b.RecipeFingerprint
	}
	return false
}

func optEqual[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// workersEqual compares two worker blocks as their JSON objects compare:
// the same keys with the same values (key order does not matter).
func workersEqual(a, b *Worker) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a == b {
		return true
	}
	for _, k := range workerSorted {
		ha, hb := a.hasKey(k), b.hasKey(k)
		if ha != hb {
			return false
		}
		if !ha {
			continue
		}
		var eq bool
		switch k {
		case wNumWorker:
			eq = a.NumWorker == b.NumWorker
		case wTP:
			eq = a.TP == b.TP
		case wPP:
			eq = a.PP == b.PP
		case wDCPSize:
			eq = a.DCPSize == b.DCPSize
		case wPCPSize:
			eq = a.PCPSize == b.PCPSize
		case wEP:
			eq = a.EP == b.EP
		case wDPAttn:
			eq = a.DPAttn == b.DPAttn
		case wHardware:
			eq = optEqual(a.Hardware, b.Hardware)
		case wAdditionalSettings:
			eq = (a.AdditionalSettings == nil) == (b.AdditionalSettings == nil) && slices.Equal(a.AdditionalSettings, b.AdditionalSettings)
		}
		if !eq {
			return false
		}
	}
	return true
}
