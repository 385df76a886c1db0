package campaign_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"sweep/sweep/campaign"
)

// TestIdentityComparesMeaning: a resume refused --conc-list 16,4 for a
// sweep started with 4,16, --config-files ./cfg.yaml for one started
// with cfg.yaml, and --time-scale 100 on the virtual clock, which
// ignores it. Settings that mean the same are the same sweep; real
// differences are still refused. The recorded side is read as a journal
// holds it (no comparison rule of its own), including values older
// binaries recorded as given.
func TestIdentityComparesMeaning(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	cfg := filepath.Join(dir, "cfg.yaml")
	recorded := func(name, value string) campaign.Setting { return campaign.Setting{Name: name, Value: value} }
	for _, tc := range []struct {
		name     string
		was, now campaign.Setting
		diff     string // "": the same sweep
	}{
		{"a set in another order", campaign.IntSet("--conc-list", []int{4, 16}), campaign.IntSet("--conc-list", []int{16, 4}), ""},
		{"a set as an older binary recorded it", recorded("--conc-list", "16 4 16"), campaign.IntSet("--conc-list", []int{4, 16}), ""},
		{"another set", recorded("--conc-list", "16 4"), campaign.IntSet("--conc-list", []int{4, 24}), `--conc-list: was "16 4", now "4 24"`},
		{"no set and a set", recorded("--ep", ""), campaign.IntSet("--ep", []int{8}), `--ep: was "", now "8"`},
		{"a path and its absolute path", campaign.Paths("--config-files", []string{"cfg.yaml"}), campaign.Paths("--config-files", []string{cfg}), ""},
		{"a relative path an older binary recorded", recorded("--config-files", "cfg.yaml"), campaign.Paths("--config-files", []string{"./cfg.yaml"}), ""},
		{"an absolute path an older binary recorded", recorded("--config-files", cfg), campaign.Paths("--config-files", []string{"sub/../cfg.yaml"}), ""},
		{"another file", recorded("--config-files", "cfg.yaml"), campaign.Paths("--config-files", []string{"other.yaml"}),
			`--config-files: was "cfg.yaml", now "` + filepath.Join(dir, "other.yaml") + `"`},
		{"files in another order", recorded("--config-files", "a.yaml b.yaml"), campaign.Paths("--config-files", []string{"b.yaml", "a.yaml"}), "--config-files: was"},
		{"no files and a file", recorded("--config-files", ""), campaign.Paths("--config-files", []string{"cfg.yaml"}), `--config-files: was "", now "` + cfg + `"`},
		{"an unused setting", recorded("--time-scale", "150"), campaign.Setting{Name: "--time-scale", Value: "100"}.Unused(), ""},
		{"a used one", recorded("--time-scale", "150"), campaign.Setting{Name: "--time-scale", Value: "100"}, `--time-scale: was "150", now "100"`},
		{"a variable set", recorded("--tp", "8"), campaign.EnvSetting("SWEEP_SIM_SEED", "7"),
			`$SWEEP_SIM_SEED: was "", now "7" (the variable changes what the points measure: the directory's sweep ran with SWEEP_SIM_SEED unset, or began before sweep recorded it; unset it, or use another --out)`},
		{"a variable unset", campaign.EnvSetting("SWEEP_SIM_SEED", "7"), recorded("--tp", "8"),
			`$SWEEP_SIM_SEED: was "7", now "" (the variable changes what the points measure: the directory's sweep ran with SWEEP_SIM_SEED=7; set it so, or use another --out)`},
		{"a variable alike", campaign.EnvSetting("SWEEP_SIM_SEED", "7"), campaign.EnvSetting("SWEEP_SIM_SEED", "7"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The directory's identity as its journal gives it back: no
			// comparison rule (only the invocation's setting has one).
			tp := recorded("--tp", "8")
			was := campaign.Identity{Command: "discover", Settings: []campaign.Setting{tp, recorded(tc.was.Name, tc.was.Value)}}
			now := campaign.Identity{Command: "discover", Settings: []campaign.Setting{tp, tc.now}}
			diffs := was.Diff(&now)
			if tc.diff == "" {
				assert.Empty(t, diffs, "was %+v, now %+v", tc.was, tc.now)
				return
			}
			if assert.Len(t, diffs, 1, "was %+v, now %+v", tc.was, tc.now) {
				assert.Contains(t, diffs[0], tc.diff)
			}
		})
	}
}

// TestIdentityRecordsMeaning: the value an invocation records is the
// one its comparison reads (a set in order, each once; absolute paths),
// so a later binary needs no spelling of ours to compare it.
func TestIdentityRecordsMeaning(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	assert.Equal(t, "4 16 24", campaign.IntSet("--conc-list", []int{24, 4, 16, 4}).Value)
	assert.Empty(t, campaign.IntSet("--conc-list", nil).Value, "every concurrency, as before")
	assert.Equal(t, filepath.Join(dir, "a.yaml")+" /etc/b.yaml", campaign.Paths("--config-files", []string{"./a.yaml", "/etc//b.yaml"}).Value)
	assert.Empty(t, campaign.Paths("--config-files", nil).Value, "the built-in configs, as before")
	assert.Equal(t, "$SWEEP_SIM_SEED", campaign.EnvSetting("SWEEP_SIM_SEED", "7").Name)
}
