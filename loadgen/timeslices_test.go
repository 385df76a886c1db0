package loadgen

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/metrics/aiperf"
)

// TestTimeslicesMatchAiperf: from the real aiperf 0.12.0's own records
// at --slice-duration 1, the slices come out as aiperf wrote them: the
// same 21 slices (those where a request started), bounds, metric keys and
// values (three slices kept, see testdata/README.md), and slice 5's CSV
// rows, bar the last decimal. The min and max of the decode-rate curves
// are left out: they are set by segments a few hundred ns long, where two
// requests' chunk events fall within the 256 ns apart float64 stamps
// aiperf computes them in (slices 5 and 20 differ there; the averages,
// percentiles and deviations, time-weighted, agree).
func TestTimeslicesMatchAiperf(t *testing.T) {
	extremes := func(metric, stat string) bool {
		return (stat == "min" || stat == "max") && strings.Contains(metric, "ecode Throughput")
	}
	ref := filepath.Join(realAiperf, "c4")
	got := recordSlices(referenceRecords(t, filepath.Join(ref, aiperf.RecordsFile)), time.Second.Nanoseconds(), nil)
	require.Len(t, got, 21)
	want := readJSON(t, filepath.Join(ref, "timeslices-0-5-20.json"))
	for n, idx := range want["timeslice_index"].([]any) {
		g, w := got[int(idx.(float64))], want["timeslices"].([]any)[n].(jsonObj)
		assert.Equal(t, int64(w["start_ns"].(float64)), g.start)
		assert.Equal(t, int64(w["end_ns"].(float64)), g.end)
		delete(w, "start_ns")
		delete(w, "end_ns")
		assert.Equal(t, keys(w), sorted(keysOf(g.blocks)), "slice %v keys", idx)
		for _, f := range g.blocks {
			wb, ok := w[f.Key].(jsonObj)
			if !ok {
				continue
			}
			gb := f.Value.(object)
			assert.Equal(t, keys(wb), sorted(keysOf(gb)), "slice %v %s", idx, f.Key)
			for _, st := range gb[1:] {
				if extremes(displayName(f.Key, ""), st.Key) {
					continue
				}
				gv, _ := statNumber(st.Value)
				wv := wb[st.Key].(float64)
				assert.InDelta(t, wv, gv, 1e-4*math.Abs(wv)+1e-6, "slice %v %s %s", idx, f.Key, st.Key)
			}
		}
	}

	var table bytes.Buffer
	require.NoError(t, writeTimeslicesCSV(&table, got))
	wantCSV, err := os.ReadFile(filepath.Join(ref, "timeslices-5.csv"))
	require.NoError(t, err)
	wantRows := strings.Split(strings.TrimSuffix(string(wantCSV), "\r\n"), "\r\n")
	var gotRows []string
	for _, l := range strings.Split(strings.TrimSuffix(table.String(), "\r\n"), "\r\n") {
		if strings.HasPrefix(l, "Timeslice,") || strings.HasPrefix(l, "5,") {
			gotRows = append(gotRows, l)
		}
	}
	require.Len(t, gotRows, len(wantRows))
	assert.Equal(t, wantRows[0], gotRows[0])
	for i := 1; i < len(wantRows); i++ {
		gc, wc := strings.Split(gotRows[i], ","), strings.Split(wantRows[i], ",")
		require.Len(t, gc, 7)
		assert.Equal(t, wc[:6], gc[:6], "row %d", i)
		if extremes(wc[3], wc[5]) {
			continue
		}
		gv, _ := strconv.ParseFloat(gc[6], 64)
		wv, _ := strconv.ParseFloat(wc[6], 64)
		assert.InDelta(t, wv, gv, 0.01+1e-6*math.Abs(wv), "row %d %s", i, fmt.Sprint(wc[3:6]))
	}
}

// csvReference writes the timeslice table with encoding/csv, as
// writeTimeslicesCSV did before it built rows by hand: the bytes it must
// keep writing.
func csvReference(t testing.TB, ts []recordSlice) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.UseCRLF = true
	require.NoError(t, w.Write([]string{"Timeslice", "Start_NS", "End_NS", "Metric", "Unit", "Stat", "Value"}))
	for i, s := range ts {
		blocks := slices.Clone(s.blocks)
		slices.SortStableFunc(blocks, func(a, b field) int { return strings.Compare(a.Key, b.Key) })
		for _, f := range blocks {
			blk, ok := f.Value.(object)
			if !ok {
				continue
			}
			unit, _ := blk.get("unit").(string)
			name := strings.TrimSuffix(displayName(f.Key, unit), " ("+unit+")")
			for _, st := range summaryCSVStats {
				if v, ok := statNumber(blk.get(st)); ok {
					require.NoError(t, w.Write([]string{strconv.Itoa(i), strconv.FormatInt(s.start, 10), strconv.FormatInt(s.end, 10),
						name, unit, st, strconv.FormatFloat(v, 'f', 2, 64)}))
				}
			}
		}
	}
	w.Flush()
	require.NoError(t, w.Error())
	return b.Bytes()
}

// TestTimeslicesCSVBytes: the hand-built rows are byte for byte what
// encoding/csv writes, for aiperf's own slices and for slices whose tags
// and units need quoting (comma, quote, line breaks, a leading space,
// `\.`), whose statistics are of every number type a block holds (NaN
// and Inf left out), duplicated (the last wins), or not numbers at all.
func TestTimeslicesCSVBytes(t *testing.T) {
	real := recordSlices(referenceRecords(t, filepath.Join(realAiperf, "c4", aiperf.RecordsFile)), time.Second.Nanoseconds(), nil)
	odd := []recordSlice{
		{start: -5, end: 1 << 62, blocks: object{
			{"zeta,comma", object{{"unit", "ms"}, {"avg", num(1.005)}, {"min", rawFloat(-0.004)}, {"max", int64(1 << 60)}, {"sum", 7}, {"p50", 2.5}}},
			{"alpha", object{{"unit", `to"k`}, {"avg", num(math.NaN())}, {"p1", rawFloat(math.Inf(1))}, {"std", num(1e21)}}},
			{"lead", object{{"unit", " sp"}, {"avg", num(3)}, {"avg", num(4)}, {"p99", "text"}}},
			{"line\nbreak", object{{"unit", "a\r\nb"}, {"p90", num(0.125)}}},
			{"dot", object{{"unit", `\.`}, {"p95", num(-0)}}},
			{"nounit", object{{"p10", num(12345678.999)}}},
			{"not_a_block", num(3)},
			{"alpha", object{{"unit", "requests"}, {"p25", num(1)}}},
		}},
		{start: 0, end: 0},
	}
	for name, ts := range map[string][]recordSlice{"aiperf c4": real, "odd": odd, "none": nil} {
		var got bytes.Buffer
		require.NoError(t, writeTimeslicesCSV(&got, ts), name)
		assert.Equal(t, string(csvReference(t, ts)), got.String(), name)
	}
}

// TestTimeslicesCSVWriteError: the writer's error is returned.
func TestTimeslicesCSVWriteError(t *testing.T) {
	full := errors.New("disk full")
	err := writeTimeslicesCSV(failingWriter{full}, []recordSlice{{blocks: object{{"m", object{{"unit", "ms"}, {"avg", num(1)}}}}}})
	assert.ErrorIs(t, err, full)
}
