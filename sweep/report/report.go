// Package report turns a directory of sweep results into pictures people
// look at: charts (SVG and PNG, drawn with gonum/plot), a Markdown summary
// for $GITHUB_STEP_SUMMARY and PR comments, and one self-contained HTML
// page with the charts inline and the tables.
//
//	rep, _ := report.Read(ctx, dir, opts) // campaign.ReadKnees, then Build
//	// or: rep, _ := report.Build(rs, opts.Metric) on verdicts at hand
//	_, _ = rep.CompareDir(ctx, headDir, opts, tolerance) // optional
//	page, _ := rep.Write(outDir)
package report

import (
	"context"
	"fmt"
	"strings"

	"sweep/internal/plural"
	"sweep/sweep/campaign"
	"sweep/sweep/compare"
	"sweep/sweep/knee"
)

// Report is a built report: the verdicts, the frontiers and the charts.
type Report struct {
	Metric    knee.Metric
	Results   []*knee.Result
	Frontiers map[knee.Axis][]*knee.Frontier
	Charts    []Chart
	// Notes name the charts that could not be drawn and why.
	Notes []string
	// Comparison, when not nil, is the verdict of sweep compare against
	// HEAD's results (AddComparison); it leads the summary and the page,
	// after the banners (Provenance, Incomplete).
	Comparison *compare.Report
	// Head are HEAD's verdicts beside a Comparison, HeadDir its
	// directory ("" when the results were handed over: AddComparison).
	Head    []*knee.Result
	HeadDir string
	// Dir is the directory of the report's results (BASE's, with a
	// comparison): Read sets it; "" when the verdicts were handed over
	// (Build).
	Dir string
	// Incomplete names the points the sweep of the report's results has
	// not finished, and HEAD's (campaign.Knees.Incomplete), one line
	// each: a banner of the summary and the page; empty when they have.
	Incomplete []string
	// Failed are the points the sweep's journal records as failed with
	// no result the knees read (campaign.Knees.Failed): the failed
	// points' table lists them beside the failed result files, and their
	// arms' throughput charts mark them as they mark those. Read sets
	// it; nil when the verdicts were handed over (Build).
	Failed []campaign.FailedPoint
	// Searched says why an adaptive discovery's search ran or skipped
	// each point (campaign.Knees.Searched): its own table. Read sets it;
	// nil for a sweep that ran every point, or handed-over verdicts.
	Searched []campaign.SearchedPoint
	// NoResult, when not "", says that no point of the sweep has a
	// result, only failed points (Failed): the banner the summary and the
	// page lead with. Read sets it.
	NoResult string
	groups   []group
}

// Empty says the report has nothing to show: no result, and no point its
// sweep's journal ends failed (Failed), as campaign.Knees.Empty says of
// its directory. A sweep whose every point failed before it wrote a
// result is no empty report: it lists them.
func (rep *Report) Empty() bool {
	return (&campaign.Knees{Results: rep.Results, Failed: rep.Failed}).Empty()
}

type group struct {
	label   string
	results []*knee.Result
}

// Build draws every chart for rs: per config key, throughput/GPU vs
// interactivity at P90 E2E-normalised and at median (frontier and knees
// marked), TTFT and ITL percentiles vs concurrency and measured vs golden
// acceptance length (when measured); per arm, throughput vs concurrency
// with the fit and the knee. A value a chart cannot draw is left out and
// named in the chart's Note; a chart that cannot be drawn at all is left
// out and named in Notes. Build returns no error for any finite or
// infinite input.
func Build(rs []*knee.Result, metric knee.Metric) (*Report, error) {
	return build(rs, metric, nil)
}

// build is Build with the failed points of the sweep of rs (Failed),
// which each arm's throughput chart marks where they failed.
func build(rs []*knee.Result, metric knee.Metric, failed []campaign.FailedPoint) (*Report, error) {
	rep := &Report{Metric: metric, Results: rs, Frontiers: map[knee.Axis][]*knee.Frontier{}, Failed: failed}
	for _, ax := range []knee.Axis{knee.AxisE2ENormP90, knee.AxisMedian} {
		rep.Frontiers[ax] = knee.Frontiers(rs, ax)
	}
	idx := map[string]int{}
	for _, r := range rs {
		l := r.Arm.Identity.GroupLabel()
		i, ok := idx[l]
		if !ok {
			i = len(rep.groups)
			idx[l] = i
			rep.groups = append(rep.groups, group{label: l})
		}
		rep.groups[i].results = append(rep.groups[i].results, r)
	}
	for _, f := range rep.figures() {
		c, err := f.render()
		if err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%v: not drawn", err))
			continue
		}
		rep.Charts = append(rep.Charts, c)
	}
	return rep, nil
}

// Read builds the report of the results under dir as sweep knees reads
// them (campaign.ReadKnees with o: the verdicts, and the points their
// sweep has not finished, named in Incomplete). No result under dir is
// no error: the report then has no Results (Empty, unless its sweep's
// journal ends points failed: NoResult).
func Read(ctx context.Context, dir string, o knee.Options) (*Report, error) {
	k, err := campaign.ReadKnees(ctx, dir, o)
	if err != nil {
		return nil, err
	}
	return fromKnees(k, dir, o.Metric)
}

// fromKnees builds the report of k, the verdicts on the results under
// dir, on metric ("" is knee.MetricTotal).
func fromKnees(k *campaign.Knees, dir string, metric knee.Metric) (*Report, error) {
	if metric == "" {
		metric = knee.MetricTotal
	}
	rep, err := build(k.Results, metric, k.Failed)
	if err != nil {
		return nil, err
	}
	rep.Dir, rep.Searched = dir, k.Searched
	if len(k.Results) == 0 && len(k.Failed) > 0 {
		rep.NoResult = fmt.Sprintf("No point has a result: %s failed before writing one; the failed points' table says why.",
			plural.Count(len(k.Failed), "point", "points"))
	}
	if s := k.Incomplete(); s != "" {
		rep.Incomplete = append(rep.Incomplete, "Incomplete: "+s+".")
	}
	return rep, nil
}

// figures are the charts of rep's groups, in the report's order: per
// group the Pareto charts, each arm's throughput, TTFT and ITL, and
// acceptance length and energy where measured.
func (rep *Report) figures() []*figure {
	var out []*figure
	add := func(f *figure) {
		if f != nil {
			out = append(out, f)
		}
	}
	for gi, g := range rep.groups {
		for _, ax := range []knee.Axis{knee.AxisE2ENormP90, knee.AxisMedian} {
			for _, f := range rep.Frontiers[ax] {
				if f.Group == g.label && len(f.Points) > 0 {
					add(paretoChart(fmt.Sprintf("g%d-pareto-%s", gi+1, axisFile(ax)), f, rep.Metric))
				}
			}
		}
		for ai, r := range g.results {
			if hasThroughput(r) {
				add(kneeChart(fmt.Sprintf("g%d-arm%d-throughput", gi+1, ai+1), r, rep.failedConcs(r), rep.Metric))
			}
		}
		for _, what := range []string{"TTFT", "ITL"} {
			add(latencyChart(fmt.Sprintf("g%d-%s", gi+1, strings.ToLower(what)), g.label, what, g.results))
		}
		add(alChart(fmt.Sprintf("g%d-acceptance-length", gi+1), g.label, g.results))
		add(energyChart(fmt.Sprintf("g%d-energy", gi+1), g.label, g.results, rep.Metric))
	}
	return out
}

// failedConcs are the concurrencies of r's arm that rep's sweep's
// journal ends failed with no result the knees read (Failed), in its
// order; those it does not place on an arm or at a concurrency are left
// out.
func (rep *Report) failedConcs(r *knee.Result) []int {
	var out []int
	label := r.Arm.Identity.Label()
	for _, f := range rep.Failed {
		if f.Arm == label && f.Conc > 0 {
			out = append(out, f.Conc)
		}
	}
	return out
}

func hasThroughput(r *knee.Result) bool {
	for _, p := range r.Points {
		if p.Usable {
			return true
		}
	}
	return false
}

func axisFile(a knee.Axis) string {
	if a == knee.AxisMedian {
		return "median"
	}
	return "p90"
}

// Provenance says which arms' results came from sweep's simulated engine
// rather than hardware, what a calibration file set for them (sweep sim
// calibrate; knee.Sample.SimCalibration), and which points' readings are
// an adaptive discovery's short probes: nil when every result is a
// full-length hardware measurement. With a comparison it says so of
// BASE's and of HEAD's arms apart, each side named with its directory.
// The summary and the page lead with it (with Incomplete, before a
// comparison), so that simulated curves are never read as measured ones.
func (rep *Report) Provenance() []string {
	if rep.Comparison == nil {
		return provenanceOf(rep.Results, "")
	}
	return append(provenanceOf(rep.Results, sideName("BASE", rep.Dir)), provenanceOf(rep.Head, sideName("HEAD", rep.HeadDir))...)
}

// sideName names a side of a comparison: "HEAD (runs/pr-123)", or
// "HEAD" when its directory is not known.
func sideName(side, dir string) string {
	if dir == "" {
		return side
	}
	return fmt.Sprintf("%s (%s)", side, dir)
}

// provenanceOf is Provenance of the arms rs, of side ("": the report's
// only side).
func provenanceOf(rs []*knee.Result, side string) []string {
	var sim, calibrated, probed []string
	for _, r := range rs {
		var probes []string
		for _, p := range r.Points {
			if p.Probe {
				probes = append(probes, fmt.Sprintf("c%d", p.Conc))
			}
		}
		if len(probes) > 0 {
			probed = append(probed, fmt.Sprintf("%s: %s", r.Arm.Identity.Label(), strings.Join(probes, " ")))
		}
		a := r.Arm
		if !a.Simulated {
			continue
		}
		label := a.Identity.Label()
		sim = append(sim, label)
		if settings := a.Values(func(s *knee.Sample) string { return s.SimCalibration }); len(settings) > 0 {
			calibrated = append(calibrated, fmt.Sprintf("%s (%s)", label, strings.Join(settings, "; ")))
		}
	}
	of, in := "", ""
	if side != "" {
		of, in = " of "+side, " in "+side
	}
	var out []string
	switch {
	case len(sim) == len(rs) && len(sim) > 0:
		out = append(out, fmt.Sprintf("Simulated: every arm%s ran on sweep's simulated engine (--simulate), not on hardware; its numbers rehearse a sweep, they are not measurements.", of))
	case len(sim) > 0:
		out = append(out, fmt.Sprintf("Simulated: %d of %s%s ran on sweep's simulated engine (--simulate), not on hardware: %s.", len(sim), plural.Count(len(rs), "arm", "arms"), of, strings.Join(sim, "; ")))
	}
	if len(calibrated) > 0 {
		out = append(out, "Calibrated (sweep sim calibrate, --sim-calibration)"+in+": "+strings.Join(calibrated, "; ")+".")
	}
	if len(probed) > 0 {
		out = append(out, "Probes"+in+" (an adaptive discovery's short runs, read against the arm's full-length points; marked \"(probe)\" in the tables): "+strings.Join(probed, "; ")+".")
	}
	return out
}
