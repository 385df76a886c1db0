package simfit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/simengine"
)

// writeExport writes a point's result file and, when export is not "",
// the server metrics export beside it; it returns the result file's path.
func writeExport(t *testing.T, export string) string {
	t.Helper()
	dir := t.TempDir()
	if export != "" {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "aiperf_artifacts"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "aiperf_artifacts", "server_metrics_export.json"), []byte(export), 0o644))
	}
	return filepath.Join(dir, "result.json")
}

// TestReadRetractions: the retractions a point records are SGLang's
// retracted-requests counter or vLLM's preemptions counter, as aiperf
// exports them (without _total) or with it, summed over the ranks; the
// gauge num_retracted_reqs (the last batch's) is not read. No export, or
// none of the counters in it, records nothing.
func TestReadRetractions(t *testing.T) {
	for _, tc := range []struct {
		name, export string
		want         retractions
	}{
		{"no export", "", retractions{}},
		{"no counter", `{"metrics": {"sglang:num_retracted_reqs": {"type": "gauge", "series": [{"stats": {"avg": 3, "max": 5}}]}}}`, retractions{}},
		{"SGLang, none retracted", `{"metrics": {"sglang:num_retracted_requests": {"type": "counter", "series": [{"labels": {"dp_rank": "0"}, "stats": {"total": 0}}, {"labels": {"dp_rank": "1"}, "stats": {"total": 0}}]}}}`,
			retractions{"sglang:num_retracted_requests_total", 0}},
		{"SGLang, summed over the ranks", `{"metrics": {"sglang:num_retracted_requests": {"type": "counter", "series": [{"labels": {"dp_rank": "0"}, "stats": {"total": 12}}, {"labels": {"dp_rank": "1"}, "stats": {"total": 5}}]}}}`,
			retractions{"sglang:num_retracted_requests_total", 17}},
		{"vLLM, named with _total", `{"metrics": {"vllm:num_preemptions_total": {"type": "counter", "series": [{"stats": {"total": 4}}]}}}`,
			retractions{"vllm:num_preemptions_total", 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readRetractions(writeExport(t, tc.export))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	_, err := readRetractions(writeExport(t, `[1]`))
	assert.Error(t, err, "an export that does not read")
}

// TestPinned: a point of a host-tier arm is left out as past its device
// pool on the retractions its results record where they record them:
// fitted when the engine retracted none though the estimate of its
// requests' context is 130 % of a rank's pool (it counts a prefix the
// requests share once per request: the B300 DeepSeek-V4 HiCache arm's
// c64, left out before), left out when it retracted some though the
// estimate is under the pool; the estimate decides only where nothing is
// recorded, and the reason says which evidence decided.
func TestPinned(t *testing.T) {
	const pool, ranks = 4 << 20, 4 // every rank's pool summed: 1M tokens per rank
	over := simengine.FitPoint{Conc: 64, CtxTokens: 1.3 * pool}
	under := simengine.FitPoint{Conc: 64, CtxTokens: 0.5 * pool}
	for _, tc := range []struct {
		name    string
		retract retractions
		p       simengine.FitPoint
		want    string
	}{
		{"none retracted, estimated past the pool", retractions{"sglang:num_retracted_requests_total", 0}, over, ""},
		{"retracted, estimated under the pool", retractions{"sglang:num_retracted_requests_total", 17}, under,
			"the engine retracted 17 requests over the window (sglang:num_retracted_requests_total in its server metrics export): it recomputes them, which the step model does not describe"},
		{"vLLM preempted", retractions{"vllm:num_preemptions_total", 4}, under,
			"the engine retracted 4 requests over the window (vllm:num_preemptions_total in its server metrics export): it recomputes them, which the step model does not describe"},
		{"nothing recorded, estimated past the pool", retractions{}, over,
			"estimated, no retractions recorded (no sglang:num_retracted_requests_total or vllm:num_preemptions_total beside it): the requests in flight decode over 1363149 tokens of context per rank, 130.0 % of the device pool's 1048576"},
		{"nothing recorded, estimated under the pool", retractions{}, under, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := pinned(deviceJudged{pool: pool, retract: tc.retract}, tc.p, ranks)
			if tc.want == "" {
				assert.Empty(t, got)
				return
			}
			assert.Contains(t, got, tc.want)
		})
	}
}

// TestLeaveOutPastDevicePool: of a host-tier arm's points, the one whose
// engine recorded retractions is left out, named with that reason in the
// arm's left-out list; the one that recorded none is fitted whatever its
// estimate.
func TestLeaveOutPastDevicePool(t *testing.T) {
	const pool = 4 << 20
	points := []simengine.FitPoint{{Conc: 32, CtxTokens: 1.3 * pool}, {Conc: 64, CtxTokens: 0.5 * pool}}
	judge := []deviceJudged{
		{0, "c32", pool, retractions{"sglang:num_retracted_requests_total", 0}},
		{1, "c64", pool, retractions{"sglang:num_retracted_requests_total", 9}},
	}
	var arm simengine.ArmCalibration
	kept := leaveOutPastDevicePool(&arm, 4, points, judge)
	assert.Equal(t, points[:1], kept)
	assert.Equal(t, []string{"c64: the engine retracted 9 requests over the window (sglang:num_retracted_requests_total in its server metrics export): it recomputes them, which the step model does not describe"}, arm.LeftOut)
}
