package abgate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"sweep/internal/plural"
)

// Decision is the verdict of a comparison.
type Decision string

// The verdicts, in the order of precedence INCOMPLETE > the others.
const (
	// Passed: the lower 90 % bound of the primary Δ is above −tolerance.
	Passed Decision = "PASS"
	// Regression: the upper 90 % bound is below −tolerance.
	Regression Decision = "REGRESSION"
	// Inconclusive: the interval contains −tolerance.
	Inconclusive Decision = "INCONCLUSIVE"
	// Incomplete: at least one Problem; no overall number is computed.
	Incomplete Decision = "INCOMPLETE"
)

// DefaultTolerance is the tolerated drop of the primary metric, in points.
const DefaultTolerance = 2.0

// DefaultResamples is the number of bootstrap resamples.
const DefaultResamples = 10000

// DefaultSeed seeds the bootstrap when Options.Seed is zero.
const DefaultSeed = 20260822

// Options are the inputs of Compare. A and B list each arm's
// BFCL_PROJECT_ROOTs (several are replicates); Model is the BFCL registry
// name (e.g. "Qwen/Qwen3.6-27B-FC"); Categories come from
// ExpandCategories.
type Options struct {
	A, B       []string
	Model      string
	Categories []Category
	// Tolerance is the tolerated drop in points (zero: DefaultTolerance).
	Tolerance float64
	Read      ReadOptions
	// Resamples and Seed drive the bootstrap (zero: the defaults).
	Resamples int
	Seed      uint64
	// Problems are found before reading (ReasonRunFailed from the leg
	// runner); any makes the verdict INCOMPLETE.
	Problems []Problem
	// Leg and Simulated are recorded in the report (sweep ab run): the
	// leg's name, and whether its arms were simulated (nil: not known).
	Leg       string
	Simulated *bool
	// Servers are what each arm's server ran (sweep ab run), recorded in
	// the report.
	Servers []ArmServer
	// Calibration, when set, supplies the A/A-measured flip rates behind
	// an INCONCLUSIVE verdict's replicate advice (otherwise the flips
	// between the arms are used). Its model must be Model.
	Calibration *Calibration
}

// Arms is a pair of values, one per arm, and their difference B − A, in
// percent and points. A nil field was not measured.
type Arms struct {
	A     *float64 `json:"a"`
	B     *float64 `json:"b"`
	Delta *float64 `json:"delta"`
}

// Primary is the gated endpoint: the weighted (all cases pooled) Δ.
type Primary struct {
	Metric string `json:"metric"` // always "weighted"
	Arms
	// CI90 is the two-sided 90 % stratified paired bootstrap interval of
	// Delta, in points; nil when not measured (INCOMPLETE).
	CI90 *[2]float64 `json:"ci90"`
	// McNemarP is the exact one-sided p-value for "B worse" on the pooled
	// discordant cases (with replicates: cases whose pass fraction differs,
	// an exact sign test).
	McNemarP *float64 `json:"mcnemar_p"`
	// Discordant counts: ABetter cases where A's pass fraction is higher,
	// BBetter where B's is.
	ABetter int `json:"-"`
	BBetter int `json:"-"`
}

// Overall are the whole-leg metrics.
type Overall struct {
	Unweighted Arms `json:"unweighted"` // mean of the category accuracies
	Weighted   Arms `json:"weighted"`   // all cases pooled
}

// CategoryResult is one category of the comparison. A nil accuracy means
// that arm has no readable data there (never a silent zero); nil Delta and
// flip counts mean the arms could not be paired case by case.
type CategoryResult struct {
	Category string `json:"category"`
	// Cases is the number of paired cases, or, when unpaired, the cases of
	// the arm that has data (0 when neither has).
	Cases int `json:"cases"`
	Arms
	// APassBFail and AFailBPass count the discordant cases (with
	// replicates: cases whose mean pass fraction is higher in A, in B).
	APassBFail *int `json:"a_pass_b_fail"`
	AFailBPass *int `json:"a_fail_b_pass"`
	// InfraErrorsA and InfraErrorsB count "Error during inference" rows
	// summed over the arm's roots; nil when a result file is unreadable.
	InfraErrorsA *int `json:"infra_errors_a"`
	InfraErrorsB *int `json:"infra_errors_b"`
	// CI90 is this category's own 90 % bootstrap interval of Delta (a
	// secondary result: not gated, not corrected for multiplicity).
	CI90 *[2]float64 `json:"-"`
	// Clean is true when the category is paired and has no Problem.
	Clean bool `json:"-"`
}

// Report is the outcome of Compare.
type Report struct {
	Verdict Decision `json:"verdict"`
	// Leg is the A/B leg that ran (sweep ab run; "" for sweep ab compare).
	Leg   string `json:"leg,omitempty"`
	Model string `json:"model"`
	// Simulated says whether the arms were sweep's simulated engines and
	// bfcl (sweep ab run --simulate); nil when not known (sweep ab
	// compare reads roots it did not make).
	Simulated *bool `json:"simulated,omitempty"`
	// Tolerance is the tolerated drop in points.
	Tolerance float64 `json:"tolerance"`
	// Roots are each arm's BFCL_PROJECT_ROOTs, as given.
	Roots ReportRoots `json:"roots"`
	// Partial is set in the INCOMPLETE report of a leg interrupted before
	// its verdict (sweep ab run): Categories are then what its complete
	// replicates alone measured (PartialRows), not the leg's result.
	Partial *Partial `json:"partial,omitempty"`
	// Servers are what each arm's server ran: image, model, served name,
	// commands and parsers (sweep ab run; absent for sweep ab compare).
	Servers []ArmServer `json:"servers,omitempty"`
	// MovedAside are what resumed runs of the leg moved aside and kept in
	// its directory, relative to it (sweep ab run: earlier reports,
	// report.md.<n>, and earlier servers' files, <arm>/server.<n>): never
	// read, never deleted by sweep.
	MovedAside []string         `json:"moved_aside,omitempty"`
	Primary    Primary          `json:"primary"`
	Overall    Overall          `json:"overall"`
	Categories []CategoryResult `json:"categories"`
	Problems   []Problem        `json:"problems"`

	// ReplicatesA and ReplicatesB are the roots per arm.
	ReplicatesA, ReplicatesB int `json:"-"`
	// Notes explain the verdict: a small drop under PASS, the
	// replicates an INCONCLUSIVE result needs.
	Notes []string `json:"-"`
}

// Partial says what the categories of an interrupted leg's INCOMPLETE
// report are over: no verdict is drawn from them.
type Partial struct {
	// Complete are each arm's complete replicates' roots, the rows' only
	// data (an arm with none: [], its columns "–").
	Complete ReportRoots `json:"complete"`
	// Incomplete names the replicates that are not complete
	// ("b/bfcl-r1"): none of their files is in the rows.
	Incomplete []string `json:"incomplete"`
}

// ReportRoots are the roots a report compared, per arm.
type ReportRoots struct {
	A []string `json:"a"`
	B []string `json:"b"`
}

// Compare reads every category of both arms and decides. It fails only on
// unusable options or cancellation: every problem with the data is a
// Problem in the report (verdict INCOMPLETE).
func Compare(ctx context.Context, o Options) (*Report, error) {
	if len(o.A) == 0 || len(o.B) == 0 {
		return nil, errors.New("compare: each arm needs at least one root")
	}
	if o.Model == "" {
		return nil, errors.New("compare: no model name")
	}
	if len(o.Categories) == 0 {
		return nil, errors.New("compare: no categories")
	}
	if o.Calibration != nil && o.Calibration.Model != o.Model {
		return nil, fmt.Errorf("compare: the A/A calibration %s is of model %q, not %q", o.Calibration.Source(), o.Calibration.Model, o.Model)
	}
	if o.Tolerance == 0 {
		o.Tolerance = DefaultTolerance
	}
	if !(o.Tolerance > 0 && o.Tolerance < 100) {
		return nil, fmt.Errorf("compare: tolerance %g: want points in (0, 100)", o.Tolerance)
	}
	if o.Resamples <= 0 {
		o.Resamples = DefaultResamples
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	rep := &Report{Leg: o.Leg, Model: o.Model, Simulated: o.Simulated, Tolerance: o.Tolerance,
		Roots:       ReportRoots{A: append([]string{}, o.A...), B: append([]string{}, o.B...)},
		ReplicatesA: len(o.A), ReplicatesB: len(o.B), Problems: append([]Problem{}, o.Problems...), Servers: slices.Clone(o.Servers)}
	strata, clean, stopped := rep.readCategories(o, func() bool { return ctx.Err() != nil })
	if stopped {
		return nil, ctx.Err()
	}
	rep.Primary.Metric = "weighted"
	if len(rep.Problems) > 0 {
		rep.Verdict = Incomplete
		return rep, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep.overall(strata, clean)
	pooled, per := bootstrapCI(strata, o.Resamples, o.Seed)
	ci := [2]float64{100 * pooled[0], 100 * pooled[1]}
	rep.Primary.CI90 = &ci
	for k, i := range clean {
		c := [2]float64{100 * per[k][0], 100 * per[k][1]}
		rep.Categories[i].CI90 = &c
	}
	p := mcnemarWorse(rep.Primary.ABetter, rep.Primary.BBetter)
	rep.Primary.McNemarP = &p
	names := make([]string, len(clean))
	for k, i := range clean {
		names[k] = rep.Categories[i].Category
	}
	rep.decide(strata, names, o.Calibration)
	return rep, nil
}

// readCategories compares every category of o (compareCategory) into
// rep's Categories and Problems, asking stop (nil: never) before each
// whether to stop there (stopped). It returns the paired differences of
// the clean categories (strata) and their indexes in rep.Categories.
func (rep *Report) readCategories(o Options, stop func() bool) (strata []stratum, clean []int, stopped bool) {
	for _, c := range o.Categories {
		if stop != nil && stop() {
			return nil, nil, true
		}
		cr, d, probs := compareCategory(o, c)
		rep.Problems = append(rep.Problems, probs...)
		if cr.Clean {
			strata = append(strata, d)
			clean = append(clean, len(rep.Categories))
		}
		rep.Categories = append(rep.Categories, cr)
	}
	return strata, clean, false
}

// PartialRows are the per-category rows of an INCOMPLETE report of a leg
// interrupted before its verdict (Report.Partial): what o's roots, the
// leg's complete replicates only, measured in each category, read as
// Compare reads them; either arm may have none (its columns "–"). The
// problems are those the roots show (a replicate's case set unlike
// another's). No overall result, interval or verdict is drawn from them.
func PartialRows(o Options) ([]CategoryResult, []Problem) {
	rep := Report{Categories: []CategoryResult{}}
	rep.readCategories(o, nil)
	return rep.Categories, rep.Problems
}

// overall fills Overall and Primary from the clean categories.
func (rep *Report) overall(strata []stratum, clean []int) {
	var sumA, sumB, sumAccA, sumAccB float64
	n := 0
	for k, i := range clean {
		cr := rep.Categories[i]
		m := float64(len(strata[k]))
		sumA += *cr.A * m
		sumB += *cr.B * m
		sumAccA += *cr.A
		sumAccB += *cr.B
		n += len(strata[k])
		rep.Primary.ABetter += *cr.APassBFail
		rep.Primary.BBetter += *cr.AFailBPass
	}
	k := float64(len(clean))
	rep.Overall.Unweighted = newArms(sumAccA/k, sumAccB/k)
	rep.Overall.Weighted = newArms(sumA/float64(n), sumB/float64(n))
	rep.Primary.Arms = rep.Overall.Weighted
}

// decide applies bfcl-ab.md §5.5 to the primary interval. names are the
// strata's categories; cal, when set, supplies the flip rates of the
// replicate advice.
func (rep *Report) decide(strata []stratum, names []string, cal *Calibration) {
	l, u := rep.Primary.CI90[0], rep.Primary.CI90[1]
	tol := rep.Tolerance
	delta := *rep.Primary.Delta
	rep.Verdict = classify(l, u, tol)
	switch rep.Verdict {
	case Passed:
		if u < 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("B is lower: the whole 90 %% CI is below 0 (upper bound %+.2f pp), within the %.2f-point tolerance (by chance alone one A/A run in twenty reads so)", u, tol))
		}
	case Inconclusive:
		reps := 2 / (1/float64(rep.ReplicatesA) + 1/float64(rep.ReplicatesB))
		need, f := replicatesFor80Power(strata, reps, tol/100)
		note := fmt.Sprintf("the 90 %% CI [%+.2f, %+.2f] contains -%.2f: the measured flip rate between the arms is %.1f %%", l, u, tol, 100*f)
		if cal != nil {
			if aaNeed, aaF, missing := replicatesFromCalibration(strata, names, cal, tol/100); missing != "" {
				note += fmt.Sprintf(" (the A/A calibration %s has no flip rate for %s, so it is not used)", cal.Source(), missing)
			} else {
				need = aaNeed
				note = fmt.Sprintf("the 90 %% CI [%+.2f, %+.2f] contains -%.2f: the A/A-measured flip rate (%s) is %.1f %% (between the arms: %.1f %%)", l, u, tol, cal.Source(), 100*aaF, 100*f)
			}
		}
		more := need - int(math.Floor(reps))
		if more > 0 {
			note += fmt.Sprintf(", which needs about %d replicates per arm (%d more) to detect a %.2f-point drop with 80 %% power", need, more, tol)
		} else {
			note += fmt.Sprintf("; %s per arm already give 80 %% power against a %.2f-point drop, and the estimate sits at the tolerance: add replicates to narrow the interval", plural.Count(int(reps), "replicate", "replicates"), tol)
		}
		rep.Notes = append(rep.Notes, note)
		if delta < -tol {
			rep.Notes = append(rep.Notes, fmt.Sprintf("possible regression: the estimate %+.2f pp is below -%.2f", delta, tol))
		}
	}
}

// classify is the rule of bfcl-ab.md §5.5 on a 90 % interval [l, u] of
// the Δ and the tolerance, all in points.
func classify(l, u, tol float64) Decision {
	switch {
	case l > -tol:
		return Passed
	case u < -tol:
		return Regression
	}
	return Inconclusive
}

func newArms(a, b float64) Arms {
	d := b - a
	return Arms{A: &a, B: &b, Delta: &d}
}

// armData is one arm's data for one category: per-case pass fractions over
// the arm's roots, in the first root's id order.
type armData struct {
	ids   []string
	frac  map[string]float64
	infra *int
}

// compareCategory reads one category of both arms. d holds the paired
// per-case differences when the category is paired.
func compareCategory(o Options, c Category) (cr CategoryResult, d stratum, probs []Problem) {
	cr.Category = c.Name
	arms := [2]*armData{}
	for k, roots := range [2][]string{o.A, o.B} {
		arm := [2]string{"a", "b"}[k]
		if len(roots) == 0 {
			continue // an arm with no complete replicate (PartialRows): not measured
		}
		var rcs []*RootCategory
		infra, infraOK := 0, true
		for _, root := range roots {
			rc, ps := ReadRoot(root, o.Model, arm, c, o.Read)
			probs = append(probs, ps...)
			if rc == nil {
				infraOK = false
				continue
			}
			infra += rc.InfraErrors
			rcs = append(rcs, rc)
		}
		if infraOK {
			v := infra
			if k == 0 {
				cr.InfraErrorsA = &v
			} else {
				cr.InfraErrorsB = &v
			}
		}
		if len(rcs) < len(roots) {
			continue
		}
		same := true
		for _, rc := range rcs[1:] {
			if p, ok := caseSetProblem(arm, c.Name, rcs[0], rc); !ok {
				probs = append(probs, p)
				same = false
			}
		}
		if same && len(rcs[0].IDs) > 0 {
			arms[k] = fractions(rcs)
		}
	}
	a, b := arms[0], arms[1]
	if a != nil {
		acc := meanPercent(a)
		cr.A, cr.Cases = &acc, len(a.ids)
	}
	if b != nil {
		acc := meanPercent(b)
		cr.B, cr.Cases = &acc, len(b.ids)
	}
	if a == nil || b == nil {
		return cr, nil, probs
	}
	if p, ok := caseSetProblem("b", c.Name, &RootCategory{Root: o.A[0], IDs: a.ids}, &RootCategory{Root: o.B[0], IDs: b.ids}); !ok {
		return cr, nil, append(probs, p)
	}
	delta := *cr.B - *cr.A
	cr.Delta = &delta
	d = make(stratum, len(a.ids))
	var aBetter, bBetter int
	for i, id := range a.ids {
		d[i] = b.frac[id] - a.frac[id]
		switch {
		case d[i] < 0:
			aBetter++
		case d[i] > 0:
			bBetter++
		}
	}
	cr.APassBFail, cr.AFailBPass = &aBetter, &bBetter
	cr.Clean = len(probs) == 0
	return cr, d, probs
}

// fractions averages the pass verdicts of one arm's roots per case.
func fractions(rcs []*RootCategory) *armData {
	ad := &armData{ids: rcs[0].IDs, frac: make(map[string]float64, len(rcs[0].IDs))}
	for _, id := range ad.ids {
		pass := 0
		for _, rc := range rcs {
			if rc.Outcomes[id] == Pass {
				pass++
			}
		}
		ad.frac[id] = float64(pass) / float64(len(rcs))
	}
	return ad
}

// meanPercent is the arm's accuracy; ad has at least one case.
func meanPercent(ad *armData) float64 {
	sum := 0.0
	for _, id := range ad.ids {
		sum += ad.frac[id]
	}
	return 100 * sum / float64(len(ad.ids))
}

// caseSetProblem reports other's ids differing from ref's.
func caseSetProblem(arm, category string, ref, other *RootCategory) (Problem, bool) {
	in := make(map[string]bool, len(ref.IDs))
	for _, id := range ref.IDs {
		in[id] = true
	}
	var extra, missing []string
	seen := make(map[string]bool, len(other.IDs))
	for _, id := range other.IDs {
		seen[id] = true
		if !in[id] {
			extra = append(extra, id)
		}
	}
	for _, id := range ref.IDs {
		if !seen[id] {
			missing = append(missing, id)
		}
	}
	if len(extra) == 0 && len(missing) == 0 {
		return Problem{}, true
	}
	detail := fmt.Sprintf("%s of %s missing, %d not in it", plural.Count(len(missing), "case", "cases"), ref.Root, len(extra))
	if len(missing) > 0 {
		detail += fmt.Sprintf("; first missing: %s", firstIDs(missing))
	}
	if len(extra) > 0 {
		detail += fmt.Sprintf("; first extra: %s", firstIDs(extra))
	}
	return Problem{Arm: arm, Root: other.Root, Category: category, Reason: ReasonCaseSetMismatch, Detail: detail}, false
}

func firstIDs(ids []string) string {
	ids = slices.Clone(ids)
	if len(ids) > 3 {
		ids = ids[:3]
	}
	return fmt.Sprint(ids)
}
