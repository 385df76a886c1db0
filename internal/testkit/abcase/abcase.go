// Package abcase stages the A/B gate's conformance cases (testdata/ab/cases)
// for tests: each case is copied to a directory of the test's, its files
// get the mtimes case.json names (git keeps none), and <CASE> in its
// command line becomes that directory. Each test decodes the case's
// expectations into what it checks.
package abcase

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Case is cases/<id>/case.json after staging.
type Case struct {
	ID     string   `json:"id"`
	Args   []string `json:"args"` // <CASE> replaced by the staged directory
	Mtimes struct {
		Default string            `json:"default"`
		Files   map[string]string `json:"files"`
	} `json:"mtimes"`
	Expect json.RawMessage `json:"expect"`
	// Dir is the staged copy.
	Dir string `json:"-"`
}

// IDs lists the case directories under casesDir, in name order.
func IDs(casesDir string) ([]string, error) {
	entries, err := os.ReadDir(casesDir)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

// Stage copies casesDir/<id> to dst (an empty directory) and returns its
// case with the mtimes set and <CASE> replaced.
func Stage(casesDir, id, dst string) (*Case, error) {
	src := filepath.Join(casesDir, id)
	data, err := os.ReadFile(filepath.Join(src, "case.json"))
	if err != nil {
		return nil, err
	}
	var c Case
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%s/case.json: %w", src, err)
	}
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		return nil, err
	}
	def, err := time.Parse(time.RFC3339, c.Mtimes.Default)
	if err != nil {
		return nil, fmt.Errorf("%s/case.json: mtimes.default: %w", src, err)
	}
	err = filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chtimes(p, def, def)
	})
	if err != nil {
		return nil, err
	}
	for rel, ts := range c.Mtimes.Files {
		mt, err := time.Parse(time.RFC3339, ts)
		if err != nil {
			return nil, fmt.Errorf("%s/case.json: mtimes.files[%s]: %w", src, rel, err)
		}
		if err := os.Chtimes(filepath.Join(dst, filepath.FromSlash(rel)), mt, mt); err != nil {
			return nil, err
		}
	}
	for i, a := range c.Args {
		c.Args[i] = strings.ReplaceAll(a, "<CASE>", dst)
	}
	c.Dir = dst
	return &c, nil
}
