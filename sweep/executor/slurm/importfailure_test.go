package slurm

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestImportFailureLine: the line that names a failed in-job import is its
// own last line, not srun's report of the step's exit code, which srun may
// write after it (make test saw "srun: error: vm: task 0: Exited with exit
// code 1" in place of enroot's "Not a directory").
func TestImportFailureLine(t *testing.T) {
	for _, tc := range []struct{ name, log, want string }{
		{"the import's line last", "importing\nenroot: /squash/x.sqsh.lock: Not a directory\n", "enroot: /squash/x.sqsh.lock: Not a directory"},
		{"srun's exit report after it", "enroot: /squash/x.sqsh.lock: Not a directory\nsrun: error: vm: task 0: Exited with exit code 1\n", "enroot: /squash/x.sqsh.lock: Not a directory"},
		{"only srun's report", "srun: error: vm: task 0: Exited with exit code 1\n", "no output (exit 1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "import.log")
			if err := os.WriteFile(path, []byte(tc.log), 0o644); err != nil {
				t.Fatal(err)
			}
			line, ok := importFailure(path, JobStatus{State: "FAILED", ExitCode: 1})
			assert.True(t, ok)
			assert.Equal(t, tc.want, line)
		})
	}
}
