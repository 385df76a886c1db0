package aiperf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
)

// skimInputs are documents whose skim is compared window by window with
// the skim of the whole text in memory.
func skimInputs(t *testing.T) map[string][]byte {
	t.Helper()
	longKey := `"` + strings.Repeat("k", 100) + `"`
	in := map[string]string{
		"timeslices":      `{"metrics": {"a": {"series": [{"stats": {"avg": 1}, "timeslices": [{"x": 1}, {"x": 2}]}]}}}`,
		"long keys":       `{"metrics": {"a": {"series": [{` + longKey + `: 1, "timeslices": [1], ` + longKey + `: {"timeslices": [2]}}]}}, ` + longKey + `: 2}`,
		"key at limit":    `{"metrics": {"a": {"series": [{"` + strings.Repeat("t", maxHeldKey-2) + `": [1], "timeslices": [2]}]}}}`,
		"escapes":         `{"metrics": {"a\"b": {"series": [{"time\u0073lices": "\\\u00e9\n", "timeslices": ["\"]", "\/"]}]}}}`,
		"several":         " \n{\"metrics\":{\"a\":{\"series\":[{\"timeslices\":[],\"stats\":{}},{\"timeslices\":{\"k\":\"v\"}}]},\"b\":null}}\r\n\t",
		"elsewhere kept":  `{"timeslices": [1], "metrics": {"a": {"timeslices": [2], "series": [{"stats": {"timeslices": [3]}, "timeslices": [4]}]}}}`,
		"warm-up":         `{"metrics": {"a": {"series": [{"timeslices": [1]}]}}, "warmup_metrics": {"a": {"series": [{"timeslices": [2]}]}}, "warmup_metric\u0073": {"b": 1}}`,
		"nothing dropped": `{"metrics": {"a": {"series": [{"stats": {"avg": 1e-3}}]}}, "summary": {"endpoints_successful": ["u"]}}`,
		"not an object":   ` [{"metrics": {}}]`,
		"trailing data":   `{"metrics": {"a": {"series": [{"timeslices": []}]}}} {}`,
		"invalid inside":  `{"metrics": {"a": {"series": [{"timeslices": [1,,2]}]}}}`,
		"cut":             `{"metrics": {"a": {"series": [{"timeslices": [1.5`,
		"cut literal":     `{"metrics": {"a": {"series": [{"timeslices": [tru`,
		"cut escape":      `{"metrics": {"a": {"series": [{"timeslices": ["\u00`,
		"too deep":        `{"metrics": {"a": {"series": [{"x": ` + strings.Repeat("[", maxSkimDepth+1) + strings.Repeat("]", maxSkimDepth+1) + `}]}}}`,
		"empty":           ``,
	}
	out := map[string][]byte{}
	for k, v := range in {
		require.True(t, json.Valid([]byte(v)) == !slices.Contains([]string{"trailing data", "invalid inside", "cut", "cut literal", "cut escape", "empty"}, k), k)
		out[k] = []byte(v)
	}
	for _, f := range shippedExports(t) {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		out[f] = data
	}
	return out
}

// A stream is skimmed as the whole text is, whatever the window and
// however the reads split it.
func TestSkimStreamAsInMemory(t *testing.T) {
	for name, data := range skimInputs(t) {
		mem := newSkim(data, nil)
		want, wantOK := mem.export()
		wantStop := mem.stop()
		readers := map[string]func() io.Reader{
			"whole":    func() io.Reader { return bytes.NewReader(data) },
			"one byte": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data)) },
			"half":     func() io.Reader { return iotest.HalfReader(bytes.NewReader(data)) },
			"data+EOF": func() io.Reader { return iotest.DataErrReader(bytes.NewReader(data)) },
		}
		for rname, r := range readers {
			for _, window := range []int{1, 2, 3, 7, 64, skimWindow} {
				what := fmt.Sprintf("%s, %s reads, window %d", name, rname, window)
				got, ok, stop, err := skimStream(r(), window)
				require.NoError(t, err, what)
				require.Equal(t, wantOK, ok, what)
				assert.Equal(t, string(want), string(got), what)
				if !ok {
					assert.Equal(t, wantStop, stop, what)
				}
			}
		}
	}
}

// The skims that drop something: what is left, and why others stop.
func TestSkimStreamKept(t *testing.T) {
	in := skimInputs(t)
	for name, want := range map[string]string{
		"long keys":    strings.ReplaceAll(`{"metrics": {"a": {"series": [{K: 1, "timeslices": 0, K: {"timeslices": [2]}}]}}, K: 2}`, "K", `"`+strings.Repeat("k", 100)+`"`),
		"key at limit": `{"metrics": {"a": {"series": [{"` + strings.Repeat("t", maxHeldKey-2) + `": [1], "timeslices": 0}]}}}`,
		"escapes":      `{"metrics": {"a\"b": {"series": [{"time\u0073lices": "\\\u00e9\n", "timeslices": 0}]}}}`,
		"warm-up":      `{"metrics": {"a": {"series": [{"timeslices": 0}]}}, "warmup_metrics": 0, "warmup_metric\u0073": {"b": 1}}`,
	} {
		got, ok, _, err := skimStream(iotest.OneByteReader(bytes.NewReader(in[name])), 1)
		require.NoError(t, err)
		require.True(t, ok, name)
		assert.Equal(t, want, string(got), name)
	}
	for name, why := range map[string]string{
		"not an object":  "the top level is not an object",
		"trailing data":  "more follows the top-level object",
		"too deep":       "it is nested deeper than the streaming reader follows",
		"invalid inside": "",
	} {
		_, ok, stop, err := skimStream(bytes.NewReader(in[name]), 3)
		require.NoError(t, err)
		require.False(t, ok, name)
		assert.Equal(t, why, stop.Why, name)
	}
}

// A read error ends the skim with that error, not a verdict on the text.
func TestSkimStreamReadError(t *testing.T) {
	text := `{"metrics": {"a": {"series": [{"timeslices": [1, 2, 3]}]}}}`
	boom := errors.New("boom")
	_, _, _, err := skimStream(io.MultiReader(strings.NewReader(text[:20]), iotest.ErrReader(boom)), 8)
	assert.ErrorIs(t, err, boom)
	_, _, _, err = skimStream(iotest.ErrReader(boom), 8)
	assert.ErrorIs(t, err, boom)
	_, _, _, err = skimStream(stuckReader{}, 8)
	assert.ErrorIs(t, err, io.ErrNoProgress, "a reader that never gives anything does not hang the skim")
}

// stuckReader reads nothing, forever, without an error.
type stuckReader struct{}

func (stuckReader) Read([]byte) (int, error) { return 0, nil }

// A file the streaming reader does not recognise is read whole and reads
// as ReadServerMetrics reads it: the odd shapes, and the errors.
func TestReadServerMetricsFileNotRecognised(t *testing.T) {
	for name, text := range map[string]string{
		"too deep":       `{"metrics": {"a": {"type": "gauge", "series": [{"stats": {"avg": 1}, "x": ` + strings.Repeat("[", maxSkimDepth+1) + strings.Repeat("]", maxSkimDepth+1) + `}]}}}`,
		"deep elsewhere": `{"input_config": ` + strings.Repeat("[", maxSkimDepth+1) + strings.Repeat("]", maxSkimDepth+1) + `, "metrics": {"a": {"type": "gauge", "series": [{"stats": {"avg": 1}, "timeslices": [1]}]}}}`,
		"invalid":        `{"metrics": {"a": {"series": [{"timeslices": [1,,2]}]}}}`,
		"list":           `[{"metrics": {}}]`,
		"trailing data":  `{"metrics": {}} {}`,
		"empty":          ``,
	} {
		p := filepath.Join(t.TempDir(), ServerMetricsFile)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		want, wantErr := ReadServerMetrics(strings.NewReader(text), p)
		got, err := ReadServerMetricsFile(p)
		assert.Equal(t, wantErr, err, name)
		assert.Equal(t, want, got, name)
		if strings.HasPrefix(name, "deep") || name == "too deep" {
			require.NoError(t, err, name)
			require.Len(t, got.Metrics["a"].Series, 1, name)
		}
	}
}

// A file over MaxWholeServerMetrics that the streaming reader does not
// recognise is refused with where it stopped, without being read whole.
func TestReadServerMetricsFileHugeNotRecognised(t *testing.T) {
	p := filepath.Join(t.TempDir(), ServerMetricsFile)
	require.NoError(t, os.WriteFile(p, []byte("\n\n  [1, 2]"), 0o644))
	require.NoError(t, os.Truncate(p, MaxWholeServerMetrics+1)) // sparse
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadServerMetricsFile(p)
	runtime.ReadMemStats(&after)
	ce, ok := errors.AsType[*configs.Error](err)
	require.True(t, ok, "got %v", err)
	assert.Equal(t, configs.Error{File: p, Line: 3, Col: 3, Key: "(top level)", Msg: "must contain a JSON object of aiperf's export shape: " +
		"the top level is not an object (byte 4); a file over 256 MiB is read only as a stream, which follows nothing else"}, *ce)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20), "allocated")
}

// TestReadServerMetricsFileLarge: a long point's export over the old
// 256 MiB limit failed the point at aggregation; it is read as a stream,
// in memory bounded by what is kept.
func TestReadServerMetricsFileLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads a 275 MB export (seconds)")
	}
	sh := exportShape{families: 45, series: 8, slices: 2500, warmupSlices: 1250}
	p, size := writeExportFile(t, t.TempDir(), sh)
	require.Greater(t, size, int64(256<<20))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	exp, err := ReadServerMetricsFile(p)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	checkExport(t, exp, sh)
	allocated := after.TotalAlloc - before.TotalAlloc
	assert.Less(t, allocated, uint64(size/16), "allocated %d bytes reading %d", allocated, size)
	t.Logf("read %d bytes, allocated %d", size, allocated)

	// The same with its timeslices absent reads the same.
	bare, _ := writeExportFile(t, t.TempDir(), exportShape{families: sh.families, series: sh.series})
	want, err := ReadServerMetricsFile(bare)
	require.NoError(t, err)
	want.File = p
	assert.Equal(t, want, exp)

	// Trailing data: refused, with its line, not read whole.
	lines := countLines(t, p)
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("  x")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	runtime.ReadMemStats(&before)
	_, err = ReadServerMetricsFile(p)
	runtime.ReadMemStats(&after)
	ce, ok := errors.AsType[*configs.Error](err)
	require.True(t, ok, "got %v", err)
	assert.Equal(t, lines+1, ce.Line)
	assert.Equal(t, 3, ce.Col)
	assert.Contains(t, ce.Msg, fmt.Sprintf("more follows the top-level object (byte %d)", size+2))
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(size/16), "allocated")
}

func countLines(t *testing.T, p string) int {
	t.Helper()
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	n, buf := 0, make([]byte, 1<<20)
	for {
		k, err := f.Read(buf)
		n += bytes.Count(buf[:k], []byte("\n"))
		if err == io.EOF {
			return n
		}
		require.NoError(t, err)
	}
}

// FuzzSkimStream holds the streaming skim to the skim of the whole text.
func FuzzSkimStream(f *testing.F) {
	f.Add([]byte(`{"metrics": {"a": {"series": [{"stats": {"avg": 1}, "timeslices": [{"x": 1}]}]}}}`), uint8(3))
	f.Add([]byte(`{"metrics": {"a\"": {"series": [{"timeslices": "\u00e9", "k": [true, null]}]}}} `), uint8(1))
	f.Fuzz(func(t *testing.T, b []byte, window uint8) {
		mem := newSkim(b, nil)
		want, wantOK := mem.export()
		got, ok, stop, err := skimStream(iotest.HalfReader(bytes.NewReader(b)), int(window))
		if err != nil {
			t.Fatal(err)
		}
		if ok != wantOK || string(got) != string(want) {
			t.Fatalf("stream %v %q, in memory %v %q", ok, got, wantOK, want)
		}
		if !ok && stop != mem.stop() {
			t.Fatalf("stopped at %+v, in memory at %+v", stop, mem.stop())
		}
	})
}
