package knee_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/knee"
)

// TestAnalyzeSupersededProbe: a probe at a concurrency where the arm also
// has a full-length result (an adaptive discovery keeps the probe it ran
// again at the full length) is left out of the reading there, usable or
// failed, and listed as superseded: the verdict and every point's reading
// are those of the arm without it. A full-length result that failed
// supersedes its probe too. A probe alone at its concurrency still counts.
func TestAnalyzeSupersededProbe(t *testing.T) {
	curve := func(c int) float64 { return 1000 * float64(min(c, 16)) } // saturates at c16
	full := func(c int) knee.Sample {
		v := curve(c)
		return knee.Sample{File: "full", Conc: c, TotalTPS: &v, Seconds: 1200}
	}
	probe := func(c int, ratio float64) knee.Sample {
		v := ratio * curve(c)
		return knee.Sample{File: "probe", Conc: c, TotalTPS: &v, Probe: true, Seconds: 300}
	}
	failed := func(s knee.Sample, why string) knee.Sample {
		s.Excluded = why
		return s
	}
	base := []knee.Sample{probe(1, 1), probe(4, 1), full(16), probe(8, 1)}
	tests := []struct {
		name string
		at64 []knee.Sample // the samples at c64
		// want: the reading at c64 (0: not usable), its exclusions.
		want     float64
		excluded []knee.Exclusion
	}{
		{"usable probe read twice the full run", []knee.Sample{probe(64, 2), full(64)}, curve(64),
			[]knee.Exclusion{{File: "probe", Reason: knee.ExcludedSuperseded}}},
		{"failed probe", []knee.Sample{failed(probe(64, 1), "marked invalid: AL"), full(64)}, curve(64),
			[]knee.Exclusion{{File: "probe", Reason: knee.ExcludedSuperseded + " (the probe: marked invalid: AL)"}}},
		{"failed full-length run", []knee.Sample{probe(64, 1), failed(full(64), "error rate 15.0% > 10%")}, 0,
			[]knee.Exclusion{{File: "probe", Reason: knee.ExcludedSuperseded}, {File: "full", Reason: "error rate 15.0% > 10%"}}},
		{"probe alone", []knee.Sample{probe(64, 1)}, curve(64), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			samples := slices.Concat(base, tt.at64)
			slices.SortStableFunc(samples, func(a, b knee.Sample) int { return a.Conc - b.Conc })
			arm := &knee.Arm{Samples: samples}
			given := slices.Clone(samples)
			r := knee.Analyze(arm, knee.Options{})
			assert.Equal(t, given, arm.Samples, "the arm's samples are not changed")
			i := slices.IndexFunc(r.Points, func(p knee.Point) bool { return p.Conc == 64 })
			require.GreaterOrEqual(t, i, 0)
			pt := r.Points[i]
			if tt.want == 0 {
				assert.False(t, pt.Usable)
			} else {
				require.NotNil(t, pt.Throughput)
				assert.InDelta(t, tt.want, *pt.Throughput, 1e-9)
				assert.Len(t, pt.Replicates, 1)
			}
			assert.Equal(t, tt.excluded, pt.Excluded)

			// The verdict is the one without the superseded probe.
			without := slices.DeleteFunc(slices.Clone(samples), func(s knee.Sample) bool {
				return s.Probe && s.Conc == 64 && len(tt.at64) > 1
			})
			w := knee.Analyze(&knee.Arm{Samples: without}, knee.Options{})
			assert.Equal(t, w.Status, r.Status)
			assert.Equal(t, w.Knee, r.Knee, "%s", r.Reason)
			assert.Equal(t, w.Peak, r.Peak)
			assert.Equal(t, w.Reason, r.Reason)
			assert.InDelta(t, w.PeakValue, r.PeakValue, 1e-9*math.Max(1, w.PeakValue))
			if tt.want != 0 {
				assert.Equal(t, 16, r.Knee, "%s", r.Reason)
			}
		})
	}
}

// TestAnalyzeOneMeasurement: results of one point whose clients ran for
// different benchmark durations (a discovery's 1200 s and an official
// sweep's 3600 s gathered in one directory) are no replicates: the
// point is read at the duration most of the arm's results ran (of a tie,
// the longer) and the others are left out, named with both durations. A
// result whose duration is unknown is kept.
func TestAnalyzeOneMeasurement(t *testing.T) {
	at := func(c int, seconds, v float64) knee.Sample {
		return knee.Sample{File: fmt.Sprintf("c%d-%gs", c, seconds), Conc: c, TotalTPS: &v, BenchmarkSeconds: seconds}
	}
	grid := func(seconds float64, concs ...int) []knee.Sample {
		var out []knee.Sample
		for _, c := range concs {
			out = append(out, at(c, seconds, 1000*float64(min(c, 16))))
		}
		return out
	}
	other := func(file string, ran, read float64) knee.Exclusion {
		return knee.Exclusion{File: file, Reason: fmt.Sprintf("%s: ran %g s, the point is read at %g s, the arm's most common duration (of a tie, the longer): results of different lengths are no replicates",
			knee.ExcludedOtherLength, ran, read)}
	}
	for _, tc := range []struct {
		name    string
		samples []knee.Sample
		// the replicates read at c4 and the results left out there
		want     []float64
		excluded []knee.Exclusion
		// the duration of the results marked OtherMeasurement at every
		// concurrency, 0 for none
		other float64
	}{
		{"the minority length is left out", slices.Concat(grid(1200, 1, 2, 4, 8, 16, 32), []knee.Sample{at(4, 3600, 3700)}),
			[]float64{4000}, []knee.Exclusion{other("c4-3600s", 3600, 1200)}, 3600},
		{"of a tie, the longer", slices.Concat(grid(1200, 1, 2, 4, 8, 16, 32), grid(3600, 1, 2, 4, 8, 16, 32)),
			[]float64{4000}, []knee.Exclusion{other("c4-1200s", 1200, 3600)}, 1200},
		{"replicates of one length", slices.Concat(grid(1200, 1, 2, 4, 8, 16, 32), []knee.Sample{at(4, 1200, 4100)}),
			[]float64{4000, 4100}, nil, 0},
		{"an unknown duration is kept", slices.Concat(grid(1200, 1, 2, 4, 8, 16, 32), []knee.Sample{at(4, 0, 3700)}),
			[]float64{4000, 3700}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			samples := slices.Clone(tc.samples)
			slices.SortStableFunc(samples, func(a, b knee.Sample) int { return a.Conc - b.Conc })
			given := slices.Clone(samples)
			r := knee.Analyze(&knee.Arm{Samples: samples}, knee.Options{})
			assert.Equal(t, given, samples, "the arm's samples are not changed")
			i := slices.IndexFunc(r.Points, func(p knee.Point) bool { return p.Conc == 4 })
			require.GreaterOrEqual(t, i, 0)
			assert.ElementsMatch(t, tc.want, r.Points[i].Replicates)
			assert.Equal(t, tc.excluded, r.Points[i].Excluded)

			marked := knee.OneMeasurement(samples)
			assert.Equal(t, marked, knee.OneMeasurement(marked), "marking again changes nothing")
			for _, s := range marked {
				assert.Equal(t, tc.other > 0 && s.BenchmarkSeconds == tc.other, s.OtherMeasurement, s.File)
			}
		})
	}
}

// TestAnalyzeOneSetup: an arm whose results were made with another
// client, trace set, aiperf version or image (a built-in client's point
// gathered with aiperf's, one point rerun on a new image) was pooled into
// one curve without a word. Such a result is left out as a result of
// another duration is, at any concurrency (the arm is one measurement),
// named with what differs; the arm is read as most of its results were
// made (per part, of a tie the last by name). A result that does not
// say a part is kept.
func TestAnalyzeOneSetup(t *testing.T) {
	const weka, synth = "semianalysis_cc_traces_weka_062126_256k, 393 entries", "sweep_synthetic_agentic, 393 entries"
	made := func(c int, v float64, client, dataset, image string) knee.Sample {
		return knee.Sample{File: fmt.Sprintf("c%d-%s", c, client), Conc: c, TotalTPS: &v, Client: client, Dataset: dataset, AiperfVersion: "0.12.0", Image: image}
	}
	grid := func(concs ...int) []knee.Sample {
		var out []knee.Sample
		for _, c := range concs {
			out = append(out, made(c, 1000*float64(min(c, 16)), "aiperf", weka, "sglang:v0.5.16"))
		}
		return out
	}
	other := func(file, what string) knee.Exclusion {
		return knee.Exclusion{File: file, Reason: knee.ExcludedOtherSetup + ": " + what + " (most of the arm's results): results made otherwise are not one measurement"}
	}
	for _, tc := range []struct {
		name    string
		samples []knee.Sample
		conc    int // the point asserted
		// its replicates read and the results left out there
		want     []float64
		excluded []knee.Exclusion
	}{
		{"another client and trace set alone at its point", append(grid(1, 2, 4, 8, 16), made(32, 9000, "built-in", synth, "sglang:v0.5.16")),
			32, nil, []knee.Exclusion{other("c32-built-in", "client built-in, not aiperf; trace set "+synth+", not "+weka)}},
		{"another image beside a replicate", append(grid(1, 2, 4, 8, 16, 32), made(4, 4400, "aiperf2", weka, "sglang:v0.5.17")),
			4, []float64{4000}, []knee.Exclusion{other("c4-aiperf2", "client aiperf2, not aiperf; image sglang:v0.5.17, not sglang:v0.5.16")}},
		{"a result that does not say is kept", append(grid(1, 2, 4, 8, 16, 32), made(4, 4100, "", "", "")),
			4, []float64{4000, 4100}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			samples := slices.Clone(tc.samples)
			slices.SortStableFunc(samples, func(a, b knee.Sample) int { return a.Conc - b.Conc })
			r := knee.Analyze(&knee.Arm{Samples: samples}, knee.Options{})
			points := r.Points
			if tc.want == nil {
				// no result of the arm's own there: not a failed point
				// of the arm, listed apart
				assert.False(t, slices.ContainsFunc(r.Points, func(p knee.Point) bool { return p.Conc == tc.conc }))
				assert.NotContains(t, r.Reason, "failed")
				points = r.MadeOtherwise
			}
			i := slices.IndexFunc(points, func(p knee.Point) bool { return p.Conc == tc.conc })
			require.GreaterOrEqual(t, i, 0)
			assert.ElementsMatch(t, tc.want, points[i].Replicates)
			assert.Equal(t, tc.excluded, points[i].Excluded)
			marked := knee.OneMeasurement(samples)
			assert.Equal(t, marked, knee.OneMeasurement(marked), "marking again changes nothing")
		})
	}
}

// TestSidesRanApart: an arm's two sides whose durations neither says ran
// for different lengths when their spans lie a median more than
// knee.ArmSpansApart apart and the longer spans delivered that much more
// work (throughput × span): a longer run at one throughput. A slower
// engine stretches its spans but delivers less, and one point far apart
// does not move the median. Judged point by point, 120 s results against
// 200 s ones (spans 132 s against 216 s) read as one length.
func TestSidesRanApart(t *testing.T) {
	// pts is n points of spans b and h at throughputs bt and ht, with
	// extra ones appended.
	pts := func(n int, b, h, bt, ht float64, extra ...knee.PairedSpans) []knee.PairedSpans {
		var out []knee.PairedSpans
		for i := range n {
			wobble := 1 + 0.02*float64(i%3-1) // spans of one length lie a few % apart
			out = append(out, knee.PairedSpans{BaseSpan: b, HeadSpan: h * wobble, BaseTPS: bt, HeadTPS: ht / wobble})
		}
		return append(out, extra...)
	}
	for _, tc := range []struct {
		name       string
		ps         []knee.PairedSpans
		apart      bool
		span, work float64 // the medians, to 2 decimals
	}{
		{"none", nil, false, 1, 1},
		{"one length", pts(6, 1000, 1000, 100, 100), false, 1, 1},
		{"120 s against 200 s at one throughput", pts(6, 132.2, 215.8, 100, 100), true, 1.63, 1.63},
		{"200 s against 120 s", pts(6, 215.8, 132.2, 100, 100), true, 0.61, 0.61},
		{"120 s against 240 s", pts(6, 132, 253, 100, 100), true, 1.92, 1.92},
		{"1200 s against 1500 s", pts(6, 1224, 1524, 100, 100), true, 1.25, 1.25},
		{"spans 12 % apart at one throughput: one length", pts(6, 1000, 1120, 100, 100), false, 1.12, 1.12},
		{"a slower engine: spans 17 % apart at 25 % less throughput", pts(9, 1000, 1170, 100, 75), false, 1.17, 0.88},
		{"a much slower engine: spans 12 % apart at 56 % less", pts(6, 132, 148, 100, 44), false, 1.12, 0.49},
		{"a faster engine: shorter spans, more work", pts(6, 1224, 1100, 100, 150), false, 0.90, 1.35},
		{"a longer run on a slower engine still delivered more", pts(6, 132.2, 215.8, 100, 80), true, 1.63, 1.31},
		{"one point far apart, the rest one length", pts(5, 1000, 1000, 100, 100, knee.PairedSpans{BaseSpan: 1000, HeadSpan: 2500, BaseTPS: 100, HeadTPS: 100}), false, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apart, span, work := knee.SidesRanApart(tc.ps)
			assert.Equal(t, tc.apart, apart)
			assert.InDelta(t, tc.span, span, 0.005)
			assert.InDelta(t, tc.work, work, 0.005)
			assert.Equal(t, !tc.apart && math.Abs(tc.span-1) <= knee.ArmSpansApart, knee.SpansAlike(span))
		})
	}
}
