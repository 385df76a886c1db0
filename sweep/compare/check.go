package compare

import (
	"encoding/json"

	"sweep/internal/atomicfile"
	"sweep/internal/usage"
)

// CheckCalibrationOut checks the file a calibration is to be written to
// (--out): a new file (its directory is made), or a calibration file,
// which it replaces (calibrating again to the same file is the usual
// way). Anything else is refused as a *usage.Error, since writing would
// overwrite it: a directory, or a file that is not a calibration (a
// result, a sim calibration, notes).
func CheckCalibrationOut(path string) error {
	err := atomicfile.CheckReplace(path, atomicfile.Own{Kind: "noise calibration file", Writer: "sweep compare --calibrate", Example: "noise.json",
		Is: func(data []byte) bool {
			var head struct {
				Kind string `json:"kind"`
			}
			return json.Unmarshal(data, &head) == nil && head.Kind == CalibrationKind
		}})
	if err != nil {
		return usage.Errorf("%w", err)
	}
	return nil
}
