// Package atomicfile writes files so that a reader sees either the old
// content or the whole new content, never a torn file, even when the writer
// is killed half-way:
//
//	err := atomicfile.Write(path, data, 0o644)
//	err = atomicfile.WriteJSON(path, v) // indented, trailing newline
//
// The data goes to a temporary file in the same directory, is synced, and
// is renamed over path; the directory is synced after the rename.
package atomicfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Write replaces path with data atomically.
func Write(path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name())
		}
	}()
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
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync() // best effort: makes the rename itself durable
		_ = d.Close()
	}
	return nil
}

// WriteJSON writes v as indented JSON with a trailing newline, atomically.
// HTML characters are not escaped.
func WriteJSON(path string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return Write(path, buf.Bytes(), 0o644)
}

// CleanStale removes temporary files that an interrupted Write left in dir.
func CleanStale(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, ".") && strings.HasSuffix(n, ".tmp") && !e.IsDir() {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				return err
			}
		}
	}
	return nil
}
