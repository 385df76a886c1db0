package compare

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"sweep/internal/atomicfile"
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
// (an A/A) and measures their noise on m (Calibrate).
func CalibrateDirs(ctx context.Context, dirs []string, m Metric) (*Calibration, error) {
	sides := make([][]*knee.Arm, len(dirs))
	for i, dir := range dirs {
		arms, err := ReadSide(ctx, "run", dir)
		if err != nil {
			return nil, err
		}
		sides[i] = arms
	}
	return Calibrate(dirs, sides, m)
}

// WriteCalibrationFile writes c to path atomically, creating its
// directory.
func WriteCalibrationFile(path string, c *Calibration) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteWith(path, 0o644, func(w io.Writer) error { return WriteCalibration(w, c) })
}
