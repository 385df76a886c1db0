// Package compare decides whether a change made serving faster or slower:
// it pairs two directories of sweep results (BASE and HEAD) point by point
// and gives each arm, and the whole comparison, a verdict with a 90 %
// interval that accounts for run-to-run noise.
//
//	base, _ := knee.ReadMixed(ctx, "runs/main")
//	head, _ := knee.ReadMixed(ctx, "runs/pr-123")
//	rep := compare.Compare(base, head, compare.Options{Tolerance: 5})
//	_ = compare.WriteMarkdown(os.Stdout, rep) // or WriteJSON, WriteText
//	os.Exit(compare.ExitCode(rep.Verdict))
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
// counts as much as one at c256 whatever their throughputs.
//
// Noise. The interval is L ± t(0.95, df)·σ·sqrt(Σ q)/k over the k paired
// points, L the mean log ratio and q = 1/m + 1/n for m base and n head
// results at a point; σ, the relative noise of one result, comes from, in
// this order:
//   - replicates: the pooled within-point scatter of log throughput over
//     every arm and both sides, when there are at least 3 degrees of
//     freedom;
//   - a calibration file (sweep compare --calibrate on repeated runs of
//     the same points), for the arms it covers;
//   - the scatter of the paired per-point changes around each arm's pooled
//     change, pooled over the arms. The curve's shape cancels in a paired
//     change, so, unlike residuals around a smooth fit of one side, this
//     scatter holds no misfit of a curve model (a knee, a cliff, a decline
//     past the peak); an arm whose changes vary across points far more
//     than the others' (an effect that is not uniform, e.g. only past the
//     knee) is left out of the pool by an F test (p < 0.001) so it does not
//     widen every other arm's interval.
//
// The noise source is named per arm. Without any (one arm, one point, no
// replicates) the interval is null and the arm INCONCLUSIVE.
//
// Verdicts. With tol the tolerance in percent and [lo, hi] the interval of
// the change: PASS when lo > −tol (IMPROVEMENT when lo > +tol, counted as
// PASS), REGRESSION when hi < −tol, INCONCLUSIVE otherwise (with how many
// results per point and side would decide it). For a metric where lower is
// better (TTFT, ITL) the signs turn: REGRESSION when lo > +tol. The
// overall verdict is INCOMPLETE if there is any problem (a BASE point or
// arm without a valid HEAD counterpart, an invalid result as a point's
// only one, simulated results compared with real ones, a probe compared
// with a full-length result), else REGRESSION if
// any arm regresses, else INCONCLUSIVE if any arm is, else PASS. Points and
// arms only HEAD has are listed, never problems.
//
// Frontier. Beside the verdict (never changing it) each arm reports the Δ
// of throughput per GPU at the interactivities both sides' Pareto frontiers
// cover, since a change can move the curve without moving a point much.
// Both frontiers are drawn through the paired points only: a side measured
// at fewer concurrencies would otherwise read low along its chords.
package compare
