package campaign_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/metrics/result"
	"sweep/sweep/campaign"
	"sweep/sweep/knee"
	"sweep/sweep/testkit/synth"
)

// TestReadCoverage replays a journal as a resumed sweep does: a point
// adaptive discovery skipped is listed; one that ran and failed before
// the skip stays failed and one run after its skip (a later invocation
// asked for it) is measured, so neither is; a full discovery's journal
// is not adaptive, and each arm's results are listed for its number.
// A point started and never ended, ended interrupted, or never reached
// (its start lists it, no record follows) is unfinished, with its arm
// and concurrency from its records or the start's arms (0 when a start
// without arms is all there is); one that ran and failed is not.
// In an adaptive discovery's journal with a format, an arm whose search
// recorded no end (search_end) since its last point start was stopped
// between two steps of its search: its points whose last run was a
// probe (ok or failed) are unfinished, those run at the full length are
// not; with the end recorded, or in a journal without a format (no such
// records), it reads as before. A probe that failed the way a
// full-length run fails too (its error rate over the limit) is one the
// search never runs again: it stays failed, not unfinished; one that
// failed a short window's way (a validation), or left no result, is
// unfinished. The format is read per segment, from each sweep_start on:
// an arm whose last point started in a segment of a binary that records
// the search's end needs that record, one last run under an older
// binary (no format), or resumed by one since (which may have ended its
// search unrecorded), does not; a resume's start without a format is
// the journal's format in a journal of format 1 (that binary gave a
// resume's start none), else an older binary's.
func TestReadCoverage(t *testing.T) {
	start := func(adaptive string) campaign.Record {
		return campaign.Record{Event: campaign.EventSweepStart, Identity: &campaign.Identity{Command: "discover",
			Settings: []campaign.Setting{{Name: "--adaptive", Value: adaptive}}}}
	}
	skip := func(arm, conc int, id string) campaign.Record {
		return campaign.Record{Event: campaign.EventPointSkip, Arm: arm, Point: id, Conc: conc, Reason: "adaptive discovery: not needed to find the knee"}
	}
	end := func(arm, conc int, id, status, res string) campaign.Record {
		return campaign.Record{Event: campaign.EventPointEnd, Arm: arm, Point: id, Conc: conc, Status: status, Result: res}
	}
	id := result.Identity{[]byte(`"glm"`)}
	id2 := result.Identity{[]byte(`"glm"`), []byte(`"h200"`)}
	planned := func(points ...string) campaign.Record {
		r := start("false")
		r.Identity.Points = points
		r.Arms = []campaign.ArmPlan{{Arm: 1, Identity: id, Points: []campaign.PointPlan{{Point: "a-c4", Conc: 4}, {Point: "a-c8", Conc: 8}, {Point: "a-c16", Conc: 16}}}}
		return r
	}
	pointStart := func(arm, conc int, id string) campaign.Record {
		return campaign.Record{Event: campaign.EventPointStart, Arm: arm, Point: id, Conc: conc}
	}
	// probe is a point's run as a probe: its start and its end.
	probe := func(arm, conc int, id, status, res string) []campaign.Record {
		r := end(arm, conc, id, status, res)
		r.Probe = true
		return []campaign.Record{{Event: campaign.EventPointStart, Arm: arm, Point: id, Conc: conc, Probe: true}, r}
	}
	searchEnd := campaign.Record{Event: campaign.EventSearchEnd, Arm: 1, Reason: "adaptive discovery: the knee search needs no more points"}
	// adaptiveRun is an adaptive discovery's journal, as a format gives
	// it (0: none, as before the search's end was recorded), every point
	// of its arm run: c4 at the full length, c8 and c16 as probes (c16
	// failed), then the records in tail.
	adaptiveRun := func(format int, tail ...campaign.Record) []campaign.Record {
		r := planned("a-c4", "a-c8", "a-c16")
		r.Identity.Settings, r.Format = []campaign.Setting{campaign.AdaptiveSetting(true)}, format
		return slices.Concat([]campaign.Record{r, pointStart(1, 4, "a-c4"), end(1, 4, "a-c4", campaign.StatusOK, "a-c4/a-c4.json")},
			probe(1, 8, "a-c8", campaign.StatusOK, "a-c8/a-c8.json"), probe(1, 16, "a-c16", campaign.StatusFailed, ""), tail)
	}
	adaptiveResults := map[int][]string{1: {"a-c4/a-c4.json", "a-c8/a-c8.json"}}
	probesUnfinished := []campaign.Record{{Point: "a-c8", Arm: 1, Conc: 8, Status: campaign.StatusOK, Probe: true},
		{Point: "a-c16", Arm: 1, Conc: 16, Status: campaign.StatusFailed, Probe: true}}
	// failedProbe is adaptiveRun with c16's probe failed with its result
	// file, what files then holds, and the results listed.
	failedProbe := func(s knee.Sample, tail ...campaign.Record) ([]campaign.Record, map[string]knee.Sample, map[int][]string) {
		recs := adaptiveRun(campaign.JournalFormat, tail...)
		i := slices.IndexFunc(recs, func(r campaign.Record) bool { return r.Event == campaign.EventPointEnd && r.Point == "a-c16" })
		recs[i].Result = "a-c16/a-c16.json"
		s.Conc, s.Probe = 16, true
		return recs, map[string]knee.Sample{"a-c16/a-c16.json": s}, map[int][]string{1: {"a-c4/a-c4.json", "a-c8/a-c8.json", "a-c16/a-c16.json"}}
	}
	errorRate, _, errorRateResults := failedProbe(knee.Sample{ErrorRate: 0.3})
	_, errorRateFile, _ := failedProbe(knee.Sample{ErrorRate: 0.3})
	invalid, invalidFile, _ := failedProbe(knee.Sample{Excluded: "marked invalid"})
	// Only its c16 probe is left to read: c8 ran again at the full length.
	onlyErrorRate := slices.Concat(errorRate, []campaign.Record{pointStart(1, 8, "a-c8"), end(1, 8, "a-c8", campaign.StatusOK, "a-c8/a-c8.json")})
	// mixed is a journal an older binary started (no format) with two
	// adaptive arms: arm 1 ran and its search ended (no record of it),
	// arm 2 ran b-c4 as a probe and was killed; this binary resumed it
	// (a start of format JournalFormat) and ran b-c8 as a probe, killed
	// again before arm 2's search ended.
	two := func(format int) campaign.Record {
		r := start("true")
		r.Format = format
		r.Identity.Points = []string{"a-c4", "a-c8", "b-c4", "b-c8"}
		r.Arms = []campaign.ArmPlan{{Arm: 1, Identity: id, Points: []campaign.PointPlan{{Point: "a-c4", Conc: 4}, {Point: "a-c8", Conc: 8}}},
			{Arm: 2, Identity: id2, Points: []campaign.PointPlan{{Point: "b-c4", Conc: 4}, {Point: "b-c8", Conc: 8}}}}
		return r
	}
	mixed := func(first int, resume campaign.Record) []campaign.Record {
		return slices.Concat([]campaign.Record{two(first), pointStart(1, 4, "a-c4"), end(1, 4, "a-c4", campaign.StatusOK, "a-c4/a-c4.json")},
			probe(1, 8, "a-c8", campaign.StatusOK, "a-c8/a-c8.json"), probe(2, 4, "b-c4", campaign.StatusOK, "b-c4/b-c4.json"),
			[]campaign.Record{resume}, probe(2, 8, "b-c8", campaign.StatusOK, "b-c8/b-c8.json"))
	}
	mixedResults := map[int][]string{1: {"a-c4/a-c4.json", "a-c8/a-c8.json"}, 2: {"b-c4/b-c4.json", "b-c8/b-c8.json"}}
	mixedArms := map[int]result.Identity{1: id, 2: id2}
	arm2Unfinished := []campaign.Record{{Point: "b-c4", Arm: 2, Conc: 4, Status: campaign.StatusOK, Probe: true},
		{Point: "b-c8", Arm: 2, Conc: 8, Status: campaign.StatusOK, Probe: true}}
	resumed := func(format int) campaign.Record {
		return campaign.Record{Event: campaign.EventSweepStart, Reason: "resume", Format: format}
	}
	for _, tc := range []struct {
		name       string
		recs       []campaign.Record
		adaptive   bool
		skipped    []string
		results    map[int][]string
		unfinished []campaign.Record
		arms       map[int]result.Identity
		// files are result files to write (by path in the directory).
		files map[string]knee.Sample
	}{
		{"full", []campaign.Record{start("false"), end(1, 4, "a-c4", campaign.StatusOK, "a-c4/a-c4.json")}, false, nil,
			map[int][]string{1: {"a-c4/a-c4.json"}}, nil, nil, nil},
		{"adaptive", []campaign.Record{start("true"), end(1, 4, "a-c4", campaign.StatusOK, "a-c4/a-c4.json"), skip(1, 8, "a-c8"),
			end(2, 4, "b-c4", campaign.StatusFailed, ""), skip(2, 4, "b-c4"), skip(2, 16, "b-c16"),
			{Event: campaign.EventPointStart, Arm: 2, Point: "b-c16", Conc: 16}, end(2, 16, "b-c16", campaign.StatusOK, "b-c16/b-c16.json")},
			true, []string{"a-c8"}, map[int][]string{1: {"a-c4/a-c4.json"}, 2: {"b-c16/b-c16.json"}}, nil, nil, nil},
		{"adaptive without its start record", []campaign.Record{skip(1, 8, "a-c8")}, true, []string{"a-c8"}, map[int][]string{}, nil, nil, nil},
		{"killed mid-point", []campaign.Record{planned("a-c4", "a-c8", "a-c16"), pointStart(1, 4, "a-c4"), end(1, 4, "a-c4", campaign.StatusFailed, ""),
			pointStart(1, 8, "a-c8")}, false, nil, map[int][]string{},
			[]campaign.Record{{Point: "a-c8", Arm: 1, Conc: 8, Status: campaign.StatusInterrupted}, {Point: "a-c16", Arm: 1, Conc: 16}},
			map[int]result.Identity{1: id}, nil},
		{"interrupted, then resumed to the end", []campaign.Record{planned("a-c4", "a-c8", "a-c16"), pointStart(1, 4, "a-c4"),
			end(1, 4, "a-c4", campaign.StatusInterrupted, ""), {Event: campaign.EventSweepStart, Reason: "resume"},
			pointStart(1, 4, "a-c4"), end(1, 4, "a-c4", campaign.StatusOK, "a-c4/a-c4.json"), end(1, 8, "a-c8", campaign.StatusOK, "a-c8/a-c8.json"),
			end(1, 16, "a-c16", campaign.StatusFailed, "")}, false, nil, map[int][]string{1: {"a-c4/a-c4.json", "a-c8/a-c8.json"}}, nil,
			map[int]result.Identity{1: id}, nil},
		{"a start without arms", []campaign.Record{{Event: campaign.EventSweepStart, Identity: &campaign.Identity{Command: "discover", Points: []string{"a-c4", "a-c8"}}},
			end(1, 4, "a-c4", campaign.StatusOK, "a-c4/a-c4.json")}, false, nil, map[int][]string{1: {"a-c4/a-c4.json"}},
			[]campaign.Record{{Point: "a-c8"}}, nil, nil},
		{"adaptive killed between two steps of its search", adaptiveRun(campaign.JournalFormat), true, nil, adaptiveResults,
			probesUnfinished, map[int]result.Identity{1: id}, nil},
		{"adaptive, its search ended", adaptiveRun(campaign.JournalFormat, searchEnd), true, nil, adaptiveResults,
			nil, map[int]result.Identity{1: id}, nil},
		{"adaptive, its search ended, then a point ran again", adaptiveRun(campaign.JournalFormat, searchEnd, pointStart(1, 16, "a-c16"),
			end(1, 16, "a-c16", campaign.StatusOK, "a-c16/a-c16.json")), true, nil, map[int][]string{1: {"a-c4/a-c4.json", "a-c8/a-c8.json", "a-c16/a-c16.json"}},
			probesUnfinished[:1], map[int]result.Identity{1: id}, nil},
		{"adaptive without a format: read as before", adaptiveRun(0), true, nil, adaptiveResults, nil, map[int]result.Identity{1: id}, nil},
		{"adaptive killed, a probe failed on its error rate", errorRate, true, nil, errorRateResults,
			probesUnfinished[:1], map[int]result.Identity{1: id}, errorRateFile},
		{"adaptive killed, its one probe left failed on its error rate", onlyErrorRate, true, nil, errorRateResults,
			nil, map[int]result.Identity{1: id}, errorRateFile},
		{"adaptive killed, a probe failed a validation", invalid, true, nil, errorRateResults,
			probesUnfinished, map[int]result.Identity{1: id}, invalidFile},
		{"started without a format, resumed by this binary, killed", mixed(0, resumed(campaign.JournalFormat)), true, nil, mixedResults,
			arm2Unfinished, mixedArms, nil},
		{"started without a format, resumed by this binary, its searches ended", slices.Concat(mixed(0, resumed(campaign.JournalFormat)),
			[]campaign.Record{{Event: campaign.EventSearchEnd, Arm: 2}}), true, nil, mixedResults, nil, mixedArms, nil},
		{"format 1, resumed by its binary (a start without a format), killed", mixed(1, resumed(0)), true, nil, mixedResults,
			slices.Concat([]campaign.Record{{Point: "a-c8", Arm: 1, Conc: 8, Status: campaign.StatusOK, Probe: true}}, arm2Unfinished), mixedArms, nil},
		{"this format, resumed by an older binary (a start without a format)", mixed(campaign.JournalFormat, resumed(0)), true, nil, mixedResults,
			nil, mixedArms, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for rel, s := range tc.files {
				writeResult(t, dir, rel, s)
			}
			j, _, err := campaign.OpenJournal(dir)
			require.NoError(t, err)
			for _, r := range tc.recs {
				require.NoError(t, j.Append(r))
			}
			require.NoError(t, j.Close())
			c, err := campaign.ReadCoverage(dir)
			require.NoError(t, err)
			assert.Equal(t, tc.adaptive, c.Adaptive)
			var skipped []string
			for _, r := range c.Skipped {
				skipped = append(skipped, r.Point)
			}
			assert.Equal(t, tc.skipped, skipped)
			assert.Equal(t, tc.results, c.Results)
			assert.Equal(t, tc.unfinished, c.Unfinished)
			if tc.arms == nil {
				tc.arms = map[int]result.Identity{}
			}
			assert.Equal(t, tc.arms, c.Arms)
		})
	}
}

// writeResult writes s as the aggregate result file rel under dir
// (synth.WriteDir), marked invalid when s.Excluded says "marked invalid".
func writeResult(t *testing.T, dir, rel string, s knee.Sample) {
	t.Helper()
	paths, err := synth.WriteDir(t.TempDir(), &knee.Arm{Samples: []knee.Sample{s}}, true)
	require.NoError(t, err)
	data, err := os.ReadFile(paths[0])
	require.NoError(t, err)
	if s.Excluded == "marked invalid" {
		obj := map[string]any{}
		require.NoError(t, json.Unmarshal(data, &obj))
		obj["valid"], obj["invalid_reasons"] = false, []string{"time coverage under 80 %"}
		data, err = json.Marshal(obj)
		require.NoError(t, err)
	}
	path := filepath.Join(dir, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, data, 0o644))
}
