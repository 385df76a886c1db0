package result

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKVPoolFromRealEngineLogs reads the KV pool from lines real engines
// wrote (testdata/enginelogs/README.md names their sources): the
// simulated engine logs its pool in these words (simengine
// TestEngineLogsItsKVPool), so both must read as a real engine's.
func TestKVPoolFromRealEngineLogs(t *testing.T) {
	for _, tc := range []struct {
		file  string
		parse func(string) (int64, bool)
		want  int64
	}{
		{"vllm-v1-engine-core.log", VLLMKVPoolFromLog, 42656},
		{"sglang-tp1.log", SGLangKVPoolFromLog, 2086558},
		// Each reader finds nothing in the other engine's log.
		{"vllm-v1-engine-core.log", SGLangKVPoolFromLog, 0},
		{"sglang-tp1.log", VLLMKVPoolFromLog, 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "enginelogs", tc.file))
			require.NoError(t, err)
			got, ok := tc.parse(string(data))
			assert.Equal(t, tc.want, got, "pool read from %s", tc.file)
			assert.Equal(t, tc.want > 0, ok, "found in %s", tc.file)
		})
	}
}
