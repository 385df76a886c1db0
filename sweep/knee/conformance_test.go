package knee

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

const conformanceDir = "../../testdata/knee"

type truthCase struct {
	ID         string   `json:"id"`
	Family     string   `json:"family"`
	Truth      Status   `json:"truth"`
	TrueKnee   *int     `json:"true_knee"`
	CFirst     int      `json:"c_first"`
	UsableGrid []int    `json:"usable_grid"`
	Modifiers  []string `json:"modifiers"`
	Sigma      float64  `json:"sigma"`
}

// scoreVerdict applies testdata/knee/README.md's scoring rule.
func scoreVerdict(truth Status, trueKnee, cFirst int, status Status, knee int) bool {
	if status == StatusUnsaturated || status == StatusInsufficient {
		knee = 0
	}
	within := func(a, b int) bool {
		return a > 0 && b > 0 && math.Abs(math.Log2(float64(a)/float64(b))) <= 1+1e-9
	}
	switch truth {
	case StatusOK:
		return within(knee, trueKnee)
	case StatusUnsaturated, StatusInsufficient:
		return status == truth
	case StatusSaturatedAtMin:
		return status == truth || within(knee, cFirst)
	}
	return false
}

func TestConformance(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(conformanceDir, "truth.json"))
	require.NoError(t, err)
	var doc struct {
		Threshold float64     `json:"threshold"`
		Cases     []truthCase `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	require.Len(t, doc.Cases, 24)
	hits := 0
	for _, tc := range doc.Cases {
		t.Run(tc.ID, func(t *testing.T) {
			arms, err := Read(t.Context(), filepath.Join(conformanceDir, "cases", tc.ID))
			require.NoError(t, err)
			require.Len(t, arms, 1, "one arm per case")
			r := Analyze(arms[0], Options{Threshold: doc.Threshold})
			tk := 0
			if tc.TrueKnee != nil {
				tk = *tc.TrueKnee
			}
			var usable []int
			for _, p := range r.Points {
				if p.Usable {
					usable = append(usable, p.Conc)
				}
			}
			require.Equal(t, tc.UsableGrid, usable, "usable grid")
			if scoreVerdict(tc.Truth, tk, tc.CFirst, r.Status, r.Knee) {
				hits++
				return
			}
			t.Errorf("%s (%s %v σ=%.3f): got %s knee c%d, want %s knee c%d; %s",
				tc.ID, tc.Family, tc.Modifiers, tc.Sigma, r.Status, r.Knee, tc.Truth, tk, r.Reason)
		})
	}
	t.Logf("conformance: %d/%d cases agree with their truth", hits, len(doc.Cases))
}
