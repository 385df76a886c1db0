package power

import (
	"math"
	"path/filepath"
	"strings"
	"time"
)

// AccumulatorTolerance is the relative difference between the energy
// counters' delta and the integrated stream that still agrees.
const AccumulatorTolerance = 0.05

// crossCheck is cross_check_accumulator: the AMD energy counters' delta
// between the snapshots beside csvPath against the whole stream's
// integral. Advisory: it never changes validity. nil when neither
// snapshot exists.
func crossCheck(csvPath string, loc *time.Location, filter []string) *value {
	base := strings.TrimSuffix(csvPath, filepath.Ext(csvPath))
	startPath, endPath := base+"_energy_start.csv", base+"_energy_end.csv"
	startOK, endOK := isRegular(startPath), isRegular(endPath)
	unavailable := func(reason string) *value {
		return object().set("available", boolean(false)).set("reason", str(reason))
	}
	switch {
	case !startOK && !endOK:
		return nil
	case !startOK:
		return unavailable("missing_start_snapshot")
	case !endOK:
		return unavailable("missing_end_snapshot")
	}
	startJ, err := readEnergySnapshot(startPath, filter)
	if err == errSnapshot {
		return unavailable("unparseable_start_snapshot")
	} else if err != nil {
		return unavailable("cross_check_error")
	}
	endJ, err := readEnergySnapshot(endPath, filter)
	if err == errSnapshot {
		return unavailable("unparseable_end_snapshot")
	} else if err != nil {
		return unavailable("cross_check_error")
	}

	var matched, unmatched []string
	for gpu := range startJ {
		if _, ok := endJ[gpu]; ok {
			matched = append(matched, gpu)
		} else {
			unmatched = append(unmatched, gpu)
		}
	}
	for gpu := range endJ {
		if _, ok := startJ[gpu]; !ok {
			unmatched = append(unmatched, gpu)
		}
	}
	sortGPUs(matched)
	sortGPUs(unmatched)
	delta := map[string]float64{}
	deltaJSON := object()
	var negative []string
	accumulated := 0.0
	for _, gpu := range matched {
		d := endJ[gpu] - startJ[gpu]
		delta[gpu] = d
		deltaJSON.set(gpu, float(d))
		if d < 0 {
			negative = append(negative, gpu)
		}
		accumulated += d
	}

	stream, err := streamSamples(csvPath, loc, filter)
	if err != nil {
		return unavailable("cross_check_error")
	}
	var integrated []string
	for gpu := range stream {
		if _, ok := delta[gpu]; ok {
			integrated = append(integrated, gpu)
		}
	}
	sortGPUs(integrated)
	streamJ := 0.0
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, gpu := range integrated {
		s := stream[gpu]
		streamJ += trapezoid(s)
		lo = math.Min(lo, math.Min(s[0].t, s[len(s)-1].t))
		hi = math.Max(hi, math.Max(s[0].t, s[len(s)-1].t))
	}
	span := 0.0
	if len(integrated) > 0 {
		span = hi - lo
	}
	relErr := null()
	within := false
	if accumulated > 0 {
		rel := math.Abs(accumulated-streamJ) / accumulated
		relErr = float(rel)
		within = len(negative) == 0 && rel <= AccumulatorTolerance
	}
	return object().
		set("available", boolean(true)).
		set("accumulator_delta_j", float(accumulated)).
		set("integrated_stream_j", float(streamJ)).
		set("relative_error", relErr).
		set("within_tolerance", boolean(within)).
		set("tolerance", float(AccumulatorTolerance)).
		set("per_gpu_delta_j", deltaJSON).
		set("integrated_gpu_ids", strList(integrated)).
		set("unmatched_gpus", strList(unmatched)).
		set("negative_delta_gpus", strList(negative)).
		set("stream_span_s", float(span))
}
