package gha

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/internal/plural"
	"sweep/metrics/result"
)

// Grouping says how points become jobs.
type Grouping int

const (
	// PerPoint is one job per point, as InferenceX fans out.
	PerPoint Grouping = iota
	// PerArm is one job per arm: the points that differ only in
	// concurrency run in a row on one server.
	PerArm
)

// RunnerPlaceholder stands for the GitHub runner's name (runner.name) in
// result file names: the matrix is computed before a runner picks the job
// up, and InferenceX's RESULT_FILENAME ends with the runner's name.
const RunnerPlaceholder = "{runner}"

// Availability says which runner labels can take jobs.
type Availability struct {
	// Runners maps labels to their registered runner names
	// (configs/runners.yaml).
	Runners *configs.Runners
	// Online is the set of runner names GitHub reports online; nil means
	// unknown, and every label with a registered runner is taken as
	// available.
	Online map[string]bool
}

// Unavailable returns "" when label can take jobs, or the reason it cannot
// (no runner registered in runners.yaml, or none of them online).
func (a Availability) Unavailable(label string) string {
	if a.Runners == nil {
		return ""
	}
	names, ok := a.Runners.Runner(label)
	if !ok || len(names) == 0 {
		return fmt.Sprintf("runner label %q has no registered runner in runners.yaml", label)
	}
	if a.Online == nil {
		return ""
	}
	for _, n := range names {
		if a.Online[n] {
			return ""
		}
	}
	return fmt.Sprintf("no runner of label %q is online (registered: %s)", label, strings.Join(names, ", "))
}

// Point is one benchmark point of a job.
type Point struct {
	Conc int `json:"conc"`
	// ResultFilename is InferenceX's RESULT_FILENAME with
	// RunnerPlaceholder for the runner's name.
	ResultFilename string `json:"result-filename"`
	// Artifacts are the names InferenceX uploads this point's files
	// under, with the same placeholder.
	Artifacts []string `json:"artifacts"`
}

// Job is one fan-out job: one point, or the points of one arm.
type Job struct {
	// Runner is the runner label the job runs on; RunsOn is its runs-on.
	Runner string   `json:"runner"`
	RunsOn []string `json:"runs-on"`
	// ConfigKey is the master config key the row came from.
	ConfigKey string `json:"config-key,omitempty"`
	// Config is InferenceX's matrix row of the first point, as its
	// changelog processing prints it.
	Config json.RawMessage `json:"config"`
	Points []Point         `json:"points"`
	// AgentxFast runs the points at agentx-fast durations.
	AgentxFast bool `json:"agentx-fast"`
}

// Skip is a set of jobs left out because their runner cannot take them.
type Skip struct {
	Bucket string `json:"bucket"`
	Runner string `json:"runner"`
	Jobs   int    `json:"jobs"`
	Reason string `json:"reason"`
}

// JobList is one fan-out job family (a run-sweep.yml job) and its jobs.
type JobList struct {
	Name string
	Jobs []Job
}

// Fanout is the GitHub Actions matrix of one pull request.
type Fanout struct {
	Mode   Mode
	Canary *Job
	Lists  []JobList
	Skips  []Skip
}

// The fan-out job families, in run-sweep.yml's order. Every family is
// always present in the JSON (possibly empty) so a workflow can guard each
// job with its count.
var families = []string{
	"sweep-single-node-1k1k", "sweep-single-node-8k1k", "sweep-single-node-other",
	"sweep-multi-node-1k1k", "sweep-multi-node-8k1k", "sweep-multi-node-other",
	"sweep-agentic", "sweep-multi-node-agentic",
	"sweep-evals", "sweep-agentic-evals", "sweep-multi-node-evals", "sweep-multi-node-agentic-evals",
}

// Families returns the job family names in order.
func Families() []string { return slices.Clone(families) }

func familyOf(multi bool, bucket string) string {
	node := "single-node"
	if multi {
		node = "multi-node"
	}
	switch bucket {
	case "agentic":
		if multi {
			return "sweep-multi-node-agentic"
		}
		return "sweep-agentic"
	case "1k1k", "8k1k":
		return "sweep-" + node + "-" + bucket
	}
	return "sweep-" + node + "-other"
}

// Build lays out the fan-out of a processed changelog. A job whose runner
// label cannot take it is left out and reported in Skips, so a leg without
// a registered runner does not queue for days.
func Build(ch *matrix.Changelog, mode Mode, avail Availability, g Grouping) *Fanout {
	f := &Fanout{Mode: mode}
	if !mode.Sweep() {
		return f
	}
	lists := map[string][]*matrix.Row{}
	for _, b := range ch.SingleNode {
		fam := familyOf(false, b.Name)
		lists[fam] = append(lists[fam], b.Rows...)
	}
	for _, b := range ch.MultiNode {
		fam := familyOf(true, b.Name)
		lists[fam] = append(lists[fam], b.Rows...)
	}
	lists["sweep-evals"] = ch.Evals
	lists["sweep-agentic-evals"] = ch.AgenticEvals
	lists["sweep-multi-node-evals"] = ch.MultinodeEvals
	lists["sweep-multi-node-agentic-evals"] = ch.MultinodeAgenticEvals

	if mode.Canary {
		if fam, i, ok := canary(lists); ok {
			f.Canary = pointJob(lists[fam][i], mode)
			lists[fam] = slices.Delete(slices.Clone(lists[fam]), i, i+1)
		}
	}

	for _, fam := range families {
		jobs := makeJobs(lists[fam], mode, g, fam)
		var kept []Job
		skipped := map[string]*Skip{}
		var order []string
		for _, j := range jobs {
			if why := avail.Unavailable(j.Runner); why != "" {
				s := skipped[j.Runner]
				if s == nil {
					s = &Skip{Bucket: fam, Runner: j.Runner, Reason: why}
					skipped[j.Runner] = s
					order = append(order, j.Runner)
				}
				s.Jobs++
				continue
			}
			kept = append(kept, j)
		}
		for _, r := range order {
			f.Skips = append(f.Skips, *skipped[r])
		}
		f.Lists = append(f.Lists, JobList{Name: fam, Jobs: kept})
	}
	if f.Canary != nil {
		if why := avail.Unavailable(f.Canary.Runner); why != "" {
			f.Skips = append(f.Skips, Skip{Bucket: "canary", Runner: f.Canary.Runner, Jobs: 1, Reason: why})
			f.Canary = nil
		}
	}
	return f
}

// canary finds the lowest-concurrency non-eval single-node 1k1k or 8k1k
// row (the first such in matrix order), as run-sweep.yml's canary-select.
func canary(lists map[string][]*matrix.Row) (string, int, bool) {
	best, bestFam, bestIdx := 0, "", -1
	for _, fam := range []string{"sweep-single-node-1k1k", "sweep-single-node-8k1k"} {
		for i, r := range lists[fam] {
			if r.IsEval() {
				continue
			}
			if bestIdx < 0 || r.Conc < best {
				best, bestFam, bestIdx = r.Conc, fam, i
			}
		}
	}
	return bestFam, bestIdx, bestIdx >= 0
}

func makeJobs(rows []*matrix.Row, mode Mode, g Grouping, fam string) []Job {
	if g == PerPoint || strings.Contains(fam, "multi-node") || strings.Contains(fam, "evals") {
		// Multi-node rows already carry their concurrency list, and an
		// eval is one job of its own.
		jobs := make([]Job, 0, len(rows))
		for _, r := range rows {
			jobs = append(jobs, *pointJob(r, mode))
		}
		return jobs
	}
	var jobs []Job
	index := map[string]int{}
	for _, r := range rows {
		id := r.StampedFingerprint()
		if i, ok := index[id]; ok {
			jobs[i].Points = append(jobs[i].Points, point(r))
			continue
		}
		index[id] = len(jobs)
		jobs = append(jobs, *pointJob(r, mode))
	}
	for i := range jobs {
		sort.SliceStable(jobs[i].Points, func(a, b int) bool { return jobs[i].Points[a].Conc < jobs[i].Points[b].Conc })
	}
	return jobs
}

func pointJob(r *matrix.Row, mode Mode) *Job {
	raw := r.AppendChangelogJSON(nil)
	j := &Job{
		Runner:     r.Runner,
		RunsOn:     []string{"self-hosted", r.Runner},
		Config:     raw,
		Points:     []Point{point(r)},
		ConfigKey:  r.ConfigKey,
		AgentxFast: mode.AgentxFast && r.Kind.Agentic(),
	}
	return j
}

func point(r *matrix.Row) Point {
	conc := r.Conc
	if cs := r.ConcValues(); len(cs) > 0 {
		conc = cs[0] // multi-node jobs pass conc = conc-list[0]
	}
	parts := result.FilenameParts{
		ExpName: r.ExpName, Precision: r.Precision, Framework: r.Framework,
		Parallelism: r.Parallelism, Disagg: r.Disagg, SpecDecoding: r.SpecDecoding,
		Conc: conc, RunnerName: RunnerPlaceholder, RecipeFingerprint: r.RecipeFingerprint,
	}
	if r.Prefill != nil {
		// Multi-node rows name the prefill worker's layout.
		parts.Parallelism = r.Prefill.Parallelism
	}
	rf := result.ResultFilename(parts)
	var arts []string
	switch {
	case r.IsEval():
		arts = []string{"eval_" + r.ExpName + "_" + rf, "server_logs_" + rf}
	case r.Kind.Agentic():
		arts = []string{"bmk_agentic_" + rf, "agentic_" + rf, "server_logs_" + rf, "gpu_metrics_" + rf}
	default:
		arts = []string{"bmk_" + rf, "server_logs_" + rf, "gpu_metrics_" + rf, "power_audit_" + rf}
	}
	return Point{Conc: conc, ResultFilename: rf, Artifacts: arts}
}

// Jobs returns the jobs of a family (nil when it has none).
func (f *Fanout) Jobs(family string) []Job {
	for _, l := range f.Lists {
		if l.Name == family {
			return l.Jobs
		}
	}
	return nil
}

// FanoutJSON is the fan-out as MarshalJSON writes it and the workflow reads it.
type FanoutJSON struct {
	Sweep      bool             `json:"sweep"`
	Primary    string           `json:"primary"`
	TrimConc   bool             `json:"trim-conc"`
	FailFast   bool             `json:"fail-fast"`
	AgentxFast bool             `json:"agentx-fast"`
	AllEvals   bool             `json:"all-evals"`
	EvalsOnly  bool             `json:"evals-only"`
	Canary     []Job            `json:"canary"`
	Counts     map[string]int   `json:"counts"`
	Jobs       map[string][]Job `json:"jobs"`
	Skipped    []Skip           `json:"skipped"`
}

// MarshalJSON writes the fan-out as the workflow reads it: every family
// under "jobs" (an empty list when it has none) with its size under
// "counts", the canary as a list of zero or one job, and the skips.
func (f *Fanout) MarshalJSON() ([]byte, error) {
	out := FanoutJSON{
		Sweep: f.Mode.Sweep(), Primary: f.Mode.Primary, TrimConc: f.Mode.TrimConc,
		FailFast: f.Mode.FailFast, AgentxFast: f.Mode.AgentxFast,
		AllEvals: f.Mode.AllEvals, EvalsOnly: f.Mode.EvalsOnly,
		Canary: []Job{}, Counts: map[string]int{"canary": 0}, Jobs: map[string][]Job{}, Skipped: f.Skips,
	}
	if out.Skipped == nil {
		out.Skipped = []Skip{}
	}
	if f.Canary != nil {
		out.Canary = []Job{*f.Canary}
		out.Counts["canary"] = 1
	}
	for _, fam := range families {
		jobs := f.Jobs(fam)
		if jobs == nil {
			jobs = []Job{}
		}
		out.Jobs[fam] = jobs
		out.Counts[fam] = len(jobs)
	}
	return json.Marshal(out)
}

// WriteNotices writes one GitHub Actions ::notice:: line per skipped set
// of jobs, and one when the labels ask for no sweep.
func (f *Fanout) WriteNotices(w io.Writer) error {
	if !f.Mode.Sweep() {
		_, err := fmt.Fprintf(w, "::notice title=sweep::no sweep label (one of %s) on this pull request; nothing to run\n", strings.Join(primaryLabels, ", "))
		return err
	}
	for _, s := range f.Skips {
		if _, err := fmt.Fprintf(w, "::notice title=sweep: %s skipped::%s of %s skipped: %s\n", s.Runner, plural.Count(s.Jobs, "job", "jobs"), s.Bucket, s.Reason); err != nil {
			return err
		}
	}
	return nil
}

// Total returns the number of jobs, the canary included.
func (f *Fanout) Total() int {
	n := 0
	if f.Canary != nil {
		n++
	}
	for _, l := range f.Lists {
		n += len(l.Jobs)
	}
	return n
}
