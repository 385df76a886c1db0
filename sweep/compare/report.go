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
	// point); CIPct its 90 % interval (nil without a noise estimate).
	DeltaPct *float64    `json:"delta_pct"`
	CIPct    *[2]float64 `json:"ci_pct"`
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
	// CIPct is the change's interval: 99 % simultaneously over the arm's
	// judged points (Bonferroni), nil without a noise estimate or past
	// BASE's cliff.
	CIPct *[2]float64 `json:"ci_pct"`
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
