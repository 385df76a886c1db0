package leg

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// keepEarlierReport moves the report an earlier run left in the leg's
// directory dir (ReportTable, ReportJSON) aside to <file>.<n>, the first
// n free for both, each with one rename, so a resumed leg killed before
// it writes its own report (kill -9) leaves no report of an earlier state
// of the leg in their place. It returns the moves made, {from, to}, by
// file name; none when dir holds no report.
func keepEarlierReport(dir string) ([][2]string, error) {
	var present []string
	for _, name := range []string{ReportTable, ReportJSON} {
		if _, err := os.Lstat(filepath.Join(dir, name)); !errors.Is(err, fs.ErrNotExist) {
			present = append(present, name)
		}
	}
	if len(present) == 0 {
		return nil, nil
	}
	n := freeSuffix(filepath.Join(dir, ReportTable), filepath.Join(dir, ReportJSON))
	var moves [][2]string
	for _, name := range present {
		to := fmt.Sprintf("%s.%d", name, n)
		if err := os.Rename(filepath.Join(dir, name), filepath.Join(dir, to)); err != nil {
			return moves, fmt.Errorf("leg directory %s: cannot move the earlier report aside: %w", dir, err)
		}
		moves = append(moves, [2]string{name, to})
	}
	return moves, nil
}
