package campaign_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/campaign"
	"sweep/sweep/knee"
	"sweep/sweep/testkit/synth"
)

// interruptedSweep writes a discovery of two arms of the seeded key
// sweep (tp8 ep8, then tp8, each planned at c1..c128) interrupted while
// tp8 ep8 ran c32: c1..c16 ran, c32 started and never ended, and no
// point of tp8 ran. withArms false writes a journal whose start records
// no arms (an older binary's), so that a point is tied to its arm
// through the results its arm's records name.
func interruptedSweep(t *testing.T, withArms bool) string {
	t.Helper()
	dir := t.TempDir()
	cases := synth.KeySweep(11)
	tp8ep8, tp8 := cases[4].Arm, cases[3].Arm
	ran := &knee.Arm{Identity: tp8ep8.Identity}
	for _, s := range tp8ep8.Samples {
		if s.Conc <= 16 {
			ran.Samples = append(ran.Samples, s)
		}
	}
	paths, err := synth.WriteDir(dir, ran, true)
	require.NoError(t, err)
	concs := []int{1, 2, 4, 8, 16, 32, 64, 128}
	start := campaign.Record{Event: campaign.EventSweepStart, Identity: &campaign.Identity{Command: "discover"}}
	for arm, a := range []*knee.Arm{tp8ep8, tp8} {
		plan := campaign.ArmPlan{Arm: arm + 1, Identity: a.Identity}
		for _, c := range concs {
			id := fmt.Sprintf("arm%d-c%d", arm+1, c)
			plan.Points = append(plan.Points, campaign.PointPlan{Point: id, Conc: c})
			start.Identity.Points = append(start.Identity.Points, id)
		}
		if withArms {
			start.Arms = append(start.Arms, plan)
		}
	}
	recs := []campaign.Record{start}
	for i, c := range concs[:5] {
		rel, err := filepath.Rel(dir, paths[i])
		require.NoError(t, err)
		id := fmt.Sprintf("arm1-c%d", c)
		recs = append(recs, campaign.Record{Event: campaign.EventPointStart, Arm: 1, Point: id, Conc: c},
			campaign.Record{Event: campaign.EventPointEnd, Arm: 1, Point: id, Conc: c, Status: campaign.StatusOK, Result: rel})
	}
	recs = append(recs, campaign.Record{Event: campaign.EventPointStart, Arm: 1, Point: "arm1-c32", Conc: 32})
	require.NoError(t, synth.WriteJournal(dir, recs...))
	return dir
}

// TestReadKnees: a sweep's knees are read with the points its journal
// records as not finished, each on its arm (through the arms its start
// records, else through the results its arm's records name), and its
// verdict names them; Incomplete lists them per arm, an arm with no
// result among them; a directory without a journal is a finished sweep.
// An interrupted discovery's arm still gaining at its last finished
// point was advised to "extend the grid upward", and nothing said the
// sweep had stopped.
func TestReadKnees(t *testing.T) {
	const ep8 = "qwen3.5 mi325x-amds sglang fp8 mtp tp8 ep8"
	for _, tc := range []struct {
		name       string
		withArms   bool
		incomplete string
	}{
		{"arms recorded", true, "its journal says the sweep has not finished 11 of its 16 points: " + ep8 +
			" c32 (interrupted), c64 (not run), c128 (not run); qwen3.5 mi325x-amds sglang fp8 mtp tp8 c1 (not run), c2 (not run), c4 (not run)," +
			" c8 (not run), c16 (not run), c32 (not run), c64 (not run), c128 (not run); rerun its command to resume it" +
			" (the verdicts on those arms are provisional until then)"},
		// Without the arms in its start, a point not run is placed on no
		// arm and has no concurrency: only c32's records say.
		{"arms not recorded", false, "its journal says the sweep has not finished 11 points: " + ep8 + " c32 (interrupted); on no arm its journal records: " +
			"10 points (not run); rerun its command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := interruptedSweep(t, tc.withArms)
			k, err := campaign.ReadKnees(t.Context(), dir, knee.Options{})
			require.NoError(t, err)
			require.Len(t, k.Results, 1)
			r := k.Results[0]
			assert.Equal(t, ep8, r.Arm.Identity.Label())
			want := []int{32}
			if tc.withArms {
				want = []int{32, 64, 128}
			}
			assert.Equal(t, want, r.Arm.Unfinished)
			assert.Equal(t, want, r.Unfinished)
			assert.Contains(t, r.Reason, "the sweep has not finished c32")
			assert.NotContains(t, r.Reason, "extend the grid upward")
			assert.Contains(t, k.Incomplete(), tc.incomplete)
			var out bytes.Buffer
			require.NoError(t, k.WriteTable(&out))
			assert.Contains(t, out.String(), "\nincomplete: "+tc.incomplete)
		})
	}

	// The same results without a journal: a finished sweep.
	dir := interruptedSweep(t, true)
	require.NoError(t, os.Remove(filepath.Join(dir, campaign.JournalFile)))
	k, err := campaign.ReadKnees(t.Context(), dir, knee.Options{})
	require.NoError(t, err)
	require.Len(t, k.Results, 1)
	assert.Nil(t, k.Results[0].Unfinished)
	assert.Empty(t, k.Incomplete())
	assert.Contains(t, k.Results[0].Reason, "extend the grid upward")
}

// TestReadKneesNotPlanned: a discovery narrowed with --conc-list (tp8 ep8
// planned at c1..c16 of its grid c1..c128) whose arm still gains at c16
// was told to "extend the grid upward"; its journal's start records the
// grid, and the verdict says the config's grid goes beyond the
// discovery, naming the points not measured (Plans.NotPlanned, the rule
// sweep sim agreement and sweep official --propose read too). A journal
// written before the grid was recorded reads as before.
func TestReadKneesNotPlanned(t *testing.T) {
	tp8ep8 := synth.KeySweep(11)[4].Arm
	grid := []int{1, 2, 4, 8, 16, 32, 64, 128}
	for _, tc := range []struct {
		name     string
		grid     []int
		want     string
		notPlans []int
	}{
		{"grid recorded", grid, "the config's grid goes beyond this discovery: c32, c64, c128 not measured (its --conc-list left them out)", []int{32, 64, 128}},
		{"grid not recorded", nil, "extend the grid upward", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ran := &knee.Arm{Identity: tp8ep8.Identity}
			for _, s := range tp8ep8.Samples {
				if s.Conc <= 16 {
					ran.Samples = append(ran.Samples, s)
				}
			}
			paths, err := synth.WriteDir(dir, ran, true)
			require.NoError(t, err)
			start := campaign.Record{Event: campaign.EventSweepStart, Identity: &campaign.Identity{Command: "discover"}}
			plan := campaign.ArmPlan{Arm: 1, Identity: tp8ep8.Identity, Grid: tc.grid}
			recs := []campaign.Record{}
			for i, c := range grid[:5] {
				id := fmt.Sprintf("arm1-c%d", c)
				plan.Points = append(plan.Points, campaign.PointPlan{Point: id, Conc: c})
				start.Identity.Points = append(start.Identity.Points, id)
				rel, err := filepath.Rel(dir, paths[i])
				require.NoError(t, err)
				recs = append(recs, campaign.Record{Event: campaign.EventPointStart, Arm: 1, Point: id, Conc: c},
					campaign.Record{Event: campaign.EventPointEnd, Arm: 1, Point: id, Conc: c, Status: campaign.StatusOK, Result: rel})
			}
			start.Arms = []campaign.ArmPlan{plan}
			require.NoError(t, synth.WriteJournal(dir, append([]campaign.Record{start}, recs...)...))

			k, err := campaign.ReadKnees(t.Context(), dir, knee.Options{})
			require.NoError(t, err)
			require.Len(t, k.Results, 1)
			r := k.Results[0]
			require.Equal(t, knee.StatusUnsaturated, r.Status, r.Reason)
			assert.Contains(t, r.Reason, tc.want)
			assert.Equal(t, tc.notPlans, r.Arm.NotPlanned)
			assert.Empty(t, k.Incomplete(), "a point left out is not one the sweep has to finish")
			assert.Equal(t, []int{32, 40, 64, 128}, k.Plans.NotPlanned(tp8ep8.Identity, []int{1, 4, 16, 32, 40, 64, 128}), "the official points the discovery did not plan")
		})
	}
}

// TestPlansNotPlanned: the official concurrencies a discovery's journal
// does not plan for an arm; none for an arm it plans nothing for, or
// without a journal's arms.
func TestPlansNotPlanned(t *testing.T) {
	cases := synth.KeySweep(11)
	tp8ep8, tp8 := cases[4].Arm.Identity, cases[3].Arm.Identity
	p := campaign.Plans{tp8ep8.ArmKey(): {1, 4, 16}}
	assert.Equal(t, []int{32, 48}, p.NotPlanned(tp8ep8, []int{1, 4, 16, 32, 48}))
	assert.Nil(t, p.NotPlanned(tp8ep8, []int{4, 16}))
	assert.Nil(t, p.NotPlanned(tp8, []int{1, 4, 16, 32}), "an arm outside the discovery: its own rule")
	assert.Nil(t, campaign.Plans(nil).NotPlanned(tp8ep8, []int{1, 32}), "no journal's arms: every point planned")
}

// TestLeftOutOfMadeOtherwise: a point whose every result was made
// otherwise than its arm's (knee.Result.MadeOtherwise: another client or
// trace set) is no point of the arm's curve, but its results are listed
// with the arm's other left-out results, in concurrency order, marked
// made otherwise (LeftOut.OtherMeasurement, NoReading), so that sweep
// knees and a report list them apart from the failed ones.
func TestLeftOutOfMadeOtherwise(t *testing.T) {
	v := 1000.0
	arm := &knee.Arm{}
	r := &knee.Result{Arm: arm,
		Points: []knee.Point{
			{Conc: 4, Usable: true, Throughput: &v},
			{Conc: 16, Excluded: []knee.Exclusion{{File: "c16.json", Reason: "marked invalid"}}},
			{Conc: 64, Excluded: []knee.Exclusion{{File: "c64.json", Reason: "marked invalid"}}},
		},
		MadeOtherwise: []knee.Point{{Conc: 32, Excluded: []knee.Exclusion{{File: "c32.json", Reason: knee.ExcludedOtherSetup + ": client built-in, not aiperf"}}}},
	}
	var got []string
	for _, l := range campaign.LeftOutOf([]*knee.Result{r}, nil) {
		got = append(got, fmt.Sprintf("%s %s otherwise=%t no-reading=%t", l.Name(), l.Exclusion.File, l.OtherMeasurement, l.NoReading))
	}
	assert.Equal(t, []string{"c16 c16.json otherwise=false no-reading=false", "c32 c32.json otherwise=true no-reading=true",
		"c64 c64.json otherwise=false no-reading=false"}, got)
}
