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
	"sweep/internal/filename"
	"sweep/internal/plural"
	"sweep/metrics/result"
	"sweep/recipes"
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

// Filename is the point's RESULT_FILENAME on runner (RunnerPlaceholder
// replaced). It names the point's directory and result file under the
// job's output directory, so a name that is not a single file name (an
// edited job file, a runner name with a slash) is an error.
func (p Point) Filename(runner string) (string, error) {
	rf := strings.ReplaceAll(p.ResultFilename, RunnerPlaceholder, runner)
	return rf, filename.Check("result-filename", rf)
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
	// model is the row's model, checked against recipes.CheckRemoteCode.
	model string
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

// NotRun is a job family whose jobs the PR sweep does not run: sweep.yml
// has no job for it. Its jobs stay in the fan-out (as InferenceX lays
// them out) and are reported, never silently dropped.
type NotRun struct {
	Family string `json:"family"`
	Jobs   int    `json:"jobs"`
	// ConfigKeys are the config keys of its jobs, sorted: what to run
	// elsewhere.
	ConfigKeys []string `json:"config-keys"`
	Reason     string   `json:"reason"`
}

// Fanout is the GitHub Actions matrix of one pull request.
type Fanout struct {
	Mode   Mode
	Canary *Job
	Lists  []JobList
	Skips  []Skip
	NotRun []NotRun
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

// workflowFamilies are the families sweep.yml has a job for (besides the
// canary): the single-node agentic ones, whose points `sweep run`
// measures (`sweep ci run-job` runs it on one self-hosted runner). The
// fixed-seq-len families (single-node 1k1k, 8k1k, other and their evals)
// and the multi-node ones are not run (notRunReason).
// TestWorkflowRunsItsFamilies keeps the two in step.
var workflowFamilies = []string{"sweep-agentic", "sweep-agentic-evals"}

// canaryFamily is the family the canary is taken from: InferenceX's
// canary is the lowest-concurrency single-node fixed-seq-len row, which
// the PR sweep does not run, so here it is the lowest-concurrency
// single-node agentic point, run before every job of workflowFamilies so
// that a broken image or recipe fails once, early.
const canaryFamily = "sweep-agentic"

// WorkflowFamilies returns the families the PR sweep runs, in order.
func WorkflowFamilies() []string { return slices.Clone(workflowFamilies) }

// notRunReason says why the PR sweep leaves a family out.
func notRunReason(family string) string {
	switch {
	case strings.Contains(family, "multi-node"):
		return "multi-node points do not run in the PR sweep (sweep.yml has no job for " + family +
			": `sweep ci run-job` runs one node); run them with InferenceX's multi-node workflow"
	case family == "sweep-evals":
		return "fixed-seq-len eval points do not run in the PR sweep: `sweep run --eval` runs agentic evals only; run them with InferenceX's own workflow"
	case !strings.Contains(family, "agentic"):
		return "fixed-seq-len points do not run in the PR sweep: `sweep run` measures agentic points only; run them with InferenceX's own workflow"
	}
	return "sweep.yml has no job for " + family
}

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
// a registered runner does not queue for days; so is a job whose model's
// organisation is not in recipes.RemoteCodeOrgs (its recipe would run the
// model repository's code on a self-hosted runner).
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
		if i, ok := canary(lists[canaryFamily], mode, avail); ok {
			f.Canary = pointJob(lists[canaryFamily][i], mode)
			lists[canaryFamily] = slices.Delete(slices.Clone(lists[canaryFamily]), i, i+1)
		}
	}

	for _, fam := range families {
		jobs := makeJobs(lists[fam], mode, g, fam)
		var kept []Job
		skipped := map[string]*Skip{}
		var order []string
		for _, j := range jobs {
			if why := jobUnrunnable(j, avail); why != "" {
				k := j.Runner + "\x00" + why
				s := skipped[k]
				if s == nil {
					s = &Skip{Bucket: fam, Runner: j.Runner, Reason: why}
					skipped[k] = s
					order = append(order, k)
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
		if len(kept) > 0 && !slices.Contains(workflowFamilies, fam) {
			f.NotRun = append(f.NotRun, NotRun{Family: fam, Jobs: len(kept), ConfigKeys: configKeys(kept), Reason: notRunReason(fam)})
		}
	}
	return f
}

// configKeys returns the distinct config keys of jobs, sorted.
func configKeys(jobs []Job) []string {
	keys := make([]string, 0, len(jobs))
	for _, j := range jobs {
		keys = append(keys, j.ConfigKey)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// jobUnrunnable returns why the PR sweep cannot run j ("" : it can): its
// runner label cannot take it, or its model comes from an organisation
// whose repository code the PR sweep does not run.
func jobUnrunnable(j Job, avail Availability) string {
	if why := avail.Unavailable(j.Runner); why != "" {
		return why
	}
	if err := recipes.CheckRemoteCode(j.model); err != nil {
		return err.Error()
	}
	return ""
}

// canary finds the canary among rows (canaryFamily's): the
// lowest-concurrency non-eval row whose job can run (the first such in
// matrix order), as run-sweep.yml's canary-select picks InferenceX's among
// the fixed-seq-len rows. A row whose runner cannot take it is left for
// its family, which reports it skipped.
func canary(rows []*matrix.Row, mode Mode, avail Availability) (int, bool) {
	best := -1
	for i, r := range rows {
		if r.IsEval() || (best >= 0 && r.Conc >= rows[best].Conc) {
			continue
		}
		if jobUnrunnable(*pointJob(r, mode), avail) == "" {
			best = i
		}
	}
	return best, best >= 0
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
		model:      r.Model,
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
		arts = []string{agenticResultArtifact + rf, "agentic_" + rf, "server_logs_" + rf, "gpu_metrics_" + rf}
	default:
		arts = []string{resultArtifact + rf, "server_logs_" + rf, "gpu_metrics_" + rf, "power_audit_" + rf}
	}
	return Point{Conc: conc, ResultFilename: rf, Artifacts: arts}
}

// The prefixes of the artifact InferenceX uploads a point's result file
// under, before its RESULT_FILENAME: bmk_agentic_ for an agentic point,
// bmk_ for a fixed-seq-len one (1k1k, 8k1k, ...). An eval-only point
// uploads no result file.
const (
	resultArtifact        = "bmk_"
	agenticResultArtifact = resultArtifact + "agentic_"
)

// writesResult reports whether p writes a result file: it has a result
// artifact (resultArtifact, agenticResultArtifact included).
func (p Point) writesResult() bool {
	return slices.ContainsFunc(p.Artifacts, func(a string) bool { return strings.HasPrefix(a, resultArtifact) })
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
	// NotRun lists the families with jobs that sweep.yml does not run;
	// their jobs are under Jobs and counted in Counts, but not in Runs.
	NotRun []NotRun `json:"not-run"`
}

// Runs is the number of jobs the workflow runs: the canary and the jobs
// of WorkflowFamilies.
func (f *FanoutJSON) Runs() int {
	n := f.Counts["canary"]
	for _, fam := range workflowFamilies {
		n += f.Counts[fam]
	}
	return n
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
	out.NotRun = f.NotRun
	if out.NotRun == nil {
		out.NotRun = []NotRun{}
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
	for _, n := range f.NotRun {
		if _, err := fmt.Fprintf(w, "::warning title=sweep: %s not run::%s of %s not run (%s): %s\n", n.Family, plural.Count(n.Jobs, "job", "jobs"), n.Family, strings.Join(n.ConfigKeys, ", "), n.Reason); err != nil {
			return err
		}
	}
	return nil
}

// GitHub Actions' limits on a fan-out: the jobs one matrix generates, and
// the size of one job output (the setup job hands the whole fan-out JSON
// to the others as one output).
const (
	MaxMatrixJobs  = 256
	MaxOutputBytes = 1 << 20
)

// JSON is the fan-out as the workflow reads it (one line), refused when
// it exceeds GitHub's limits (CheckLimits).
func (f *Fanout) JSON() ([]byte, error) {
	b, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	b = append(b, '\n')
	if err := f.CheckLimits(len(b)); err != nil {
		return nil, err
	}
	return b, nil
}

// CheckLimits returns an error naming every limit the fan-out exceeds,
// whose JSON is size bytes: a family sweep.yml runs with more than
// MaxMatrixJobs jobs, or JSON longer than MaxOutputBytes. GitHub would
// reject such a workflow run (or cut its output), so the fan-out is
// refused rather than printed.
func (f *Fanout) CheckLimits(size int) error {
	var over []string
	for _, l := range f.Lists {
		if slices.Contains(workflowFamilies, l.Name) && len(l.Jobs) > MaxMatrixJobs {
			over = append(over, fmt.Sprintf("family %s has %d jobs; GitHub runs at most %d jobs of one matrix", l.Name, len(l.Jobs), MaxMatrixJobs))
		}
	}
	if size > MaxOutputBytes {
		over = append(over, fmt.Sprintf("the fan-out JSON is %d bytes; a job output holds at most 1 MB (%d bytes)", size, MaxOutputBytes))
	}
	if len(over) == 0 {
		return nil
	}
	return fmt.Errorf("the fan-out is too large for GitHub Actions:\n  %s\nsplit the changelog entry into several (fewer config keys each, run one pull request at a time), "+
		"or for agentic families use one job per arm (sweep ci matrix --per arm) in a workflow that uploads each point of a job (sweep.yml runs one job per point)", strings.Join(over, "\n  "))
}

// Runs returns the number of jobs the workflow runs: the canary and the
// jobs of the families it has a job for.
func (f *Fanout) Runs() int {
	n := 0
	if f.Canary != nil {
		n++
	}
	for _, l := range f.Lists {
		if slices.Contains(workflowFamilies, l.Name) {
			n += len(l.Jobs)
		}
	}
	return n
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
