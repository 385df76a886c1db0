package recipes_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs/matrix"
	"sweep/recipes"
	"sweep/recipes/models"
)

// TestPlanRefusesAnotherGPUsRunner: --runner-name must be a runner of the
// key's runner label or of another launcher of the same GPU (the docker
// twin); a runner of another GPU (or none at all) would route the key to
// another GPU's recipe, image and environment, so it is invalid options.
func TestPlanRefusesAnotherGPUsRunner(t *testing.T) {
	rs := rows(t, matrix.TestConfigOptions{ConfigKeys: []string{mi325xKey}, Conc: []int{16}})
	rs = slices.DeleteFunc(rs, func(r *matrix.Row) bool { return r.TP != 8 })
	require.NotEmpty(t, rs)
	tests := []struct {
		runner  string
		wantErr string // "" when the runner may run the key
	}{
		{"", ""},
		{"mi325x-amds_03", ""},
		{"mi325x-tw_4", ""}, // launch_mi325x-tw.sh: the same GPU, docker on the node
		{"b200-dgxc_01", "--runner-name b200-dgxc_01 is not a runner of " + mi325xKey + " (runner label cluster:mi325x-amds: mi325x-amds_00,"},
		{"mi355x-amds_00", "--runner-name mi355x-amds_00 is not a runner of"},
		{"nosuch", "--runner-name nosuch is not a runner of"},
		// The key's launcher, but no node runners.yaml lists for it.
		{"mi325x-amds_99", "--runner-name mi325x-amds_99 is not a runner of launch_mi325x-amds.sh in configs/runners.yaml (its runners: mi325x-amds_00, mi325x-amds_01,"},
	}
	for _, tt := range tests {
		t.Run(tt.runner, func(t *testing.T) {
			_, err := recipes.Plan(rs, recipes.PlanOptions{Catalog: models.Builtin(), RunnerName: tt.runner})
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, errors.Is(err, recipes.ErrInvalidOptions), "%v", err)
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.Contains(t, err.Error(), "e.g. --runner-name mi325x-amds_00")
		})
	}
}
