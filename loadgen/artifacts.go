package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"sweep/internal/atomicfile"
	"sweep/metrics/aiperf"
)

// prepareDir creates the artifact directory and removes temp files a
// crashed earlier run left behind.
func prepareDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("artifact dir: %w", err)
	}
	stale, err := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if err != nil {
		return fmt.Errorf("artifact dir: %w", err)
	}
	for _, f := range stale {
		if err := os.Remove(f); err != nil {
			return fmt.Errorf("artifact dir: remove stale %s: %w", f, err)
		}
	}
	return nil
}

// writeArtifacts writes the aiperf files: the per-request JSONL always
// (when any request was sent), the summary and the server metrics only
// when at least one profiling request succeeded, as aiperf does.
func (r *runner) writeArtifacts(ctx context.Context, scr *scraper, profStart, profEnd int64) (*Result, error) {
	r.mu.Lock()
	records := r.records
	res := &Result{
		BenchmarkID: r.artifactID(), Dir: r.o.ArtifactDir,
		Warmup: *r.counts[aiperf.PhaseWarmup], Profiling: *r.counts[aiperf.PhaseProfiling],
		Cancelled: r.abort != nil || ctx.Err() != nil, Dataset: r.ds.describe(),
	}
	if r.vc != nil {
		numberSessions(records)
	}
	r.mu.Unlock()
	// The server-metrics export (the largest file) is encoded beside the
	// records and the summary.
	var smFiles []string
	var smErr error
	var wg sync.WaitGroup
	if res.Profiling.OK > 0 && scr != nil {
		wg.Go(func() { smFiles, smErr = r.writeServerMetrics(scr, profStart, profEnd) })
	}
	err := r.writeRecordsAndSummary(records, res)
	wg.Wait()
	if err != nil {
		return res, err
	}
	res.Files = append(res.Files, smFiles...)
	return res, smErr
}

// writeRecordsAndSummary writes profile_export.jsonl (when any request was
// sent) and profile_export_aiperf.json (when a profiling request
// succeeded), adding them to res.Files. The timeslice files (the largest,
// made from the records alone) are computed and written beside them; the
// profiling phase's sweep-line curves, which both window, are built once,
// by whichever asks first.
func (r *runner) writeRecordsAndSummary(records []*record, res *Result) error {
	phaseCurves := sync.OnceValue(func() *curves { return newCurves(spansOf(records, aiperf.PhaseProfiling), true) })
	var tsFiles []string
	var tsErr error
	var wg sync.WaitGroup
	if r.o.SliceDuration > 0 && res.Profiling.OK > 0 {
		wg.Go(func() { tsFiles, tsErr = r.writeTimeslices(records, phaseCurves) })
	}
	err := r.writeRecordFiles(records, res, phaseCurves)
	wg.Wait()
	res.Files = append(res.Files, tsFiles...)
	if err != nil {
		return err
	}
	return tsErr
}

// writeRecordFiles writes the records, the summary, its CSV table and the
// console export, adding them to res.Files.
func (r *runner) writeRecordFiles(records []*record, res *Result, phaseCurves func() *curves) error {
	if len(records) > 0 {
		parts, err := encodeRecords(records)
		if err != nil {
			return err
		}
		if err := atomicfile.WriteWith(filepath.Join(r.o.ArtifactDir, aiperf.RecordsFile), 0o644, func(w io.Writer) error {
			for _, p := range parts {
				if _, err := w.Write(p); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("write %s: %w", aiperf.RecordsFile, err)
		}
		res.Files = append(res.Files, aiperf.RecordsFile)
	}
	if res.Profiling.OK == 0 {
		return nil
	}
	sum, blocks := r.summary(records, res.Cancelled, phaseCurves)
	data, err := marshalIndent(sum)
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(r.o.ArtifactDir, aiperf.SummaryFile), data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", aiperf.SummaryFile, err)
	}
	res.Files = append(res.Files, aiperf.SummaryFile)
	table, err := summaryCSV(blocks)
	if err == nil {
		err = atomicfile.Write(filepath.Join(r.o.ArtifactDir, SummaryCSV), table, 0o644)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", SummaryCSV, err)
	}
	res.Files = append(res.Files, SummaryCSV)
	if err := r.writeConsole(blocks); err != nil {
		return err
	}
	res.Files = append(res.Files, ConsoleExport)
	return nil
}

// writeServerMetrics writes server_metrics_export.json and its CSV table
// and returns the names written.
func (r *runner) writeServerMetrics(scr *scraper, profStart, profEnd int64) ([]string, error) {
	eo := exportOptions{inputConfig: r.inputConfig()}
	r.mu.Lock()
	for _, rec := range r.records {
		if rec.phase() == aiperf.PhaseWarmup {
			if start := rec.startNs(); eo.warmup[0] == 0 || start < eo.warmup[0] {
				eo.warmup[0] = start
			}
			eo.warmup[1] = max(eo.warmup[1], rec.endNs())
		}
	}
	r.mu.Unlock()
	sm, ok := scr.export(r.artifactID(), profStart, profEnd, r.o.SliceDuration, eo)
	if !ok {
		r.logf("warning: %s; %s not written", scr.noAnswer(), aiperf.ServerMetricsFile)
		return nil, nil
	}
	// Encoded straight into the file: a long point's export is about
	// 100 MB, which building it whole first (and indenting a copy) took
	// seconds of the load generator's end.
	if err := atomicfile.WriteWith(filepath.Join(r.o.ArtifactDir, aiperf.ServerMetricsFile), 0o644, func(w io.Writer) error {
		return writeIndent(w, sm)
	}); err != nil {
		return nil, fmt.Errorf("write %s: %w", aiperf.ServerMetricsFile, err)
	}
	table, err := serverMetricsCSV(sm)
	if err != nil {
		return []string{aiperf.ServerMetricsFile}, err
	}
	if err := atomicfile.Write(filepath.Join(r.o.ArtifactDir, ServerMetricsCSV), table, 0o644); err != nil {
		return []string{aiperf.ServerMetricsFile}, fmt.Errorf("write %s: %w", ServerMetricsCSV, err)
	}
	return []string{aiperf.ServerMetricsFile, ServerMetricsCSV}, nil
}

// summary builds profile_export_aiperf.json; blocks are its profiling
// metric blocks (for the CSV).
func (r *runner) summary(records []*record, cancelled bool, phaseCurves func() *curves) (sum, blocks object) {
	o := &r.o
	prof := collect(records, aiperf.PhaseProfiling)
	if phaseCurves != nil && len(prof.spans) > 0 {
		prof.curves = phaseCurves() // of the same spans
	}
	prof.window = r.phaseWindow
	out := object{
		{"schema_version", "1.4"},
		{"aiperf_version", aiperfVersion},
		{"benchmark_id", r.artifactID()},
	}
	blocks = prof.metricBlocks()
	out = append(out, blocks...)
	var seed any = o.Seed
	out = append(out,
		field{"input_config", r.inputConfig()},
		field{"run_info", object{
			{"benchmark_id", r.artifactID()}, {"random_seed", seed}, {"trial", 0}, {"cli_command", o.CLICommand},
		}},
		field{"was_cancelled", cancelled},
		field{"error_summary", errorSummary(records)},
		field{"start_time", isoLocal(prof.startNs)},
		field{"end_time", isoLocal(prof.endNs)},
	)
	r.mu.Lock()
	out = append(out, field{"branch_stats", r.branches.object()})
	r.mu.Unlock()
	if warm := collect(records, aiperf.PhaseWarmup); warm.ok > 0 {
		out = append(out, field{"warmup_metrics", warm.metricBlocks()})
	}
	ds := object{{"source_type", r.ds.SourceType}, {"loader", r.ds.Loader}}
	if r.ds.HFName != "" {
		ds = append(ds, field{"hf_dataset_name", r.ds.HFName})
	}
	switch {
	case r.ds.SourceType == "public_dataset":
		ds = append(ds, field{"hf_split", "train"})
	case r.ds.Path != "":
		ds = append(ds, field{"path", r.ds.Path})
	}
	// aiperf echoes --num-dataset-entries here, not the traces it read.
	entries := o.DatasetEntries
	if entries <= 0 {
		entries = len(r.convs)
	}
	ds = append(ds, field{"num_dataset_entries", entries})
	// The scenario's own reasons, as aiperf stamps them; which client ran
	// is sweep's result's to say.
	var reasons []string
	if o.UnsafeOverride {
		reasons = append(reasons, "unsafe_override")
	}
	if cancelled {
		reasons = append(reasons, "run_cancelled")
	}
	md := object{{"dataset", ds}}
	if o.Scenario != "" {
		md = append(md, field{"scenario", o.Scenario}, field{"submission_valid", len(reasons) == 0})
		if len(reasons) > 0 { // aiperf writes the list only when it is not empty
			md = append(md, field{"submission_invalid_reasons", reasons})
		}
	}
	return append(out, field{"metadata", md}), blocks
}

// encodeRecords is profile_export.jsonl, one record a line in order, in
// consecutive parts encoded side by side (the point's load is over, the
// cores are free).
func encodeRecords(records []*record) ([][]byte, error) {
	n := min(runtime.GOMAXPROCS(0), len(records))
	parts := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for p := range n {
		wg.Go(func() {
			var b bytes.Buffer
			for _, rec := range records[p*len(records)/n : (p+1)*len(records)/n] {
				line, err := recordLine(&rec.Record)
				if err != nil {
					errs[p] = fmt.Errorf("encode record: %w", err)
					return
				}
				b.Write(line)
				b.WriteByte('\n')
			}
			parts[p] = b.Bytes()
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return parts, nil
}

// recordLine is json.Marshal(rec) without json.Marshal's second pass over
// the 2-3 kB the record's MarshalJSON wrote (validate, compact, escape
// <, > and &), when that pass cannot change it: every part of the line is
// compact JSON from encoding/json or strconv, save the metrics' tags and
// units, quoted by strconv.Quote, which is JSON's quoting when they are
// plain (printable ASCII without <, > and &); so is the rest of the line.
func recordLine(rec *aiperf.Record) ([]byte, error) {
	for _, m := range rec.Metrics {
		if !plainString(m.Tag) || !plainString(m.Unit) {
			return json.Marshal(rec)
		}
	}
	line, err := rec.MarshalJSON()
	if err != nil {
		return json.Marshal(rec) // its error, as it words it
	}
	return line, nil
}
