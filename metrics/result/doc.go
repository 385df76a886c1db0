// Package result owns the aggregate result file, InferenceX's JSON of one
// point: its type (Result), where it lives (Path, PointDir, PointPath:
// DIR/ID/ID.json in a sweep directory; ProbeDir: DIR/ID.probe/ for a
// probe a full-length run superseded), its name (ResultFilename), the
// identity of its arm (Identity, RowIdentity, with one label format),
// writing (WriteResult, atomic), reading (ReadFile, ReadDir: the one
// reader that knees, reports, sweeps and the CI summary use) and whether a
// result counts (File.Excluded). It also makes results: the run facts
// (RunFacts, from a matrix row or from InferenceX's environment),
// aggregation of aiperf's records and server metrics (Aggregate) and
// InferenceX's validation of the artifacts (Validate).
//
// Writing a point's result:
//
//	facts := result.FactsFromRow(row, name, goldenAL, tol) // or result.FromEnv(env)
//	in, err := result.LoadInputs(resultDir, facts.HFHubCache)
//	res, err := result.Aggregate(in, facts)
//	res.AcceptanceLength = metrics.CheckAL("scrape", counters, facts.GoldenAL, facts.ALTolerance)
//	err = result.WriteResult(result.Path(outDir, facts.ResultFilename), res)
//	verdict, err := result.Validate(aiperf.ResolveArtifactDir(resultDir),
//		result.ValidateOptions{FailedRequestThreshold: result.DefaultFailedRequestThreshold})
//	reasons := result.CheckArtifacts(in) // sweep's own: the artifacts against themselves
//
// Reading results back:
//
//	files, problems, err := result.ReadDir(ctx, dir) // every *.json with conc and request_metrics
//	for _, f := range files {
//		fmt.Println(f.Identity.Label(), f.Conc, f.Excluded())
//	}
//
// A result file is a JSON object with "conc" and "request_metrics"; other
// JSON is not a result (ErrNotResult), but a file taken for one that is
// not valid JSON (a result cut short) is a *configs.Error at the first
// byte that is not, never left out silently. NaN, Infinity and -Infinity, which
// Python's json.dump writes, are read as null and listed in
// File.NonFinite; a result value of the wrong type is a *configs.Error
// naming the file, the key's line and column and the key.
//
// Fidelity: Aggregate reproduces InferenceX's process_agentic_result
// (utils/agentic/aggregation at commit 843c6254) key for key, including
// Python's exact statistics.mean/pstdev, the linear percentile, round(x, 5)
// and the backend adapters' preferences; Validate reproduces
// validate_agentic_result and the required-metric-prefix check, in order
// and with the same messages; CheckArtifacts' reasons are sweep's own,
// judged beside InferenceX's verdict, never inside it. The conformance cases in
// testdata/aggregation are InferenceX's own outputs.
package result
