package synth

import (
	"encoding/json"
	"os"
	"path/filepath"

	"sweep/metrics/power"
)

// WritePowerLane writes, beside a point's result in dir, what its power
// lane leaves there: the clock offset and the power adapter's verdict
// (valid or not with its reasons, the GPU count expected and the GPU ids
// the monitor observed), as the energy tests of sweep/campaign and
// sweep/report read them.
func WritePowerLane(dir string, valid bool, expected int, observed []string, reasons ...string) error {
	if err := os.WriteFile(filepath.Join(dir, power.OffsetFile), []byte("+0000\n"), 0o644); err != nil {
		return err
	}
	data, err := json.Marshal(map[string]any{"schema_version": 1, "power_valid": valid, "reasons": reasons,
		"expected_gpu_count": expected, "observed_gpu_ids": observed})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, power.ValidationFile), data, 0o644)
}
