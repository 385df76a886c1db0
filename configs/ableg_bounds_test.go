package configs

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLoadABLegRefusesSpecialFiles: a FIFO as the leg file blocked
// LoadABLeg (os.ReadFile), ignoring SIGTERM; /dev/zero exhausted memory.
func TestLoadABLegRefusesSpecialFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "leg.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	done := make(chan error, 2)
	go func() {
		_, err := LoadABLeg(fifo)
		done <- err
		_, err = LoadABLeg("/dev/zero")
		done <- err
	}()
	for range 2 {
		select {
		case err := <-done:
			assert.ErrorContains(t, err, ", not a regular file: sweep reads only regular files")
		case <-time.After(10 * time.Second):
			if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
			t.Fatal("LoadABLeg blocked")
		}
	}
}

// TestABLegReplicatesBounded: replicates: 1e9 allocated 16 GB of run
// roots up front; a leg's replicates are bounded.
func TestABLegReplicatesBounded(t *testing.T) {
	src := []byte("model: Org/M-FC\nrunner: mi325x\ncategories: [multiple]\nreplicates: 1000000000\narms:\n  a: {name: x, config-key: k, tp: 8, conc: 16}\n  b: {name: y, config-key: k, tp: 8, conc: 16}\n")
	_, err := ParseABLeg(Source{Name: "leg.yaml", Data: src})
	assert.ErrorContains(t, err, "leg.yaml:4:13: replicates: must be at most 100 (each replicate is a full BFCL run of both arms), got 1000000000")
}
