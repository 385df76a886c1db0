package aiperf

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exportShape sizes a synthetic server_metrics_export.json.
type exportShape struct {
	families     int // cycling gauge, counter, histogram
	series       int // per family (one per TP rank)
	slices       int // one-second timeslices per series
	warmupSlices int // per series of the warm-up's families; none without
}

// writeExport streams an export laid out as aiperf 0.12.0 writes one
// (json.dump with indent=2: the metadata, then families of series with
// labels, stats, histogram buckets and per-second timeslices, then the
// warm-up's families). Values are a function of the family, series and
// slice, so a reader's result can be checked against seriesStat.
func writeExport(w io.Writer, sh exportShape) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var b []byte
	flush := func() error {
		_, err := bw.Write(b)
		b = b[:0]
		return err
	}
	b = append(b, `{
  "schema_version": "1.1",
  "aiperf_version": "0.12.0",
  "benchmark_id": "5ynth371c000",
  "summary": {
    "endpoints_configured": [
      "http://localhost:30000/metrics"
    ],
    "endpoints_successful": [
      "http://localhost:30000/metrics"
    ]
  },
  "metrics_phase": "profiling",
  "metrics": {`...)
	if err := writeFamilies(&b, flush, sh, sh.slices, 0); err != nil {
		return err
	}
	if sh.warmupSlices > 0 {
		b = append(b, "\n  },\n  \"warmup_metrics\": {"...)
		if err := writeFamilies(&b, flush, sh, sh.warmupSlices, 1e6); err != nil {
			return err
		}
	}
	b = append(b, "\n  }\n}\n"...)
	if err := flush(); err != nil {
		return err
	}
	return bw.Flush()
}

// writeFamilies appends the families of an export to *b, calling flush
// now and then; the warm-up's get offset added to their statistics.
func writeFamilies(bp *[]byte, flush func() error, sh exportShape, slices int, offset float64) error {
	b := *bp
	defer func() { *bp = b }()
	num := func(v float64) { b = strconv.AppendFloat(b, v, 'g', -1, 64) }
	seriesStat := func(f, s int) float64 { return seriesStat(f, s) + offset }
	const start = int64(1787199819250000000)
	for f := range sh.families {
		typ := [...]string{"gauge", "counter", "histogram"}[f%3]
		if f > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    \"sglang:family_"...)
		b = strconv.AppendInt(b, int64(f), 10)
		b = append(b, "\": {\n      \"type\": \""+typ+"\",\n      \"description\": \"A synthetic "+typ+".\",\n      \"series\": ["...)
		for s := range sh.series {
			if s > 0 {
				b = append(b, ',')
			}
			b = append(b, "\n        {\n          \"endpoint_url\": \"http://localhost:30000/metrics\",\n          \"labels\": {\n            \"model_name\": \"deepseek-ai/DeepSeek-V4\",\n            \"tp_rank\": \""...)
			b = strconv.AppendInt(b, int64(s), 10)
			b = append(b, "\"\n          },\n          \"stats\": {\n            \"avg\": "...)
			num(seriesStat(f, s))
			b = append(b, ",\n            \"max\": "...)
			num(2 * seriesStat(f, s))
			b = append(b, "\n          },"...)
			if typ == "histogram" {
				b = append(b, "\n          \"buckets\": {\n            \"0.1\": 3,\n            \"+Inf\": 9\n          },"...)
			}
			b = append(b, "\n          \"timeslices\": ["...)
			for i := range slices {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, "\n            {\n              \"start_ns\": "...)
				b = strconv.AppendInt(b, start+int64(i)*1e9, 10)
				b = append(b, ",\n              \"end_ns\": "...)
				b = strconv.AppendInt(b, start+int64(i+1)*1e9, 10)
				if typ == "counter" {
					b = append(b, ",\n              \"total\": "...)
					num(float64(i%977) + 0.5)
					b = append(b, ",\n              \"rate\": "...)
					num(float64(i%977) + 0.5)
				} else {
					b = append(b, ",\n              \"avg\": "...)
					num(seriesStat(f, s) + float64(i%89)/89)
					b = append(b, ",\n              \"min\": "...)
					num(seriesStat(f, s))
					b = append(b, ",\n              \"max\": "...)
					num(seriesStat(f, s) + 1.25)
				}
				b = append(b, "\n            }"...)
				if len(b) > 64<<10 {
					*bp = b
					if err := flush(); err != nil {
						return err
					}
					b = *bp
				}
			}
			if slices > 0 {
				b = append(b, "\n          "...)
			}
			b = append(b, "]\n        }"...)
		}
		b = append(b, "\n      ]\n    }"...)
	}
	return nil
}

// seriesStat is the "avg" statistic writeExport gives series s of family f.
func seriesStat(f, s int) float64 { return float64(f*100+s) + 0.125 }

// writeExportFile writes an export of the shape to a file in dir and
// returns its path and size.
func writeExportFile(t testing.TB, dir string, sh exportShape) (string, int64) {
	t.Helper()
	p := filepath.Join(dir, ServerMetricsFile)
	f, err := os.Create(p)
	require.NoError(t, err)
	require.NoError(t, writeExport(f, sh))
	require.NoError(t, f.Close())
	st, err := os.Stat(p)
	require.NoError(t, err)
	return p, st.Size()
}

// checkExport asserts that exp is what writeExport wrote for the shape.
func checkExport(t *testing.T, exp *ServerMetricsExport, sh exportShape) {
	t.Helper()
	assert.Equal(t, "1.1", exp.SchemaVersion)
	assert.Equal(t, "0.12.0", exp.AIPerfVersion)
	assert.Equal(t, "profiling", exp.MetricsPhase)
	assert.Equal(t, []string{"http://localhost:30000/metrics"}, exp.Endpoints)
	require.Len(t, exp.Metrics, sh.families)
	for f := range sh.families {
		m := exp.Metrics["sglang:family_"+strconv.Itoa(f)]
		require.NotNil(t, m, "family %d", f)
		assert.Equal(t, [...]string{"gauge", "counter", "histogram"}[f%3], m.Type)
		require.Len(t, m.Series, sh.series)
		for s, se := range m.Series {
			avg, ok := se.Stat("avg")
			assert.True(t, ok)
			assert.Equal(t, seriesStat(f, s), avg, "family %d series %d", f, s)
			assert.Equal(t, strconv.Itoa(s), se.Labels["tp_rank"])
		}
	}
}

// The generator writes what the reader takes for aiperf's export.
func TestWriteExport(t *testing.T) {
	sh := exportShape{families: 4, series: 3, slices: 5, warmupSlices: 2}
	p, _ := writeExportFile(t, t.TempDir(), sh)
	exp, err := ReadServerMetricsFile(p)
	require.NoError(t, err)
	checkExport(t, exp, sh)
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	slow, err := readServerMetricsTolerant(data, p)
	require.NoError(t, err)
	assert.Equal(t, slow, exp)
}

// BenchmarkReadServerMetricsFile reads a ~100 MB export (a long point's),
// nearly all of it timeslices, a third of them the warm-up's; B/op is the
// memory a read costs.
func BenchmarkReadServerMetricsFile(b *testing.B) {
	sh := exportShape{families: 45, series: 8, slices: 900, warmupSlices: 450}
	p, size := writeExportFile(b, b.TempDir(), sh)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadServerMetricsFile(p); err != nil {
			b.Fatal(err)
		}
	}
}
