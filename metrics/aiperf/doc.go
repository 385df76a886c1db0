// Package aiperf is the model of aiperf 0.12's artifacts: the per-request
// records of profile_export.jsonl, the summary profile_export_aiperf.json
// and the server-metrics export server_metrics_export.json, with readers
// that name the file, line and field of anything malformed. Record is the
// one model of a record: sweep's load generator writes it (MarshalJSON,
// byte for byte as aiperf does) and the aggregation reads it back.
//
//	dir := aiperf.ResolveArtifactDir(resultDir)
//	err := aiperf.EachRecord(f, aiperf.RecordsFile, func(r *aiperf.Record) error { ... })
//	sum, err := aiperf.ReadSummaryFile(filepath.Join(dir, aiperf.SummaryFile))
//	exp, err := aiperf.ReadServerMetricsFile(filepath.Join(dir, aiperf.ServerMetricsFile))
//
// ReadServerMetricsFile reads the export as a stream, setting the
// per-series timeslices and the warm-up's families aside as it goes: a
// long point's export runs to GiBs, and the read costs what is left (1.8
// MB of allocations for a 286 MB file), not the file's size.
//
// Values keep the forms Python wrote (Scalar tells 3 from 3.0 from "3"), so
// InferenceX's aggregation, which runs on Python's json.load, can be
// reproduced exactly.
package aiperf
