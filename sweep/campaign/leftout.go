package campaign

import (
	"fmt"
	"slices"

	"sweep/sweep/knee"
)

// LeftOut is a point the knees leave out, as sweep knees and a report
// list it: a result file knee.Analyze excluded (Exclusion, on Result's
// Point, or on a point of Result.MadeOtherwise: results made otherwise
// than their arm's), or a point its sweep's journal ends failed with no
// result the knees read (Failed). Both list the failed ones ("excluded
// points", "Failed points") apart from the superseded probes and the
// results made otherwise, which did not fail.
type LeftOut struct {
	// Arm is the label of the point's arm; "" for a failed point the
	// journal places on no arm.
	Arm string
	// Result is the verdict on the excluded file's arm; nil for Failed.
	Result *knee.Result
	// Point is the point of Result the file was read for.
	Point *knee.Point
	// Exclusion is the excluded file and why; nil for Failed.
	Exclusion *knee.Exclusion
	// Probe says Exclusion is an adaptive search's short probe
	// (knee.Sample.Probe).
	Probe bool
	// Superseded says Exclusion is a probe its full-length run
	// superseded (knee.Sample.Superseded): no failure.
	Superseded bool
	// OtherMeasurement says Exclusion is a result made otherwise than
	// its arm's reading (knee.Sample.OtherMeasurement: another client,
	// trace set, aiperf version, image or benchmark duration; every
	// result of a point of Result.MadeOtherwise): not one measurement
	// with the arm's, no failure.
	OtherMeasurement bool
	// NoReading says Point is one of Result.MadeOtherwise: its
	// concurrency has no reading on the arm's curve.
	NoReading bool
	// Failed is the journal's failed point; nil for an Exclusion.
	Failed *FailedPoint
}

// LeftOutOf lists the points the knees rs leave out, with failed (the
// journal's failed points with no result they read, Knees.Failed): per
// arm of rs, by concurrency, each failed point before the excluded files
// of its concurrency's point and after those below it; then the failed
// points on no arm of rs, in the journal's order.
func LeftOutOf(rs []*knee.Result, failed []FailedPoint) []LeftOut {
	byArm := map[string][]LeftOut{}
	var others, out []LeftOut
	for i := range failed {
		f := &failed[i]
		l := LeftOut{Arm: f.Arm, Failed: f}
		if slices.ContainsFunc(rs, func(r *knee.Result) bool { return r.Arm.Identity.Label() == f.Arm }) {
			byArm[f.Arm] = append(byArm[f.Arm], l)
		} else {
			others = append(others, l)
		}
	}
	for _, r := range rs {
		label := r.Arm.Identity.Label()
		samples := map[string]*knee.Sample{}
		for i := range r.Arm.Samples {
			samples[r.Arm.Samples[i].File] = &r.Arm.Samples[i]
		}
		journal := byArm[label]
		slices.SortStableFunc(journal, func(a, b LeftOut) int { return a.Failed.Conc - b.Failed.Conc })
		points := make([]*knee.Point, 0, len(r.Points)+len(r.MadeOtherwise))
		noReading := map[*knee.Point]bool{}
		for k, ps := range [][]knee.Point{r.Points, r.MadeOtherwise} {
			for i := range ps {
				points = append(points, &ps[i])
				noReading[&ps[i]] = k == 1
			}
		}
		slices.SortStableFunc(points, func(a, b *knee.Point) int { return a.Conc - b.Conc })
		for _, p := range points {
			for len(journal) > 0 && journal[0].Failed.Conc < p.Conc {
				out, journal = append(out, journal[0]), journal[1:]
			}
			for j := range p.Excluded {
				e := &p.Excluded[j]
				l := LeftOut{Arm: label, Result: r, Point: p, Exclusion: e, NoReading: noReading[p], OtherMeasurement: noReading[p]}
				if s := samples[e.File]; s != nil {
					l.Probe, l.Superseded = s.Probe, s.Superseded
					l.OtherMeasurement = l.OtherMeasurement || s.OtherMeasurement
				}
				out = append(out, l)
			}
		}
		out = append(out, journal...)
	}
	return append(out, others...)
}

// Name names the left-out point l where sweep knees and a report list
// it: "c16"; "c16 (probe)" for a probe that failed; "c16 (probe,
// superseded)" for a probe its full-length run superseded (no failure,
// listed apart from the failed points); a failed point's Name otherwise.
func (l LeftOut) Name() string {
	switch {
	case l.Failed != nil:
		return l.Failed.Name()
	case l.Superseded:
		return fmt.Sprintf("c%d (probe, superseded)", l.Point.Conc)
	case l.Probe:
		return fmt.Sprintf("c%d (probe)", l.Point.Conc)
	}
	return fmt.Sprintf("c%d", l.Point.Conc)
}

// FailedPoint is a failed point of a sweep with no result the knees read.
type FailedPoint struct {
	// Arm is the label of the point's arm (result.Identity.Label); ""
	// when the journal places the point on no arm.
	Arm string
	// Point is the point's ID: its directory under the sweep's.
	Point string
	// Conc is the point's concurrency; 0 when the journal does not say.
	Conc int
	// Error is why its last attempt failed, as the journal records it.
	Error string
	// Result is the result file its last attempt's end names (under the
	// sweep directory, as knee.Sample.File is), there but not read by the
	// knees; "" when it wrote none, or the file is gone.
	Result string
	// Attempts counts its attempts that ended.
	Attempts int
	// Probe is true when its last attempt was an adaptive search's probe.
	Probe bool
}

// Name names the failed point f in a list: "c16", "c16 (probe)", or its
// ID when the journal does not say its concurrency.
func (f *FailedPoint) Name() string {
	switch {
	case f.Conc == 0:
		return f.Point
	case f.Probe:
		return fmt.Sprintf("c%d (probe)", f.Conc)
	}
	return fmt.Sprintf("c%d", f.Conc)
}

// Why is why the failed point f failed, as its journal records it, with
// the number of its attempts when more than one.
func (f *FailedPoint) Why() string {
	if f.Attempts > 1 {
		return fmt.Sprintf("%s (%d attempts)", f.Error, f.Attempts)
	}
	return f.Error
}

// ArmLabel is the label of the failed point f's arm, or "(no arm in the
// journal)" when the journal places it on none.
func (f *FailedPoint) ArmLabel() string {
	if f.Arm == "" {
		return "(no arm in the journal)"
	}
	return f.Arm
}
