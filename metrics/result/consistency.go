package result

import (
	"fmt"

	"sweep/metrics/aiperf"
)

// Asked is what a point's own record says its client was asked to run:
// the concurrency its result is labelled with (its facts' conc), the
// benchmark duration of the client's command (--benchmark-duration,
// seconds) and the aiperf flag schema the command was planned with
// ("aiperf@0.12.0"). A zero field is not known and not compared.
type Asked struct {
	Conc            int
	DurationSeconds float64
	Schema          string
}

// The reason codes of CheckArtifacts: each reason reads "artifacts:
// CODE: what disagreed, where, and the two values". They are sweep's,
// beside InferenceX's own validation (Validate), which they never
// change.
const (
	// ReasonNoProfiledRecords: profile_export.jsonl holds no successful
	// profiling request (empty, cut, or every request failed).
	ReasonNoProfiledRecords = "no_profiled_records"
	// ReasonRequestCountMismatch: the successful profiling records are not
	// the summary's request_count.avg (a file cut or mixed with another's).
	ReasonRequestCountMismatch = "request_count_mismatch"
	// ReasonErrorCountMismatch: the failed profiling records are not the
	// summary's error_request_count.avg (0 when absent).
	ReasonErrorCountMismatch = "error_count_mismatch"
	// ReasonClientCancelled: the summary's was_cancelled is true, the
	// client stopped before the end of its benchmark.
	ReasonClientCancelled = "client_cancelled"
	// ReasonConcurrencyMismatch: the concurrency the summary's
	// input_config records is not the point's (another point's
	// artifacts in its directory).
	ReasonConcurrencyMismatch = "concurrency_mismatch"
	// ReasonDurationMismatch: the benchmark duration the summary's
	// input_config records is not the one the point's client command
	// asked for.
	ReasonDurationMismatch = "duration_mismatch"
	// ReasonSummaryUnreadable: profile_export_aiperf.json does not read
	// (not JSON, a NaN aiperf 0.12.0 never writes): named at its line and
	// column.
	ReasonSummaryUnreadable = "summary_unreadable"
	// ReasonAiperfVersionMismatch: the summary's aiperf_version is not
	// the release the client's flag schema names: the command was
	// planned, and the artifacts are read, for that release.
	ReasonAiperfVersionMismatch = "aiperf_version_mismatch"
)

// reasonPrefix starts every reason of CheckArtifacts.
const reasonPrefix = "artifacts: "

// CheckArtifacts lists how the artifacts in disagree with themselves
// (the records of profile_export.jsonl against the counts of
// profile_export_aiperf.json) or with what the point asked of its client
// (asked: the concurrency and duration the summary's input_config
// records); none when they agree on everything both say. Each reason
// names the code, the files and both values. InferenceX reads only the
// summary's counts, so a cut or emptied records file, or a summary of
// another run, passes its validation; these reasons are sweep's, added
// beside its verdict, and sweep run's result and sweep result aggregate
// both judge a point with them.
func CheckArtifacts(in *Inputs, asked Asked) []string {
	var out []string
	add := func(code, format string, a ...any) {
		out = append(out, reasonPrefix+code+": "+fmt.Sprintf(format, a...))
	}
	ok, failed := profilingCounts(in.Records)
	if ok == 0 {
		add(ReasonNoProfiledRecords, "%s holds no successful profiling request (%d records, %d failed profiling requests): the load left nothing to measure",
			in.RecordsFile, len(in.Records), failed)
	}
	if in.SummaryErr != nil {
		add(ReasonSummaryUnreadable, "%v", in.SummaryErr)
	}
	s := in.Summary
	if s == nil {
		return out
	}
	if n, err := summaryAvg(s, "request_count"); err == nil && n != nil && *n != float64(ok) {
		add(ReasonRequestCountMismatch, "%s has %d successful profiling records, %s request_count.avg says %s",
			in.RecordsFile, ok, s.File, pyG(*n))
	}
	if n, err := summaryAvg(s, "error_request_count"); err == nil {
		errs := 0.0
		if n != nil {
			errs = *n
		}
		if errs != float64(failed) {
			add(ReasonErrorCountMismatch, "%s has %d failed profiling records, %s error_request_count.avg says %s",
				in.RecordsFile, failed, s.File, pyG(errs))
		}
	}
	if s.WasCancelled() {
		add(ReasonClientCancelled, "%s says was_cancelled: true: the client stopped before the end of its benchmark", s.File)
	}
	if n, ok := s.Concurrency(); ok && asked.Conc > 0 && n != asked.Conc {
		add(ReasonConcurrencyMismatch, "%s input_config says concurrency %d, the point is conc %d: these artifacts are another point's",
			s.File, n, asked.Conc)
	}
	if d, ok := s.BenchmarkDuration(); ok && asked.DurationSeconds > 0 && d != asked.DurationSeconds {
		add(ReasonDurationMismatch, "%s input_config says a benchmark duration of %s s, the point's client asked for %s s: these artifacts are another run's",
			s.File, pyG(d), pyG(asked.DurationSeconds))
	}
	if v, want := s.AIPerfVersion, schemaRelease(asked.Schema); want != "" && v != "" && v != want {
		add(ReasonAiperfVersionMismatch, "%s says aiperf_version %s, the client's command was planned for %s (and its artifacts are read as %s's)",
			s.File, v, asked.Schema, want)
	}
	return out
}

// profilingCounts counts the profiling records (not warm-up) that
// succeeded and that failed, as aiperf counts request_count and
// error_request_count.
func profilingCounts(recs []aiperf.Record) (ok, failed int) {
	for i := range recs {
		r := &recs[i]
		switch {
		case r.Warmup():
		case r.Failed():
			failed++
		default:
			ok++
		}
	}
	return ok, failed
}
