package campaign_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/campaign"
)

// TestResumeRefusesAnotherPointsResult: a completed point's result file
// holding another point's result (copied over it, or edited) was accepted
// on resume ("2 of 2 complete", the knee saw c16 twice); the file must be
// the point's own: its concurrency, arm identity and recipe fingerprint.
func TestResumeRefusesAnotherPointsResult(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, s *sweepRun, path string)
		reason string
	}{
		{"another conc", func(t *testing.T, s *sweepRun, path string) {
			other := s.sched.Points[1]
			data, err := os.ReadFile(filepath.Join(s.dir, other.ID, other.ID+".json"))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, data, 0o644))
		}, "holds another point's result: conc is 16, the point's is 4"},
		{"another tp", func(t *testing.T, s *sweepRun, path string) {
			edit(t, path, "tp", 4)
		}, "holds another point's result: tp is 4, the point's is 8"},
		{"another fingerprint", func(t *testing.T, s *sweepRun, path string) {
			edit(t, path, "recipe_fingerprint", "0123abcd")
		}, `holds another point's result: recipe_fingerprint is "0123abcd", the point's is "f00d"`},
		{"no model", func(t *testing.T, s *sweepRun, path string) {
			edit(t, path, "model", nil)
		}, `holds another point's result: model is null, the point's is "m"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sched := testSchedule(t, []int{8}, 4, 16)
			for _, p := range sched.Points {
				p.Plan.Row.RecipeFingerprint = "f00d"
			}
			s := newSweep(t, sched)
			_, err := s.run(t.Context())
			require.NoError(t, err)
			p := s.sched.Points[0]
			tc.change(t, s, filepath.Join(s.dir, p.ID, p.ID+".json"))

			sum, err := s.run(t.Context())
			require.NoError(t, err)
			assert.Equal(t, 2, sum.OK)
			assert.Equal(t, 2, s.b.loadsOf(p.ID), "the point is redone")
			assert.Equal(t, 1, s.b.loadsOf(s.sched.Points[1].ID))
			redo := events(t, s.dir, campaign.EventPointRedo)
			require.Len(t, redo, 1)
			assert.Equal(t, p.ID, redo[0].Point)
			assert.Contains(t, redo[0].Reason, tc.reason)
		})
	}
}

// edit sets key of the JSON object in path to v.
func edit(t *testing.T, path, key string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	m[key] = v
	data, err = json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
}
