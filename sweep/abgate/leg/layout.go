package leg

import (
	"fmt"
	"path/filepath"
)

// Files of a leg's output directory.
const (
	ReportTable = "report.md"
	ReportJSON  = "report.json"
)

// ServerDir is where arm label's server writes its logs and server.json.
func ServerDir(dir, label string) string { return filepath.Join(dir, label, "server") }

// PythonDir is the directory first on the PYTHONPATH of replicate rep's
// bfcl processes: it holds the sitecustomize.py that adds the registry
// entry (abgate.Registry).
func PythonDir(dir, label string, rep int) string {
	return filepath.Join(dir, label, fmt.Sprintf("bfcl-r%d-python", rep))
}

// RootDir is the BFCL_PROJECT_ROOT of replicate rep (1-based) of arm label.
func RootDir(dir, label string, rep int) string {
	return filepath.Join(dir, label, fmt.Sprintf("bfcl-r%d", rep))
}
