// Package atomicfile writes files so that a reader sees either the old
// content or the whole new content, never a torn file, even when the writer
// is killed half-way:
//
//	err := atomicfile.Write(path, data, 0o644)
//	err = atomicfile.WriteWith(path, 0o644, func(w io.Writer) error { ... })
//	err = atomicfile.WriteJSON(path, v) // indented, trailing newline
//
// The data goes to a temporary file in the same directory, is synced, and
// is renamed over path; the directory is synced after the rename.
package atomicfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Write replaces path with data atomically.
func Write(path string, data []byte, perm os.FileMode) error {
	return WriteWith(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteWith replaces path atomically with what write writes, so a large
// file can be encoded straight into place. When write fails nothing is
// replaced.
func WriteWith(path string, perm os.FileMode, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+tempInfix+"*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name())
		}
	}()
	err = write(f)
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

// tempInfix marks Write's temporary files (".NAME.sweep-123456.tmp"), so
// CleanStale removes its own leftovers and nothing else.
const tempInfix = ".sweep-"

// isOwnTemp reports whether name is a temporary file Write made.
func isOwnTemp(name string) bool {
	if !strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".tmp") {
		return false
	}
	i := strings.LastIndex(name, tempInfix)
	if i <= 1 {
		return false
	}
	digits := name[i+len(tempInfix) : len(name)-len(".tmp")]
	if digits == "" {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// CleanStale removes temporary files that an interrupted Write left in dir;
// other files, even named like temporary files, are left alone.
func CleanStale(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		n := e.Name()
		if e.Type().IsRegular() && isOwnTemp(n) {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				return err
			}
		}
	}
	return nil
}
