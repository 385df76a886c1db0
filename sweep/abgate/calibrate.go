package abgate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"sweep/configs"
	"sweep/internal/inputfile"
	"sweep/internal/plural"
)

// CalibrationFile is the name of an A/A calibration in a leg's directory.
const CalibrationFile = "calibration.json"

// DefaultFalseAlarmComparisons bounds the A/A gate runs of Calibrate.
const DefaultFalseAlarmComparisons = 20

// Calibration is an A/A measurement (bfcl-ab.md §5.3): Runs identical
// runs of one arm, the per-category flip rate between them and the
// false-alarm rate of the gate on A-against-A comparisons. Compare uses
// its flip rates to say how many replicates an INCONCLUSIVE leg needs.
type Calibration struct {
	Model string `json:"model"`
	// Arm is the arm that ran against itself ("a").
	Arm string `json:"arm"`
	// Simulated says whether the runs were sweep's simulated engine and
	// bfcl (sweep ab calibrate --simulate): their flip rate is the
	// simulated case model's. nil in a file written before sweep recorded
	// it.
	Simulated *bool `json:"simulated,omitempty"`
	// Runs is the number of identical runs (roots) of the arm.
	Runs int `json:"runs"`
	// Replicates is the number of runs per side in each A/A comparison
	// (the leg's replicates per arm).
	Replicates int `json:"replicates"`
	// Tolerance is the gate's tolerated drop in points.
	Tolerance  float64         `json:"tolerance"`
	Categories []CategoryFlips `json:"categories"`
	// Overall pools every case (the primary, weighted metric).
	Overall CategoryFlips `json:"overall"`
	// FalseAlarm is nil when the data is incomplete.
	FalseAlarm *FalseAlarm `json:"false_alarm"`
	// ReplicatesFor80Power is the replicates per arm the weighted Δ needs
	// to detect a drop of Tolerance with a one-sided 5 % test and 80 %
	// power, from the measured flip rates (0 when incomplete).
	ReplicatesFor80Power int       `json:"replicates_for_80_power"`
	Roots                []string  `json:"roots"`
	Problems             []Problem `json:"problems"`

	// File is where the calibration was read from ("" when computed).
	File string `json:"-"`
}

// CategoryFlips is one category's flip rate between identical runs: the
// share of (case, pair of runs) whose verdicts differ, an unbiased
// estimate of mean 2p(1−p) over the cases.
type CategoryFlips struct {
	Category string  `json:"category"`
	Cases    int     `json:"cases"`
	FlipRate float64 `json:"flip_rate"`
	// Unstable counts the cases whose verdict is not the same in every run.
	Unstable int `json:"unstable_cases"`
}

// FalseAlarm is the gate run on A-against-A comparisons (disjoint sets of
// Replicates runs on each side), where every REGRESSION is a false alarm,
// and the rates the measured flips predict for one such comparison.
type FalseAlarm struct {
	Comparisons int `json:"comparisons"`
	Regression  int `json:"regression"`
	NotPass     int `json:"not_pass"`
	// PredictedRegression is P(U < −tolerance) and PredictedNotPass
	// P(L ≤ −tolerance) under no difference, normal approximation with
	// the measured flip rates.
	PredictedRegression float64 `json:"predicted_regression"`
	PredictedNotPass    float64 `json:"predicted_not_pass"`
}

// CalibrateOptions are the inputs of Calibrate.
type CalibrateOptions struct {
	// Roots are the arm's identical runs (at least 2).
	Roots      []string
	Model      string
	Arm        string
	Categories []Category
	// Replicates per side of each A/A comparison (0: half the roots).
	Replicates int
	// Tolerance in points (0: DefaultTolerance).
	Tolerance float64
	Read      ReadOptions
	// Comparisons bounds the A/A gate runs (0: DefaultFalseAlarmComparisons).
	Comparisons int
	Resamples   int
	Seed        uint64
	// Problems found before reading (run-failed); any leaves the
	// calibration incomplete.
	Problems []Problem
	// Simulated is recorded in the calibration (nil: not known).
	Simulated *bool
}

// Calibrate measures the flip rates and the false-alarm rate of
// identical runs. It fails only on unusable options or cancellation; a
// problem with the data is a Problem, and leaves FalseAlarm nil.
func Calibrate(ctx context.Context, o CalibrateOptions) (*Calibration, error) {
	k := len(o.Roots)
	switch {
	case k < 2:
		return nil, fmt.Errorf("calibrate: %s: an A/A calibration needs at least 2 identical runs", plural.Count(k, "root", "roots"))
	case o.Model == "":
		return nil, errors.New("calibrate: no model name")
	case len(o.Categories) == 0:
		return nil, errors.New("calibrate: no categories")
	}
	if o.Arm == "" {
		o.Arm = "a"
	}
	if o.Tolerance == 0 {
		o.Tolerance = DefaultTolerance
	}
	if o.Replicates <= 0 {
		o.Replicates = k / 2
	}
	if 2*o.Replicates > k {
		return nil, fmt.Errorf("calibrate: %d replicates per side need %d runs, have %d", o.Replicates, 2*o.Replicates, k)
	}
	if o.Comparisons <= 0 {
		o.Comparisons = DefaultFalseAlarmComparisons
	}
	if o.Resamples <= 0 {
		o.Resamples = DefaultResamples
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	cal := &Calibration{Model: o.Model, Arm: o.Arm, Simulated: o.Simulated, Runs: k, Replicates: o.Replicates, Tolerance: o.Tolerance,
		Roots: slices.Clone(o.Roots), Problems: append([]Problem{}, o.Problems...)}
	// runs[c][r][i]: case i of category c passed in run r.
	var runs [][][]bool
	for _, c := range o.Categories {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var rcs []*RootCategory
		for _, root := range o.Roots {
			rc, ps := ReadRoot(root, o.Model, o.Arm, c, o.Read)
			cal.Problems = append(cal.Problems, ps...)
			if rc != nil {
				rcs = append(rcs, rc)
			}
		}
		cf := CategoryFlips{Category: c.Name}
		if len(rcs) == k {
			same := true
			for _, rc := range rcs[1:] {
				if p, ok := caseSetProblem(o.Arm, c.Name, rcs[0], rc); !ok {
					cal.Problems = append(cal.Problems, p)
					same = false
				}
			}
			if same {
				verdicts := make([][]bool, k)
				for r, rc := range rcs {
					verdicts[r] = make([]bool, len(rcs[0].IDs))
					for i, id := range rcs[0].IDs {
						verdicts[r][i] = rc.Outcomes[id] == Pass
					}
				}
				cf.Cases = len(rcs[0].IDs)
				cf.FlipRate, cf.Unstable = flipRate(verdicts)
				runs = append(runs, verdicts)
			}
		}
		cal.Categories = append(cal.Categories, cf)
	}
	if len(cal.Problems) > 0 {
		return cal, nil
	}
	n, unstable, flips := 0, 0, 0.0
	for _, cf := range cal.Categories {
		n += cf.Cases
		unstable += cf.Unstable
		flips += float64(cf.Cases) * cf.FlipRate
	}
	cal.Overall = CategoryFlips{Category: "overall", Cases: n, Unstable: unstable}
	if n == 0 {
		return cal, nil
	}
	cal.Overall.FlipRate = flips / float64(n)
	tol := o.Tolerance / 100
	v1 := flips / float64(n) / float64(n) // one-replicate variance of the weighted Δ
	cal.ReplicatesFor80Power = replicatesForVariance(v1, tol)
	fa := &FalseAlarm{}
	if sd := math.Sqrt(v1 / float64(o.Replicates)); sd > 0 {
		fa.PredictedRegression = normalCDF(-tol/sd - z90)
		fa.PredictedNotPass = normalCDF(-tol/sd + z90)
	}
	for _, split := range aaSplits(k, o.Replicates, o.Comparisons, o.Seed) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		strata := make([]stratum, len(runs))
		for c, verdicts := range runs {
			strata[c] = make(stratum, len(verdicts[0]))
			for i := range strata[c] {
				strata[c][i] = passFraction(verdicts, split[1], i) - passFraction(verdicts, split[0], i)
			}
		}
		pooled, _ := bootstrapCI(strata, o.Resamples, o.Seed)
		fa.Comparisons++
		switch classify(100*pooled[0], 100*pooled[1], o.Tolerance) {
		case Regression:
			fa.Regression++
			fa.NotPass++
		case Inconclusive:
			fa.NotPass++
		}
	}
	cal.FalseAlarm = fa
	return cal, nil
}

// flipRate is the share of (case, pair of runs) with differing verdicts,
// Σ_i 2k_i(K−k_i) / (K(K−1)) / n for k_i passes of case i in K runs, and
// the number of cases that are not the same in every run.
func flipRate(verdicts [][]bool) (float64, int) {
	k := len(verdicts)
	if k < 2 || len(verdicts[0]) == 0 {
		return 0, 0
	}
	n := len(verdicts[0])
	sum, unstable := 0.0, 0
	for i := range n {
		pass := 0
		for r := range k {
			if verdicts[r][i] {
				pass++
			}
		}
		if pass > 0 && pass < k {
			unstable++
		}
		sum += float64(2*pass*(k-pass)) / float64(k*(k-1))
	}
	return sum / float64(n), unstable
}

func passFraction(verdicts [][]bool, runs []int, i int) float64 {
	pass := 0
	for _, r := range runs {
		if verdicts[r][i] {
			pass++
		}
	}
	return float64(pass) / float64(len(runs))
}

// aaSplits returns ordered pairs of disjoint sets of reps runs out of k
// (side A, side B): all of them when there are at most limit, else limit
// distinct ones drawn with seed.
func aaSplits(k, reps, limit int, seed uint64) [][2][]int {
	var all [][2][]int
	// Side A is every combination of the runs, side B every combination
	// of the runs left.
	var combos func(from []int, size int) [][]int
	combos = func(from []int, size int) [][]int {
		if size == 0 {
			return [][]int{{}}
		}
		var out [][]int
		for i := 0; i+size <= len(from); i++ {
			for _, rest := range combos(from[i+1:], size-1) {
				out = append(out, append([]int{from[i]}, rest...))
			}
		}
		return out
	}
	runs := make([]int, k)
	for i := range runs {
		runs[i] = i
	}
	for _, a := range combos(runs, reps) {
		var left []int
		for _, r := range runs {
			if !slices.Contains(a, r) {
				left = append(left, r)
			}
		}
		for _, b := range combos(left, reps) {
			all = append(all, [2][]int{a, b})
		}
	}
	if len(all) <= limit {
		return all
	}
	rng := rand.New(rand.NewPCG(seed, 0xa11ce))
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	return all[:limit]
}

// normalCDF is Φ(x).
func normalCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// FlipRate returns the calibration's A/A flip rate of category, and
// whether it has one.
func (c *Calibration) FlipRate(category string) (float64, bool) {
	for _, cf := range c.Categories {
		if cf.Category == category {
			return cf.FlipRate, true
		}
	}
	return 0, false
}

// Source names the calibration in notes: its file and runs.
func (c *Calibration) Source() string {
	file := c.File
	if file == "" {
		file = "A/A calibration"
	}
	return fmt.Sprintf("%s: %d identical runs of arm %s", file, c.Runs, c.Arm)
}

// CheckFor refuses c for the comparison of a leg run on real engines
// (simulated false) when c was measured on simulated ones: its flip rates
// are the simulated case model's, and would size the replicates of a
// real leg. It returns a warning (or "") when c does not say (a file
// written before sweep recorded it) or when c is real and the leg
// simulated.
func (c *Calibration) CheckFor(simulated bool) (warning string, err error) {
	name := c.File
	if name == "" {
		name = "the A/A calibration"
	}
	switch {
	case c.Simulated == nil && !simulated:
		return fmt.Sprintf("%s does not say whether it was simulated (written by an older sweep): if it was (sweep ab calibrate --simulate), its flip rates are not the model's; rerun sweep ab calibrate without --simulate", name), nil
	case c.Simulated != nil && *c.Simulated && !simulated:
		return "", fmt.Errorf("%s is a simulated A/A calibration (sweep ab calibrate --simulate): its flip rates are the simulated case model's, not the model's: calibrate the leg on its real engines (sweep ab calibrate LEG without --simulate) and give that calibration.json, or run this leg with --simulate", name)
	case c.Simulated != nil && !*c.Simulated && simulated:
		return fmt.Sprintf("%s was measured on real engines; this leg is simulated", name), nil
	}
	return "", nil
}

// WriteCalibrationJSON writes c indented with one trailing newline.
func WriteCalibrationJSON(w io.Writer, c *Calibration) error { return writeIndented(w, c) }

// WriteCalibrationTable writes c as Markdown: per category the cases, the
// flip rate and the unstable cases, the overall row, the false alarms and
// the replicates the flips call for.
func WriteCalibrationTable(w io.Writer, c *Calibration) error {
	var b strings.Builder
	b.WriteString("| category | cases | flip rate % | unstable cases |\n|---|---:|---:|---:|\n")
	for _, cf := range c.Categories {
		fmt.Fprintf(&b, "| %s | %d | %.2f | %d |\n", cf.Category, cf.Cases, 100*cf.FlipRate, cf.Unstable)
	}
	if c.FalseAlarm != nil {
		fmt.Fprintf(&b, "| **overall (pooled)** | %d | %.2f | %d |\n", c.Overall.Cases, 100*c.Overall.FlipRate, c.Overall.Unstable)
	}
	fmt.Fprintf(&b, "\nA/A: %d identical runs of arm %s; tolerance %.2f points.", c.Runs, c.Arm, c.Tolerance)
	switch {
	case c.Simulated == nil:
	case *c.Simulated:
		b.WriteString(" Simulated: yes: the flip rates are the simulated case model's, for simulated runs only.")
	default:
		b.WriteString(" Simulated: no (real engine and bfcl).")
	}
	b.WriteString("\n")
	if len(c.Problems) > 0 {
		fmt.Fprintf(&b, "\nProblems (%d):\n", len(c.Problems))
		for _, p := range c.Problems {
			fmt.Fprintf(&b, "- %s: %s, arm %s (%s): %s\n", p.Reason, p.Category, p.Arm, p.Root, p.Detail)
		}
		fmt.Fprintf(&b, "\ncalibration: INCOMPLETE: %s; no flip rate is measured from incomplete data\n", plural.Count(len(c.Problems), "problem", "problems"))
		_, err := io.WriteString(w, b.String())
		return err
	}
	fa := c.FalseAlarm
	fmt.Fprintf(&b, "\nFalse alarms: %d of %d A-against-A gate runs (%d vs %d runs) were REGRESSION, %d were not PASS; "+
		"the measured flips predict %.2f %% and %.2f %% per comparison.\n",
		fa.Regression, fa.Comparisons, c.Replicates, c.Replicates, fa.NotPass, 100*fa.PredictedRegression, 100*fa.PredictedNotPass)
	fmt.Fprintf(&b, "\ncalibration: flip rate %.2f %% over %d cases; the weighted Δ needs %s per arm to detect a %.2f-point drop with 80 %% power\n",
		100*c.Overall.FlipRate, c.Overall.Cases, plural.Count(c.ReplicatesFor80Power, "replicate", "replicates"), c.Tolerance)
	_, err := io.WriteString(w, b.String())
	return err
}

// ReadCalibration reads a calibration written by WriteCalibrationJSON and
// refuses one that cannot inform a comparison (incomplete, too few runs,
// rates out of range).
func ReadCalibration(file string) (*Calibration, error) {
	data, err := inputfile.Read(file, inputfile.SmallJSON)
	if err != nil {
		return nil, err
	}
	var c Calibration
	if err := configs.DecodeJSON(file, data, &c, "the "+CalibrationFile+" sweep ab calibrate writes"); err != nil {
		return nil, err
	}
	switch {
	case len(c.Problems) > 0:
		return nil, fmt.Errorf("%s: the A/A calibration is incomplete (%s, first: %s %s: %s): rerun sweep ab calibrate", file, plural.Count(len(c.Problems), "problem", "problems"), c.Problems[0].Reason, c.Problems[0].Category, c.Problems[0].Detail)
	case c.Runs < 2:
		return nil, fmt.Errorf("%s: runs %d: an A/A calibration needs at least 2 identical runs", file, c.Runs)
	case c.Model == "":
		return nil, fmt.Errorf("%s: no model", file)
	case len(c.Categories) == 0:
		return nil, fmt.Errorf("%s: no categories", file)
	}
	for i, cf := range c.Categories {
		if !(cf.FlipRate >= 0 && cf.FlipRate <= 1) || cf.Cases <= 0 {
			return nil, fmt.Errorf("%s: categories[%d] (%s): flip_rate %g over %d cases: want a rate in [0, 1] over at least one case", file, i, cf.Category, cf.FlipRate, cf.Cases)
		}
	}
	c.File = file
	return &c, nil
}
