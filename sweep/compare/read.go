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
	"sweep/sweep/run"
)

// NoResultsError is a side (a directory) that holds no result file.
type NoResultsError struct{ Name, Dir string }

func (e *NoResultsError) Error() string {
	return fmt.Sprintf("%s %s holds no result file (a *.json with \"conc\" and \"request_metrics\")", e.Name, e.Dir)
}

// ReadSide reads the arms of one side of a comparison from dir
// (knee.ReadMixed; a result whose aiperf artifacts are gone has the
// benchmark duration its run.json records, run.ConfiguredDuration);
// name ("BASE", "HEAD", "run") starts its errors. A side without results
// is a *NoResultsError.
func ReadSide(ctx context.Context, name, dir string) ([]*knee.Arm, error) {
	arms, err := knee.ReadMixed(ctx, dir, run.ConfiguredDuration)
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

// distinctRuns refuses runs that share a result file (sharedResult).
func distinctRuns(dirs []string, sides [][]*knee.Arm) error {
	i, j, file, err := sharedResult(sides)
	if err != nil || file == "" {
		return err
	}
	return usage.Errorf("run %s and run %s both hold the result %s: an A/A calibration needs separate runs of the same points (a result read twice counts as its own replicate, with no noise)", dirs[i], dirs[j], file)
}

// ReadSides reads BASE from base and HEAD from head (ReadSide), refusing
// as a *usage.Error two sides that share a result file (one directory
// given twice, one inside the other, or results linked from the other,
// as cp -al copies them): a sweep compared with itself always passes.
func ReadSides(ctx context.Context, base, head string) (baseArms, headArms []*knee.Arm, err error) {
	if baseArms, err = ReadSide(ctx, "BASE", base); err != nil {
		return nil, nil, err
	}
	if headArms, err = ReadSide(ctx, "HEAD", head); err != nil {
		return nil, nil, err
	}
	_, _, file, err := sharedResult([][]*knee.Arm{baseArms, headArms})
	if err != nil {
		return nil, nil, err
	}
	if file != "" {
		return nil, nil, usage.Refusef("BASE %s and HEAD %s hold the same result file (%s): a sweep compared with itself always passes; give HEAD the candidate's results, in a directory of their own", base, head, file)
	}
	return baseArms, headArms, nil
}

// sharedResult finds a result file that two of sides hold: the same file
// by its real path, or by its inode (a hard link). It returns the two
// sides and the file as the later one names it; "" when none is shared.
func sharedResult(sides [][]*knee.Arm) (first, later int, file string, err error) {
	type held struct {
		side int
		info os.FileInfo
	}
	byPath := map[string]held{}
	for j, arms := range sides {
		for _, a := range arms {
			for _, s := range a.Samples {
				real, err := filepath.EvalSymlinks(s.File)
				if err != nil {
					return 0, 0, "", err
				}
				info, err := os.Stat(real)
				if err != nil {
					return 0, 0, "", err
				}
				if h, ok := byPath[real]; ok && h.side != j {
					return h.side, j, s.File, nil
				}
				for _, h := range byPath {
					if h.side != j && os.SameFile(h.info, info) {
						return h.side, j, s.File, nil
					}
				}
				byPath[real] = held{j, info}
			}
		}
	}
	return 0, 0, "", nil
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
