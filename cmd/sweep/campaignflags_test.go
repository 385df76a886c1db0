package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCampaignConcListOffTheGrid: discover and official name the
// --conc-list values no selected arm has, with the arms' concurrencies:
// a warning when other values run, a usage error when none does, and
// values below 1 are refused before anything is planned.
func TestCampaignConcListOffTheGrid(t *testing.T) {
	const key = "qwen3.5-fp8-mi325x-sglang-agentic-mtp"
	grid := "the concurrencies of " + key + "'s selected arms (sweep plan lists the points):\n" +
		"  tp2 ep2: 1 4 6\n  tp4: 1 8 16 32 40 48\n  tp4 ep4: 4 16 32 40 48\n  tp8: 1 4 8 12 16 24 32 40 48 64 80\n  tp8 ep8: 4 16 24 32 40 48 64\n"
	out := filepath.Join(t.TempDir(), "d")
	for _, command := range []string{"discover", "official"} {
		for _, tc := range []struct {
			name, concs string
			code        int
			stderr      string
		}{
			{name: "off the grid", concs: "1,4,3000", code: exitOK,
				stderr: "sweep " + command + ": --conc-list 3000: no selected arm has this concurrency, so it is left out and the other values run; " + grid},
			{name: "none on the grid", concs: "3", code: exitUsage,
				stderr: "sweep: --conc-list 3: no selected arm has this concurrency; pick from " + grid + "run with --help for usage\n"},
			{name: "zero and negative", concs: "1,3,0,-5", code: exitUsage,
				stderr: "sweep: --conc-list 0, -5: want concurrencies of 1 or more\nrun with --help for usage\n"},
		} {
			t.Run(command+" "+tc.name, func(t *testing.T) {
				code, _, stderr := runCLI(t, command, "--simulate", "--config-keys", key, "--conc-list", tc.concs, "--dry-run", "--out", out)
				assert.Equal(t, tc.code, code, stderr)
				assert.Equal(t, tc.stderr, stderr)
			})
		}
	}
}
