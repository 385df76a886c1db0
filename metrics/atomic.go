package metrics

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// WriteFileAtomic writes data to path through a temporary file in the same
// directory (write, Sync, Close, Rename), so readers see the old file or
// the new one, never a partial one. The temporary file is removed on
// error; stale temporaries of the same target are cleared first.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if stale, _ := filepath.Glob(filepath.Join(dir, "."+escapeGlob(base)+".*.tmp")); len(stale) > 0 {
		for _, s := range stale {
			_ = os.Remove(s) // best effort: a leftover from a crashed writer
		}
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // harmless once renamed
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	return err
}

func escapeGlob(s string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	return r.Replace(s)
}

// MarshalResult encodes a result as InferenceX writes it (two-space
// indent) with a trailing newline.
func MarshalResult(r *Result) ([]byte, error) {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// WriteResult writes the result atomically to path.
func WriteResult(path string, r *Result) error {
	data, err := MarshalResult(r)
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, data, 0o644)
}
