package compare

import (
	"fmt"

	"sweep/metrics/result"
	"sweep/sweep/abgate"
)

// Report is the outcome of a comparison, in the documented JSON form.
type Report struct {
	Verdict   Decision     `json:"verdict"`
	Tolerance float64      `json:"tolerance_pct"`
	Metric    Metric       `json:"metric"`
	Arms      []*ArmReport `json:"arms"`
	Problems  []Problem    `json:"problems"`
	// OnlyInHead lists the arms HEAD has and BASE lacks (never problems).
	OnlyInHead []string `json:"only_in_head"`
	// Correction says at which confidence the REGRESSION claims, and so
	// the overall verdict, hold together.
	Correction Correction `json:"correction"`
}

// Correction is how the REGRESSION claims are corrected for their
// number: a sweep of 20 arms makes 20 claims of a pooled change and one
// per point, and each read at its own level would find a regression in
// one of them by noise alone ever more often as the arms grow. Each
// arm's pooled change is read at its level of Holm's step-down over the
// arms with an interval (90 % family-wise: FamilyCIPct), each point at
// its level of Holm's step-down over every judged point of those arms
// (99 % family-wise), so a comparison whose every arm and point lies
// within the tolerance reads REGRESSION with a chance of at most
// FalseRegressionPct, however many arms it has. PASS needs every arm's
// own 90 % interval clear of the tolerance: every arm must pass, so a
// false PASS has a chance of at most 5 % however many arms, with no
// correction (an intersection of one-sided tests).
type Correction struct {
	Method string `json:"method"` // "holm"
	// Arms is how many arms' pooled changes the arm family holds (those
	// with an interval); ArmConfidencePct their family-wise confidence.
	Arms             int     `json:"arms"`
	ArmConfidencePct float64 `json:"arm_confidence_pct"`
	// Points is how many points the point family holds (the judged
	// points of those arms); PointConfidencePct their family-wise
	// confidence.
	Points             int     `json:"points"`
	PointConfidencePct float64 `json:"point_confidence_pct"`
	// FalseRegressionPct bounds the chance of a REGRESSION verdict when
	// no arm or point lies beyond the tolerance: half of what each family
	// leaves out, summed (5 + 0.5).
	FalseRegressionPct float64 `json:"false_regression_pct"`
	// Rule says it in words, as the text and Markdown reports print it.
	Rule string `json:"rule"`
}

// Decision is a verdict: the A/B gate's type, so both gates speak alike.
type Decision = abgate.Decision

// The verdicts are the A/B gate's (abgate.Decision), with IMPROVEMENT
// added for an arm whose whole interval lies above +tolerance (it counts
// as PASS in the overall verdict).
const (
	Pass         = abgate.Passed
	Regression   = abgate.Regression
	Inconclusive = abgate.Inconclusive
	Incomplete   = abgate.Incomplete
	Improvement  = Decision("IMPROVEMENT")
)

// ArmReport is one arm's comparison.
type ArmReport struct {
	Arm      string          `json:"arm"` // result.Identity.Label
	Identity result.Identity `json:"identity"`
	Verdict  Decision        `json:"verdict"`
	// DeltaPct is the pooled change in percent (nil without a paired
	// point); CIPct its 90 % interval (nil without a noise estimate),
	// which decides PASS and IMPROVEMENT.
	DeltaPct *float64    `json:"delta_pct"`
	CIPct    *[2]float64 `json:"ci_pct"`
	// FamilyCIPct is the pooled change's interval at its level of Holm's
	// step-down over the arms (FamilyConfidencePct, in percent; 90 with
	// one arm): it decides REGRESSION (Correction). Nil without a noise
	// estimate.
	FamilyCIPct         *[2]float64 `json:"family_ci_pct"`
	FamilyConfidencePct float64     `json:"family_confidence_pct,omitempty"`
	// NoiseSource says where the noise came from; NoisePct is the
	// relative noise of one result (σ of log value, in percent) and
	// NoiseDF its degrees of freedom.
	NoiseSource string  `json:"noise_source"`
	NoisePct    float64 `json:"noise_pct"`
	NoiseDF     int     `json:"noise_df"`
	// Why says what decided the verdict: the pooled change's interval,
	// or the points whose own interval lies beyond the tolerance.
	Why string `json:"why,omitempty"`
	// ReplicatesNeeded, for an INCONCLUSIVE arm with a noise estimate,
	// is how many results per point and side would likely decide it.
	ReplicatesNeeded int            `json:"replicates_needed,omitempty"`
	Points           []PointReport  `json:"points"`
	Frontier         FrontierReport `json:"frontier"`
	// Differs names what differs between the sides: the image, the
	// recipe fingerprint, what a simulated engine's calibration file set
	// (sweep sim calibrate; not its name), and the engine flags recorded
	// beside the results (ports and addresses aside); empty when nothing
	// does.
	Differs []string `json:"differs"`
	// Excluded names the invalid results left out beside valid ones, and
	// the adaptive search's short probes left out beside full-length
	// results of their point.
	Excluded []Excluded `json:"excluded,omitempty"`
	// OnlyInHead lists the concurrencies only HEAD measured.
	OnlyInHead []int `json:"only_in_head,omitempty"`
	// Weighting says how the points are pooled.
	Weighting string `json:"weighting"`

	logs []float64 // per judged point: ln(head/base)
	qs   []float64 // per judged point: 1/m + 1/n
	at   []int     // per judged point: its index in Points
	reps float64   // mean results per point and side

	// With a noise estimate: the mean of logs, its standard error, the
	// noise of one result (variance of its log value) with its degrees
	// of freedom, the level its family CI leaves out and, per judged
	// point, the level its interval leaves out.
	mean, se, sigma2, df, level float64
	levels                      []float64
}

// PointReport is one paired point: each side's mean value (in the
// metric's unit: tok/s/GPU, tok/s/user, seconds or joules per output
// token; 6 significant digits), its change and how many valid results
// each side has; with a noise estimate, the change's interval and the
// point's verdict.
type PointReport struct {
	Conc     int     `json:"conc"`
	Base     float64 `json:"base"`
	Head     float64 `json:"head"`
	DeltaPct float64 `json:"delta_pct"`
	BaseN    int     `json:"base_n"`
	HeadN    int     `json:"head_n"`
	// CIPct is the change's interval at its level of Holm's step-down
	// over every judged point of the comparison (ConfidencePct, in
	// percent; 99 % family-wise: Correction), nil without a noise
	// estimate or past BASE's cliff.
	CIPct         *[2]float64 `json:"ci_pct"`
	ConfidencePct float64     `json:"confidence_pct,omitempty"`
	// Verdict reads CIPct against the tolerance as the arm's interval is
	// read ("" without a noise estimate); a point's REGRESSION makes its
	// arm's.
	Verdict Decision `json:"verdict,omitempty"`
	// NotUniform marks a point the paired scatter left out: its change
	// lies far from the arm's other points' (a change, not noise).
	NotUniform bool `json:"not_uniform,omitempty"`
	// PastBaseCliff marks a point where BASE's throughput per GPU
	// collapsed below half of its highest at a lower concurrency: the
	// engine thrashes there (a KV pool overflowed) and its results vary
	// from run to run far beyond the arm's noise, so the point is listed
	// but not judged: no interval, no verdict, left out of the pooled
	// change and of the noise.
	PastBaseCliff bool `json:"past_base_cliff,omitempty"`
}

func pastCliffConcs(ps []PointReport) []int {
	var out []int
	for _, p := range ps {
		if p.PastBaseCliff {
			out = append(out, p.Conc)
		}
	}
	return out
}

// Excluded is an invalid result left out beside valid results of its point.
type Excluded struct {
	Side   string `json:"side"`
	Conc   int    `json:"conc"`
	File   string `json:"file"`
	Reason string `json:"reason"`
}

// Problem kinds.
const (
	MissingArm        = "missing-arm"
	MissingPoint      = "missing-point"
	InvalidResult     = "invalid-result"
	SimulatedMismatch = "simulated-mismatch"
	LengthMismatch    = "length-mismatch"
	DatasetMismatch   = "dataset-mismatch"
)

// Problem is what makes a comparison INCOMPLETE.
type Problem struct {
	Kind string `json:"kind"`
	Arm  string `json:"arm"`
	Side string `json:"side,omitempty"` // "base" or "head"
	// Conc is the point's concurrency, nil for an arm-level problem.
	Conc   *int   `json:"conc"`
	Detail string `json:"detail"`
}

// String is the problem as one line: "missing-point: arm ..., conc 20:
// HEAD has no result".
func (p Problem) String() string {
	where := "arm " + p.Arm
	if p.Conc != nil {
		where += fmt.Sprintf(", conc %d", *p.Conc)
	}
	return fmt.Sprintf("%s: %s: %s", p.Kind, where, p.Detail)
}
