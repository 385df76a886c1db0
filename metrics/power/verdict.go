package power

import (
	"encoding/json"
	"path/filepath"
	"slices"

	"sweep/internal/inputfile"
)

// ReadOutcome reads the verdict a point's power lane left in resultDir
// (ValidationFile) for its readers: valid or not, the reasons and the GPU
// count (Outcome.Explained names the GPUs, as the point's progress line
// did). ok is false when the lane did not run there (no offset file,
// LaneRan) or left no readable verdict.
func ReadOutcome(resultDir string) (out Outcome, ok bool) {
	if !LaneRan(resultDir) {
		return Outcome{}, false
	}
	data, err := inputfile.Read(filepath.Join(resultDir, ValidationFile), inputfile.SmallJSON)
	if err != nil {
		return Outcome{}, false
	}
	var v struct {
		Valid    bool     `json:"power_valid"`
		Reasons  []string `json:"reasons"`
		Expected *int     `json:"expected_gpu_count"`
		Observed []string `json:"observed_gpu_ids"`
		Filter   []string `json:"gpu_filter"`
	}
	if json.Unmarshal(data, &v) != nil {
		return Outcome{}, false
	}
	out = Outcome{Valid: v.Valid, Reasons: v.Reasons}
	switch in := (&Integration{ObservedGPUs: v.Observed}); {
	case v.Expected != nil && len(v.Observed) > 0:
		out.GPUs = newGPUCount(in, *v.Expected, v.Filter, "")
	case v.Filter != nil:
		out.GPUs = newGPUCount(in, len(v.Filter), v.Filter, "")
	}
	return out, true
}

// SharesNode reports whether the measurement is invalid only as a point
// that shares its node is under InferenceX's rule: the monitor records
// every GPU of the node, the adapter expects TP×PP×PCP of them
// (ExpectedGPUs), and GPUs the point does not use were recorded
// (expected_gpu_count_mismatch with GPUs not expected, as a TP4 point on
// an 8-GPU node has). Integrating only the point's GPUs (a GPU filter,
// Options.GPUs) makes such a point valid.
func (o Outcome) SharesNode() bool {
	return o.GPUs != nil && len(o.GPUs.Extra) > 0 && slices.Contains(o.Reasons, ReasonGPUCountMismatch)
}
