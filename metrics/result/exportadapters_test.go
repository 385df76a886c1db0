package result

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"sweep/configs"
)

// TestExportAdaptersNamedByTheEngineTable: every engine an export can be
// detected as (DetectEngine, given each engine's own prefixes) names, in
// the engine table, an adapter that exists here.
func TestExportAdaptersNamedByTheEngineTable(t *testing.T) {
	seen := map[configs.Engine]bool{}
	for _, prefix := range []string{"sglang:", "vllm:", "dynamo_", "atom:", "atom_"} {
		has := func(prefixes ...string) bool {
			for _, p := range prefixes {
				if p == prefix {
					return true
				}
			}
			return false
		}
		e := configs.DetectEngine(has, false, "")
		if e == "" {
			continue
		}
		seen[e] = true
		name := e.Facts().ExportAdapter
		_, ok := exportAdapters[name]
		assert.True(t, ok, "%s: the engine table names adapter %q, which metrics/result does not have", e, name)
	}
	assert.Len(t, seen, 4, "sglang, vllm, dynamo-vllm and atom are detected")
}
