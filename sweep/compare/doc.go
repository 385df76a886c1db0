// Package compare decides whether a change made serving faster or slower:
// it pairs two directories of sweep results (BASE and HEAD) point by point
// and gives each arm, and the whole comparison, a verdict with a 90 %
// interval that accounts for run-to-run noise.
//
//	base, _ := compare.ReadSide(ctx, "BASE", "runs/main")
//	head, _ := compare.ReadSide(ctx, "HEAD", "runs/pr-123")
//	rep := compare.Compare(base, head, compare.Options{Tolerance: 5})
//	_ = compare.WriteMarkdown(os.Stdout, rep) // or WriteJSON, WriteText
//	if rep.Verdict == compare.Regression { ... } // sweep compare exits 1
//
// Pairing. A point is an arm (result.IdentityKeys: model, hardware,
// framework, precision, spec decoding, scenario, disagg, multinode, TP, EP,
// DP-attention, KV offload, PP) and a concurrency. The image and the recipe
// fingerprint are not part of it (they are what a change changes); the
// report names them per arm where they differ.
//
// Values. A point's value on a side is the arithmetic mean of its valid
// results (valid: not marked invalid, at least one successful request, an
// error rate of at most 10 %, a throughput present); invalid replicates
// beside valid ones are left out and named. Its change is
// 100·(head/base − 1). Results of one length only: at a point with a
// full-length result, the adaptive search's short probes are left out and
// named; a point one side measured only as probes and the other at the
// full length is a problem (length-mismatch), never a change (a probe
// runs a quarter of the length from a cold cache and reads differently).
// Probes pair with probes. The frontier and an A/A calibration read
// full-length results only.
//
// Pooling. An arm's change is the geometric mean of its points' ratios:
// every paired point weighs the same, in log space, so a 10 % loss at c4
// counts as much as one at c256 whatever their throughputs. A point past
// BASE's cliff (BASE's throughput per GPU there below half of its highest
// at a lower concurrency: the engine thrashes, its KV pool overflowed) is
// listed but not judged: a thrashing engine's results vary from run to
// run far beyond the arm's noise (an A/A reads such a point 6-12 % apart
// where the others agree within 0.5 %), so it has no interval or verdict
// and stays out of the pooled change and of the noise.
//
// Noise. The interval is L ± t(0.95, df)·σ·sqrt(Σ q)/k over the k judged
// points, L the mean log ratio and q = 1/m + 1/n for m base and n head
// results at a point; σ, the relative noise of one result, comes from, in
// this order:
//   - replicates: the pooled within-point scatter of log throughput over
//     every arm and both sides, when there are at least 3 degrees of
//     freedom;
//   - a calibration file (sweep compare --calibrate on repeated runs of
//     the same points), for the arms it covers;
//   - the paired scatter: the scatter of the paired per-point changes
//     around each arm's pooled change, pooled over the arms. The curve's
//     shape cancels in a paired change, so, unlike residuals around a
//     smooth fit of one side, this scatter holds no misfit of a curve
//     model; but it is noise only where the change is uniform, and a
//     change confined to some points (a capacity regression: identical
//     below the KV limit, a cliff above) is not. Per arm, a forward search
//     starts from the ⌊k/2⌋+1 points whose changes agree most closely and
//     adds the nearest point while its change lies inside their
//     prediction interval (p < 0.001, Bonferroni over the points still
//     outside); the points it never adds are left out of the scatter
//     (not_uniform) and named. Then an arm whose remaining scatter is far
//     larger than the other arms' (an F test, p < 0.001; any scatter
//     beside arms with none, as a simulated engine's bit-identical results
//     have) is left out of the pool so it does not widen every other
//     arm's interval, and takes the noise of its own uniform points: its
//     scatter is not the others' noise, so their smaller one does not
//     narrow its interval either, and its verdict is the one it has alone.
//
// The noise source is named per arm. Without any (one arm, one point, no
// replicates) the interval is null and the arm INCONCLUSIVE.
//
// Points. With a noise estimate every judged point has its own interval,
// 99 % simultaneously over the arm's k judged points (Bonferroni: each at
// 1 − 0.01/k; stricter than the arm's 90 % because a point's REGRESSION
// is a second way for its arm to regress), and a verdict read from it as
// the arm's is.
//
// Verdicts. With tol the tolerance in percent and [lo, hi] an interval of
// the change: PASS when lo > −tol (IMPROVEMENT when lo > +tol, counted as
// PASS), REGRESSION when hi < −tol, INCONCLUSIVE otherwise (with how many
// results per point and side would decide it). For a metric where lower is
// better (TTFT, ITL, energy) the signs turn: REGRESSION when lo > +tol. An
// arm's verdict is its pooled change's, except that it is REGRESSION when
// any of its points is: an arm never passes while one of its points
// decisively regresses, however the geometric mean dilutes it (why says
// which). The overall verdict is INCOMPLETE if there is any problem (a
// BASE point or arm without a valid HEAD counterpart, an invalid result as
// a point's only one, simulated results compared with real ones, a probe
// compared with a full-length result), else REGRESSION if any arm
// regresses, else INCONCLUSIVE if any arm is, else PASS. Points and arms
// only HEAD has are listed, never problems.
//
// Frontier. Beside the verdict (never changing it) each arm compares the
// two sides' Pareto frontiers of throughput per GPU against
// interactivity, on the axis of the report's charts (P90 E2E-normalised
// interactivity; median 1/ITL where a paired point lacks it): the Δ of
// throughput at the interactivities both frontiers cover, since a change
// can move the curve without moving a point much, and, since that range
// leaves out a high-throughput region only one side reaches, each
// frontier's range and the change of its peak (its highest throughput),
// stated in words (coverage). Both frontiers are drawn through the paired
// points only: a side measured at fewer concurrencies would otherwise read
// low along its chords. It compares throughput, so there is none with a
// metric other than total or output.
//
// Output. Point values print in the metric's unit (Metric.Unit: latencies
// in milliseconds); the JSON keeps the results' units (seconds) with 6
// significant digits.
package compare
