package propose

import (
	"io"

	"sweep/metrics/result"
	"sweep/sweep/knee"
)

// Request names a discovery, the files a proposal edits and how it
// chooses (sweep official --propose).
type Request struct {
	// From is the directory of discovery results (named in errors).
	From string
	// Results are the verdicts on the discovery's arms as sweep knees
	// reads them (campaign.ReadKnees): an arm's knee.Result.Unfinished
	// holds the concurrencies its sweep has not finished.
	Results []*knee.Result
	// Incomplete says which points the discovery has not finished, also
	// those of arms with no result yet (campaign.Knees.Incomplete); ""
	// when it has finished.
	Incomplete string
	// AllowUnfinished proposes from a discovery that has not finished
	// (Incomplete, or an arm with Unfinished points): its finished arms
	// are proposed, its unfinished arms' conc-lists left as they are
	// (Plan). Without it such a discovery is refused (CheckFinished).
	AllowUnfinished bool
	// ConfigFiles are the master configs edited in place; Runners is
	// runners.yaml (for validation); Changelog is the perf-changelog.yaml
	// appended to.
	ConfigFiles []string
	Runners     string
	Changelog   string
	// ConfigKey is every arm's config key ("": resolved per arm from the
	// results, ResolveKey).
	ConfigKey string
	// Targets and Max are Options'.
	Targets []float64
	Max     int
	// AllowSimulated proposes from simulated results (CheckResults).
	AllowSimulated bool
	// NotPlanned names the concurrencies of an arm's official conc-list
	// (its master config's) that the discovery did not plan
	// (campaign.Plans.NotPlanned: a discovery narrowed with --conc-list);
	// such an arm is left unchanged (Options.NotPlanned). Nil: every
	// official point was planned.
	NotPlanned func(id result.Identity, official []int) []int
	// Log receives each key's arm plans as they are made (nil: none).
	Log io.Writer
}
