// Package gha turns a pull request's labels and its perf-changelog.yaml
// diff into the GitHub Actions fan-out that InferenceX's run-sweep.yml
// performs: which sweep the labels ask for, one job per point (or per arm)
// in InferenceX's buckets, the canary, the artifact names, and the legs
// that are skipped because no runner is registered for their label. The
// PR sweep (sweep.yml) runs the single-node agentic families only, which
// `sweep run` measures; the others stay in the fan-out as InferenceX lays
// them out and are reported as not run, with why.
//
// The call sequence:
//
//	mode, err := gha.ParseLabels(labels)          // exactly one primary label
//	ch, err := gen.ProcessChangelog(matrix.ChangelogOptions{Base: base, Head: head,
//		TrimConc: mode.TrimConc, AllEvals: mode.AllEvals, EvalsOnly: mode.EvalsOnly})
//	fan := gha.Build(ch, mode, gha.Availability{Runners: runners, Online: online}, gha.PerPoint)
//	err = fan.WriteNotices(os.Stderr)             // ::notice:: and ::warning:: lines
//	b, err := fan.JSON()                          // the workflow's matrix
package gha

import (
	"fmt"
	"slices"
	"strings"
)

// The labels run-sweep.yml recognises.
const (
	// Primary labels: exactly one selects the sweep.
	LabelSweep                 = "sweep-enabled"                  // trimmed: lowest conc per configuration
	LabelFullSweep             = "full-sweep-enabled"             // every point, with a canary first
	LabelNonCanaryFullSweep    = "non-canary-full-sweep-enabled"  // every point, no canary
	LabelFullSweepFailFast     = "full-sweep-fail-fast"           // every point, canary, fail-fast
	LabelFullSweepFailFastNoCa = "full-sweep-fail-fast-no-canary" // every point, fail-fast, no canary

	// Modifiers.
	LabelAllEvals   = "all-evals"
	LabelEvalsOnly  = "evals-only"
	LabelAgentxFast = "agentx-fast"
)

var primaryLabels = []string{
	LabelSweep, LabelFullSweep, LabelNonCanaryFullSweep, LabelFullSweepFailFast, LabelFullSweepFailFastNoCa,
}

// Mode is what a pull request's labels ask for. The zero Mode (no primary
// label) asks for no sweep.
type Mode struct {
	// Primary is the one primary label, "" when the PR has none.
	Primary string
	// TrimConc keeps the lowest concurrency of each configuration
	// (sweep-enabled), as process_changelog.py --trim-conc does.
	TrimConc bool
	// Canary runs one point first and removes it from the fan-out
	// (full-sweep-enabled, full-sweep-fail-fast): InferenceX's is the
	// lowest-conc single-node fixed-seq-len row; the PR sweep, which runs
	// agentic points only, takes the lowest-conc single-node agentic one
	// (canaryFamily).
	Canary bool
	// FailFast sets strategy.fail-fast on every fan-out job.
	FailFast bool
	// Modifiers.
	AllEvals, EvalsOnly, AgentxFast bool
	// Other are the PR's labels this package does not interpret, sorted.
	Other []string
}

// Sweep reports whether the labels ask for a sweep at all.
func (m Mode) Sweep() bool { return m.Primary != "" }

// LabelError is a label set run-sweep.yml refuses.
type LabelError struct {
	Labels []string // the conflicting labels
	Msg    string
}

func (e *LabelError) Error() string {
	return fmt.Sprintf("%s: %s", e.Msg, strings.Join(e.Labels, ", "))
}

// ParseLabels reads a pull request's labels. More than one primary label
// is an error, as run-sweep.yml's "PR has multiple conflicting sweep
// labels". Modifiers are passed on as they are: changelog processing
// decides what they mean together.
func ParseLabels(labels []string) (Mode, error) {
	var m Mode
	var primaries []string
	seen := map[string]bool{}
	for _, raw := range labels {
		l := strings.TrimSpace(raw)
		if l == "" || seen[l] {
			continue
		}
		seen[l] = true
		switch {
		case slices.Contains(primaryLabels, l):
			primaries = append(primaries, l)
		case l == LabelAllEvals:
			m.AllEvals = true
		case l == LabelEvalsOnly:
			m.EvalsOnly = true
		case l == LabelAgentxFast:
			m.AgentxFast = true
		default:
			m.Other = append(m.Other, l)
		}
	}
	slices.Sort(m.Other)
	if len(primaries) > 1 {
		slices.Sort(primaries)
		return Mode{}, &LabelError{Labels: primaries, Msg: "PR has multiple conflicting sweep labels (keep exactly one of " + strings.Join(primaryLabels, ", ") + ")"}
	}
	if len(primaries) == 1 {
		m.Primary = primaries[0]
	}
	switch m.Primary {
	case LabelSweep:
		m.TrimConc = true
	case LabelFullSweep:
		m.Canary = true
	case LabelFullSweepFailFast:
		m.Canary, m.FailFast = true, true
	case LabelFullSweepFailFastNoCa:
		m.FailFast = true
	}
	return m, nil
}
