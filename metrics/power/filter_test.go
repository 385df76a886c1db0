package power

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestGPUFilter: the TP4-on-an-8-GPU-node case InferenceX rejects
// (expected_gpu_count_mismatch) is valid when only the point's four GPUs
// are integrated, and the sidecar names the filter.
func TestGPUFilter(t *testing.T) {
	src := filepath.Join("testdata", "cases", "tp4-on-8-gpu-node")
	var pc powerCase
	readJSON(t, filepath.Join(src, "case.json"), &pc)
	dir := t.TempDir()
	for _, in := range pc.Inputs {
		copyFile(t, filepath.Join(src, in), filepath.Join(dir, in))
	}
	agg := filepath.Join(t.TempDir(), "agg.json")
	copyFile(t, filepath.Join(src, "agg_input.json"), agg)
	for _, tc := range []struct {
		gpus    []string
		valid   bool
		reasons []string
	}{
		{nil, false, []string{"expected_gpu_count_mismatch"}},
		{[]string{"0", "1", "2", "3"}, true, nil},
		{[]string{"0", "1", "2"}, false, []string{"expected_gpu_count_mismatch"}},
	} {
		out := Adapt(Options{ResultDir: dir, Aggregate: FilePatcher(agg), ExpectedGPUs: pc.Expected, Zone: time.UTC, GPUs: tc.gpus})
		if out.Valid != tc.valid || !slices.Equal(out.Reasons, tc.reasons) {
			t.Errorf("GPUs %v: valid %v %v, want %v %v", tc.gpus, out.Valid, out.Reasons, tc.valid, tc.reasons)
		}
		data, err := os.ReadFile(filepath.Join(dir, ValidationFile))
		if err != nil {
			t.Fatal(err)
		}
		side, err := parseValue(data)
		if err != nil {
			t.Fatal(err)
		}
		if f := side.get("gpu_filter"); (f != nil) != (tc.gpus != nil) || f != nil && len(f.vals) != len(tc.gpus) {
			t.Errorf("GPUs %v: gpu_filter %s", tc.gpus, dumps(side))
		}
	}
}
