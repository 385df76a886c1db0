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

	"sweep/internal/plural"
)

// DefaultFalseAlarmComparisons bounds the A/A gate runs of Calibrate.
const DefaultFalseAlarmComparisons = 20

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
			fmt.Fprintf(&b, "- %s\n", p)
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
