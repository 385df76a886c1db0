package run

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs/matrix"
	"sweep/internal/simproto"
	"sweep/recipes"
)

// TestSimulatedEngineKnowsItsRunner: a simulated point's engine is told
// its row's runner label beside its GPU, so its host KV tier is checked
// against that runner's node (configs/runners.yaml), not the largest node
// of the GPU: the warning of a MiniMax MI300X point on cluster:mi300x-amds
// cited cluster:mi300x-tw.
func TestSimulatedEngineKnowsItsRunner(t *testing.T) {
	for _, tc := range []struct {
		name, runner, simGPU, wantGPU string
	}{
		{"the row's runner", "cluster:mi300x-amds", "", "mi300x"},
		{"--sim-gpu keeps the runner", "cluster:mi300x-amds", "h200", "h200"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &recipes.Point{
				ResultFilename: "p", ResultDir: t.TempDir(), Row: matrix.Row{Runner: tc.runner},
				Engine: recipes.Command{Argv: []string{"vllm", "serve", "m"}, Env: map[string]string{}},
			}
			spec, err := ServerFromPlan(p, Setup{Executable: "/bin/sweep", Simulate: true, SimGPU: tc.simGPU})
			require.NoError(t, err)
			assert.Equal(t, tc.runner, spec.Engine.Env[simproto.EnvRunner])
			assert.Equal(t, tc.wantGPU, spec.Engine.Env[simproto.EnvGPU])
		})
	}
}
