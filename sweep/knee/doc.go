// Package knee finds where each arm of a sweep stops gaining throughput:
// it reads result directories into arms, fits each arm's throughput over
// concurrency, reports the knee with the reasons it holds or not, draws
// Pareto frontiers across arms, and proposes the next concurrencies of an
// adaptive discovery.
//
// The call sequence:
//
//	arms, err := knee.Read(ctx, dir)       // every result under dir, grouped by IdentityKeys; the arm read as one measurement: one setup, each concurrency at one length (OneMeasurement)
//	for _, a := range arms {
//		r := knee.Analyze(a, knee.Options{}) // clean, fit, gate, knee; r.Status says ok or why not
//		results = append(results, r)
//	}
//	knee.WriteTable(os.Stdout, results)     // or WriteJSON
//	fronts := knee.Frontiers(results, knee.AxisE2ENormP90)
//
// An adaptive sweep calls NextStep (or Next) with the grid and the samples
// measured so far (ReadFile reads one); it is a pure function, so a
// resumed sweep makes the same choices. Kneedle is kneed's KneeLocator with
// its defaults, for comparison with InferenceX's tooling.
package knee
