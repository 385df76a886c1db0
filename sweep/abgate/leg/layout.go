package leg

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sweep/sweep/run"
)

// Files of a leg's output directory.
const (
	ReportTable = "report.md"
	ReportJSON  = "report.json"
	// LegFile marks the directory of a `sweep ab run` (Run): what each
	// arm's replicates are made with. A rerun on the directory resumes
	// the leg (Request.Resume).
	LegFile = "leg.json"
)

// ServerDir is where arm label's server writes its logs and server.json.
func ServerDir(dir, label string) string { return filepath.Join(dir, label, "server") }

// RootDir is the BFCL_PROJECT_ROOT of replicate rep (1-based) of arm
// label: its first attempt's (AttemptRoot).
func RootDir(dir, label string, rep int) string { return AttemptRoot(dir, label, rep, 1) }

// AttemptRoot is the BFCL_PROJECT_ROOT of attempt n (1-based) of
// replicate rep of arm label: <arm>/bfcl-r<rep>, then, for a replicate a
// resumed leg runs again, <arm>/bfcl-r<rep>.try<n>, so no attempt writes
// where an earlier one did.
func AttemptRoot(dir, label string, rep, n int) string {
	name := fmt.Sprintf("bfcl-r%d", rep)
	if n > 1 {
		name += fmt.Sprintf(".try%d", n)
	}
	return filepath.Join(dir, label, name)
}

// PythonDir is the directory first on the PYTHONPATH of the bfcl
// processes of root (AttemptRoot): it holds the sitecustomize.py that adds
// the registry entry (abgate.Registry).
func PythonDir(root string) string { return root + "-python" }

// LogFile is the log of root's bfcl stage ("models", "generate",
// "evaluate").
func LogFile(root, stage string) string { return root + "-" + stage + ".log" }

// RecordFile is the record of root's replicate (Replicate): what it was
// made with and whether it ended.
func RecordFile(root string) string { return root + ".json" }

// withoutLock is a leg directory's entries but its lock (lockLegDir),
// which marks no leg.
func withoutLock(entries []os.DirEntry) []os.DirEntry {
	var out []os.DirEntry
	for _, e := range entries {
		if e.Name() != run.LockFile {
			out = append(out, e)
		}
	}
	return out
}

// holds names up to three of a directory's entries.
func holds(entries []os.DirEntry) string {
	var names []string
	for _, e := range entries[:min(3, len(entries))] {
		names = append(names, e.Name())
	}
	if len(entries) > 3 {
		names = append(names, "...")
	}
	return strings.Join(names, ", ")
}
