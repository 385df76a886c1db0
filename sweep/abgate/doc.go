// Package abgate is the BFCL accuracy A/B gate: it compares the
// function-calling accuracy of two serving arms of one model from their
// BFCL_PROJECT_ROOTs and decides PASS, REGRESSION, INCONCLUSIVE or
// INCOMPLETE (bfcl-ab.md §5.5):
//
//	cats, err := abgate.ExpandCategories([]string{"non_live", "live", "multi_turn"})
//	rep, err := abgate.Compare(ctx, abgate.Options{
//		A: []string{"runs/a1"}, B: []string{"runs/b1"}, // several roots per arm are replicates
//		Model: "Qwen/Qwen3.6-27B-FC", Categories: cats,
//		Read:  abgate.ReadOptions{Since: runStart},
//	})
//	err = abgate.WriteTable(os.Stdout, rep) // or WriteJSON
//	switch rep.Verdict { case abgate.Passed, abgate.Regression, abgate.Inconclusive, abgate.Incomplete: }
//
// Files are read by their exact paths (ResultPath, ScorePath), never a
// glob, so "parallel" never reads live_parallel's score. A case passes
// when its id is in the result file and not among the score file's
// failures; an "Error during inference" result is an infrastructure error
// and never a pass. Every problem (missing, stale, unreadable or
// disagreeing files, partial categories, case sets that differ,
// inference-error rates above 5 %) is a Problem and makes the verdict
// INCOMPLETE; no overall number is computed then.
//
// The primary endpoint is the weighted Δ (B − A over all cases pooled) in
// points, with a seeded stratified paired bootstrap 90 % CI and McNemar's
// exact one-sided p-value; per-category results are secondary. BFCL
// describes one bfcl-eval run against a server (argv, env, a fresh root);
// Registry is its model registry entry (a static sitecustomize.py first
// on PYTHONPATH, verified with "bfcl models"); package bfclsim writes
// stand-in roots for simulated legs.
//
// Options.Servers (sweep ab run: each arm's ArmServer, what its server
// ran) are recorded in the report and listed by WriteTable. A leg
// interrupted before its verdict reports PartialRows instead: what its
// complete replicates alone measured per category, marked
// Report.Partial, INCOMPLETE and with no overall result.
//
// Calibrate is the A/A measurement of §5.3: identical runs of one arm, the
// per-category flip rate between them and the gate's false alarms on
// A-against-A splits. Options.Calibration makes an INCONCLUSIVE verdict's
// replicate advice use those rates:
//
//	cal, err := abgate.Calibrate(ctx, abgate.CalibrateOptions{Roots: aaRoots, Model: m, Categories: cats})
//	rep, err := abgate.Compare(ctx, abgate.Options{..., Calibration: cal})
package abgate
