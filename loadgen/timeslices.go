package loadgen

import (
	"encoding/csv"
	"errors"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"sweep/internal/atomicfile"
	"sweep/metrics/aiperf"
)

// The timeslice files (aiperf.TimeslicesJSON, aiperf.TimeslicesCSV) are
// what aiperf 0.12.0 writes with --slice-duration: the profiling phase cut
// into slices of that length from its first request's start, each slice
// with the metric blocks of the requests that started in it (slices where
// none did are left out), as JSON and as a long CSV.

// notInSlices are summary blocks aiperf does not write per slice.
var notInSlices = []string{"credit_to_start_latency", "effective_latency", "theoretical_prefix_cache_hit"}

// recordSlice is one timeslice: its bounds (artifact ns) and metric blocks.
type recordSlice struct {
	start, end int64
	blocks     object
}

// recordSlices cuts the profiling records into slices of width ns. A
// slice's duration runs from its first request's start to its last
// content token (start + request_latency), as aiperf's; its sweep-line
// metrics are of every profiling request over the slice's bounds. The
// bounds are the first start plus multiples of the width, in float64 as
// aiperf computes them. phaseCurves, when not nil, gives the curves of the
// profiling phase's requests (the summary's own, built once for both).
func recordSlices(records []*record, width int64, phaseCurves func() *curves) []recordSlice {
	var prof []*record
	for _, r := range records {
		if r.phase() == aiperf.PhaseProfiling {
			prof = append(prof, r)
		}
	}
	if len(prof) == 0 || width <= 0 {
		return nil
	}
	origin := math.Inf(1)
	for _, r := range prof {
		origin = min(origin, float64(r.startNs()))
	}
	buckets := map[int][]*record{}
	for _, r := range prof {
		i := int(math.Floor((float64(r.startNs()) - origin) / float64(width)))
		buckets[i] = append(buckets[i], r)
	}
	idx := make([]int, 0, len(buckets))
	for i := range buckets {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	if phaseCurves == nil {
		phaseCurves = func() *curves { return newCurves(spansOf(prof, aiperf.PhaseProfiling), true) }
	}
	cv := phaseCurves() // built once, windowed per slice
	out := make([]recordSlice, len(idx))
	slice := func(k int) {
		i := idx[k]
		s0 := origin + float64(i)*float64(width)
		s1 := s0 + float64(width)
		ps := collect(buckets[i], aiperf.PhaseProfiling)
		ps.curves, ps.window, ps.slice = cv, [2]int64{int64(s0), int64(s1)}, true
		last := math.Inf(-1)
		for _, r := range buckets[i] {
			if lat, ok := r.metric("request_latency"); ok && r.Error == nil {
				last = max(last, float64(r.startNs())+lat*1e6)
			}
		}
		if !math.IsInf(last, -1) {
			ps.endNs = int64(last)
		}
		blocks := slices.DeleteFunc(ps.metricBlocks(), func(f field) bool { return slices.Contains(notInSlices, f.Key) })
		out[k] = recordSlice{start: int64(s0), end: int64(s1), blocks: blocks}
	}
	// The slices are independent (the records and the curves are only
	// read): a 20-minute point's 1,200 are computed on every core, each
	// worker a contiguous run of them.
	n := min(runtime.GOMAXPROCS(0), len(idx))
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			for k := w * len(idx) / n; k < (w+1)*len(idx)/n; k++ {
				slice(k)
			}
		})
	}
	wg.Wait()
	return out
}

// writeTimeslices writes the two timeslice files and returns their names.
func (r *runner) writeTimeslices(records []*record, phaseCurves func() *curves) ([]string, error) {
	ts := recordSlices(records, r.o.SliceDuration.Nanoseconds(), phaseCurves)
	if len(ts) == 0 {
		return nil, nil
	}
	list := make([]object, 0, len(ts))
	for _, s := range ts {
		list = append(list, append(object{{"start_ns", s.start}, {"end_ns", s.end}}, s.blocks...))
	}
	// The two files are tens of MB on a long point: each is encoded
	// straight into place, side by side.
	var csvErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		csvErr = atomicfile.WriteWith(filepath.Join(r.o.ArtifactDir, aiperf.TimeslicesCSV), 0o644, func(w io.Writer) error {
			return writeTimeslicesCSV(w, ts)
		})
	})
	jsonErr := atomicfile.WriteWith(filepath.Join(r.o.ArtifactDir, aiperf.TimeslicesJSON), 0o644, func(w io.Writer) error {
		return writeIndent(w, object{{"timeslices", list}, {"input_config", r.inputConfig()}})
	})
	wg.Wait()
	switch {
	case jsonErr != nil && csvErr == nil:
		return []string{aiperf.TimeslicesCSV}, jsonErr
	case jsonErr != nil:
		return nil, errors.Join(jsonErr, csvErr)
	case csvErr != nil:
		return []string{aiperf.TimeslicesJSON}, csvErr
	}
	return []string{aiperf.TimeslicesJSON, aiperf.TimeslicesCSV}, nil
}

// writeTimeslicesCSV writes the long table: one row per slice, metric
// (by tag) and statistic (in summaryCSVStats order), the metric's display
// name without its unit, the value to 2 decimals; CRLF lines. It writes
// the bytes encoding/csv would (a long point has over a million rows):
// each row is appended into one reused buffer, its text fields quoted
// once per metric by csvField.
func writeTimeslicesCSV(out io.Writer, ts []recordSlice) error {
	buf := make([]byte, 0, 1<<17)
	flush := func() error {
		_, err := out.Write(buf)
		buf = buf[:0]
		return err
	}
	buf = append(buf, "Timeslice,Start_NS,End_NS,Metric,Unit,Stat,Value\r\n"...)
	stats := make([]string, len(summaryCSVStats)) // ",stat,"
	for i, st := range summaryCSVStats {
		stats[i] = "," + csvField(st) + ","
	}
	heads := map[[2]string][]byte{} // tag and unit: "name,unit"
	statIndex := make(map[string]int, len(summaryCSVStats))
	for j, st := range summaryCSVStats {
		statIndex[st] = j
	}
	// A block's statistics by summaryCSVStats index, found in one pass
	// over it (the last field of a name wins, as object.get has it).
	vals := make([]any, len(summaryCSVStats))
	var blocks []field
	var lead []byte // "i,start,end,"
	for i, s := range ts {
		blocks = append(blocks[:0], s.blocks...)
		slices.SortStableFunc(blocks, func(a, b field) int { return strings.Compare(a.Key, b.Key) })
		lead = strconv.AppendInt(lead[:0], int64(i), 10)
		lead = append(lead, ',')
		lead = strconv.AppendInt(lead, s.start, 10)
		lead = append(lead, ',')
		lead = strconv.AppendInt(lead, s.end, 10)
		lead = append(lead, ',')
		for _, f := range blocks {
			b, ok := f.Value.(object)
			if !ok {
				continue
			}
			clear(vals)
			var unit string
			for _, sf := range b {
				if j, ok := statIndex[sf.Key]; ok {
					vals[j] = sf.Value
				} else if sf.Key == "unit" {
					unit, _ = sf.Value.(string)
				}
			}
			head, ok := heads[[2]string{f.Key, unit}]
			if !ok {
				name := strings.TrimSuffix(displayName(f.Key, unit), " ("+unit+")")
				head = []byte(csvField(name) + "," + csvField(unit))
				heads[[2]string{f.Key, unit}] = head
			}
			for j := range summaryCSVStats {
				v, ok := statNumber(vals[j])
				if !ok {
					continue
				}
				buf = append(buf, lead...)
				buf = append(buf, head...)
				buf = append(buf, stats[j]...)
				buf = strconv.AppendFloat(buf, v, 'f', 2, 64)
				buf = append(buf, '\r', '\n')
			}
			if len(buf) >= 1<<16 {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	return flush()
}

// csvField is s as encoding/csv writes a field with UseCRLF set (quoted
// when it holds a comma, quote or line break, starts with a space or is
// `\.`), so that a row built by hand is the row csv.Writer would write.
func csvField(s string) string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.UseCRLF = true
	_ = w.Write([]string{s})
	w.Flush()
	return strings.TrimSuffix(b.String(), "\r\n")
}
