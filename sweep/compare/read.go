package compare

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"sweep/internal/atomicfile"
	"sweep/internal/usage"
	"sweep/sweep/knee"
)

// NoResultsError is a side (a directory) that holds no result file.
type NoResultsError struct{ Name, Dir string }

func (e *NoResultsError) Error() string {
	return fmt.Sprintf("%s %s holds no result file (a *.json with \"conc\" and \"request_metrics\")", e.Name, e.Dir)
}

// ReadSide reads the arms of one side of a comparison from dir
// (knee.ReadMixed); name ("BASE", "HEAD", "run") starts its errors. A
// side without results is a *NoResultsError.
func ReadSide(ctx context.Context, name, dir string) ([]*knee.Arm, error) {
	arms, err := knee.ReadMixed(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", name, dir, err)
	}
	if len(arms) == 0 {
		return nil, &NoResultsError{Name: name, Dir: dir}
	}
	return arms, nil
}

// CalibrateDirs reads the directories as repeated runs of the same points
// (an A/A) and measures their noise on m (Calibrate). Runs that share a
// result file (one directory given twice, one inside another, or linked
// from another) are refused as a *usage.Error: a result read twice would
// count as its own replicate, with no noise.
func CalibrateDirs(ctx context.Context, dirs []string, m Metric) (*Calibration, error) {
	sides := make([][]*knee.Arm, len(dirs))
	for i, dir := range dirs {
		arms, err := ReadSide(ctx, "run", dir)
		if err != nil {
			return nil, err
		}
		sides[i] = arms
	}
	if err := distinctRuns(dirs, sides); err != nil {
		return nil, err
	}
	return Calibrate(dirs, sides, m)
}

// distinctRuns refuses runs that share a result file (by its real path).
func distinctRuns(dirs []string, sides [][]*knee.Arm) error {
	in := map[string]int{} // a result file's real path → its run
	for i, arms := range sides {
		for _, a := range arms {
			for _, s := range a.Samples {
				real, err := filepath.EvalSymlinks(s.File)
				if err != nil {
					return err
				}
				if j, ok := in[real]; ok && j != i {
					return usage.Errorf("run %s and run %s both hold the result %s: an A/A calibration needs separate runs of the same points (a result read twice counts as its own replicate, with no noise)", dirs[j], dirs[i], s.File)
				}
				in[real] = i
			}
		}
	}
	return nil
}

// WriteCalibrationFile writes c to path atomically, creating its
// directory; a path CheckCalibrationOut refuses is not written.
func WriteCalibrationFile(path string, c *Calibration) error {
	if err := CheckCalibrationOut(path); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteWith(path, 0o644, func(w io.Writer) error { return WriteCalibration(w, c) })
}
