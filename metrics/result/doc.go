// Package result turns a point's artifacts into InferenceX's aggregate
// result JSON and checks it: the run facts (RunFacts, from a plan or from
// InferenceX's environment), aggregation of aiperf's records and server
// metrics (Aggregate), validation (Validate), the result file name
// (ResultFilename) and the atomic writer (WriteResult).
//
//	facts := result.RunFacts{...}          // from the plan; or result.FromEnv(env)
//	in, err := result.LoadInputs(resultDir, facts.HFHubCache)
//	res, err := result.Aggregate(in, facts)
//	res.AcceptanceLength = metrics.CheckAL("scrape", counters, facts.GoldenAL, facts.ALTolerance)
//	err = result.WriteResult(result.Path(outDir, facts.ResultFilename), res)
//	verdict, err := result.Validate(aiperf.ResolveArtifactDir(resultDir),
//		result.ValidateOptions{FailedRequestThreshold: result.DefaultFailedRequestThreshold})
//
// Fidelity: Aggregate reproduces InferenceX's process_agentic_result
// (utils/agentic/aggregation at commit 843c6254) key for key, including
// Python's exact statistics.mean/pstdev, the linear percentile, round(x, 5)
// and the backend adapters' preferences; Validate reproduces
// validate_agentic_result and the required-metric-prefix check, in order
// and with the same messages. The conformance cases in
// testdata/aggregation are InferenceX's own outputs.
package result
