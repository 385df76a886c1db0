package run

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"sweep/metrics"
	"sweep/metrics/result"
)

// judgement is what a point's result is judged on, by sweep run (its
// aggregate stage) and sweep result aggregate (a point's directory)
// alike: each gives what it has, a zero field adds no reason.
type judgement struct {
	// failedStages are the stages that failed before the result
	// ("stage client failed: ..."): sweep run's so far, run.json's
	// (judgedStages) for a point's directory.
	failedStages []string
	// al is the acceptance-length check (nil: not made).
	al *metrics.ALCheck
	// verdict is InferenceX's validation of the artifacts, verdictErr
	// why it could not be made.
	verdict    *result.Verdict
	verdictErr error
	// artifacts are what result.CheckArtifacts found in the artifacts.
	artifacts []string
	// power is the power lane's reason under REQUIRE_POWER ("": none).
	power string
	// lag is a wall-clock simulation's schedule-lag reason ("": none).
	lag string
	// official with submission: an official point must be a valid
	// submission of its scenario as the client stamped it.
	official   bool
	submission *result.Submission
}

// reasons lists why the point does not count, in one order: the stages
// that failed before the result, an acceptance length outside the
// golden band, InferenceX's validation verdict, the validate stage's own
// reasons (validateReasons) and the power lane. None: the point counts.
func (j judgement) reasons() []string {
	out := append([]string(nil), j.failedStages...)
	if j.al != nil && j.al.Verdict == metrics.ALFail {
		out = append(out, "acceptance length: "+j.al.Reason)
	}
	switch {
	case j.verdictErr != nil:
		out = append(out, "validation: "+j.verdictErr.Error())
	case j.verdict != nil && !j.verdict.Valid:
		out = append(out, "validation: "+j.verdict.Reason)
	}
	out = append(out, j.validateReasons()...)
	if j.power != "" {
		out = append(out, j.power)
	}
	return out
}

// validateReasons are the reasons sweep run's validate stage fails on
// beside InferenceX's verdict: what the artifacts disagree on, the
// simulation's schedule lag and an official point's submission stamp.
// Every other reason fails a stage of its own (the stage itself, the
// acceptance-length stage, the power stage under REQUIRE_POWER), so a
// point its judgement makes invalid never ends ok: run.json's ok, sweep
// run's exit code and a rerun's "already completed" agree with the
// result's valid, as sweep discover's resume (campaign.finished) reads
// both.
func (j judgement) validateReasons() []string {
	out := append([]string(nil), j.artifacts...)
	if j.lag != "" {
		out = append(out, j.lag)
	}
	if s := j.submission; j.official && s != nil && !s.Valid {
		out = append(out, fmt.Sprintf("not a valid %s submission (%s): an official point must be one", s.Scenario, strings.Join(s.InvalidReasons, ", ")))
	}
	return out
}

// stageReasons are the failed or cancelled stages among stages, each as
// a reason the point's result does not count ("stage client failed: ...").
func stageReasons(stages []Stage) []string {
	var out []string
	for _, st := range stages {
		if st.Outcome == outcomeFailed || st.Outcome == outcomeCancelled {
			out = append(out, fmt.Sprintf("stage %s %s: %s", st.Name, st.Outcome, st.Error))
		}
	}
	return out
}

// judgedStages are the stages of a point's record (run.json) that sweep
// run judged its result on: those recorded before its aggregate stage,
// or, in a record without one (the point killed before it), every stage
// but those Run records after the result (validate, power, stop). When
// rejudgeAL (another golden AL or tolerance given), the acceptance-length
// stage is left out: the acceptance length is judged again.
func judgedStages(rec *Record, rejudgeAL bool) []Stage {
	var out []Stage
	for _, st := range rec.Stages {
		switch st.Name {
		case StageAggregate:
			return out
		case StageValidate, StagePower, StageStop:
			continue
		case StageAcceptance:
			if rejudgeAL {
				continue
			}
		}
		out = append(out, st)
	}
	return out
}

// askedOf is what a point asked of its client: the concurrency of its
// facts, the --benchmark-duration of its client's argv (clientArgv, as
// run.json records it; nil or without the flag: not known) and the flag
// schema of its client (nil: not known).
func askedOf(facts result.RunFacts, clientArgv []string, client *result.Client) result.Asked {
	a := result.Asked{Conc: facts.Conc}
	if client != nil {
		a.Schema = client.Schema
	}
	if v, ok := clientFlags(clientArgv)["--benchmark-duration"]; ok {
		if d, err := strconv.ParseFloat(v, 64); err == nil && d > 0 {
			a.DurationSeconds = d
		}
	}
	return a
}

// recordedClientArgv is the client's argv as rec (a point's run.json)
// records it; nil when rec is nil or records no client.
func recordedClientArgv(rec *Record) []string {
	if rec == nil {
		return nil
	}
	if p := rec.Processes[ClientProcess]; p != nil {
		return p.Argv
	}
	return nil
}

// ConfiguredDuration is the benchmark duration the client of the point
// whose result is resultFile was asked for, read from the run.json beside
// it as the point's judgement reads it (askedOf: the --benchmark-duration
// of the client's recorded argv). sweep compare reads it for a result
// whose aiperf artifacts are gone (result.File.BenchmarkSeconds unknown).
// Where it is not known, seconds is 0 and unknown says why when there is
// a run.json: it records another result ("DIR/run.json records result
// X, not Y": `sweep result aggregate --out-name` makes such a directory,
// and a run.json copied from another point one), a --benchmark-duration
// of its client that is no positive number, or none; no run.json says
// nothing ("").
// A run.json that does not read is an error at its line and column.
func ConfiguredDuration(resultFile string) (seconds float64, unknown string, err error) {
	dir := filepath.Dir(resultFile)
	rec, err := ReadRecordFile(dir)
	switch {
	case err != nil:
		return 0, "", fmt.Errorf("%w; the benchmark duration of %s is read from it (its aiperf artifacts are gone): restore the point's run.json, or remove it to compare the result by its measured span alone", err, resultFile)
	case rec == nil:
		return 0, "", nil
	case rec.ResultFile == "":
		return 0, fmt.Sprintf("%s records no result, not %s", filepath.Join(dir, RecordFile), filepath.Base(resultFile)), nil
	case filepath.Base(rec.ResultFile) != filepath.Base(resultFile):
		return 0, fmt.Sprintf("%s records result %s, not %s", filepath.Join(dir, RecordFile), filepath.Base(rec.ResultFile), filepath.Base(resultFile)), nil
	}
	argv := recordedClientArgv(rec)
	if d := askedOf(result.RunFacts{}, argv, rec.Client).DurationSeconds; d > 0 {
		return d, "", nil
	}
	if v, ok := clientFlags(argv)["--benchmark-duration"]; ok {
		return 0, fmt.Sprintf("%s records a --benchmark-duration of the client that is no positive number of seconds (%q)", filepath.Join(dir, RecordFile), v), nil
	}
	return 0, fmt.Sprintf("%s records no --benchmark-duration of the client", filepath.Join(dir, RecordFile)), nil
}
