package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Own describes the files an output (an --out) may replace: the files
// its own command wrote before, so that writing again loses nothing.
type Own struct {
	Kind    string // "noise calibration file"
	Writer  string // "sweep compare --calibrate"
	Example string // the file to name inside a directory given instead
	// Is tells one of its files from its content.
	Is func(data []byte) bool
}

// CheckReplace checks that writing path loses nothing: path does not
// exist, or it is a file of own's kind, which the write replaces (writing
// again to the same file is the usual way). A directory, or a file of any
// other kind (a result, notes), is refused with the fix: the write would
// overwrite it.
func CheckReplace(path string, own Own) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("--out: %w", err)
	case st.IsDir():
		return fmt.Errorf("--out %s is a directory: name a file (%s)", path, filepath.Join(path, own.Example))
	}
	data, err := readHead(path)
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if !own.Is(data) {
		return fmt.Errorf("--out %s exists and is not a %s (%s replaces only its own): name another file, or remove it first", path, own.Kind, own.Writer)
	}
	return nil
}

// maxOwn bounds what CheckReplace reads of a file: one of its own kind
// is small, and a larger one, cut there, is not of its kind.
const maxOwn = 16 << 20

func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxOwn))
}
