// Package compare decides whether a change made serving faster or slower:
// it pairs two directories of sweep results (BASE and HEAD) point by point
// and gives each arm, and the whole comparison, a verdict with intervals
// that account for run-to-run noise and, for a REGRESSION, for the number
// of arms and points that could each have shown one by chance.
//
//	base, head, _ := compare.ReadSides(ctx, "runs/main", "runs/pr-123")
//	rep := compare.Compare(base, head, compare.Options{Tolerance: 5})
//	_ = compare.WriteMarkdown(os.Stdout, rep) // or WriteJSON, WriteText
//	if rep.Verdict == compare.Regression { ... } // sweep compare exits 1
//
// Pairing. A point is an arm (result.IdentityKeys: model, hardware,
// framework, precision, spec decoding, scenario, disagg, multinode, TP, EP,
// DP-attention, KV offload, PP; a multi-node arm's deployment too: workers,
// TP, PP, DCP, PCP, EP and DP attention per role) and a concurrency. Two
// deployments are never paired; a BASE arm whose deployment HEAD lacks is
// a missing arm, its problem naming the deployment HEAD has of the same
// summed TP and EP (result.Identity.SummedArmKey). The image and the recipe
// fingerprint are not part of it (they are what a change changes); the
// report names them per arm where they differ.
//
// Values. A point's value on a side is the arithmetic mean of its valid
// results (valid: not marked invalid, at least one successful request, an
// error rate of at most 10 %, a throughput present); invalid replicates
// beside valid ones are left out and named. Its change is
// 100·(head/base − 1). Results of one length only (knee.Length: a short
// probe or the full length, and the benchmark duration the client was
// configured with, as the aiperf artifacts beside the result record it,
// result.File.BenchmarkSeconds, or, where they are gone, the client's
// argv its run.json records (run.ConfiguredDuration, read by ReadSide
// through knee.ReadMixed); not the measured span, which reaches
// past it by the requests' latency): at a point with a full-length result, the adaptive search's
// short probes are left out and named, and so are, at a point a side
// measured for several benchmark durations, its results not at the
// duration most of its arm's ran (knee.OneMeasurement). A point the sides
// measured at different lengths (one only as probes and the other at the
// full length, or for different benchmark durations: a discovery's
// 1200 s against an official sweep's 3600 s) is a problem
// (length-mismatch), never a change: a probe runs a fraction of the
// length from a cold cache, and a longer run's sessions get further, its
// cache warms and its KV pool fills otherwise (one simulated point read
// 7.5 % apart at 1200 s and 3600 s). The durations the sides ran are
// named among what differs. Probes pair with probes. A run.json that
// does not read, where its result's artifacts are gone, is an error at
// its line and column (ReadSide); one that records another result, or no
// duration, leaves the duration unknown with that reason named among
// what differs ("unknown (DIR/run.json records result X, not Y)").
// Where one side's duration is unknown (its aiperf artifacts and run.json
// gone: the CI uploads most results alone), its results' measured span
// (knee.Length's Span, the
// mean of request_metrics.throughput.duration_seconds over the point's
// valid results) stands in, one way only: a run spans at least about its
// configured duration, so a span more than knee.SpanTolerance (10 %)
// short of the other side's known duration is a shorter run and a
// length-mismatch; a longer span says nothing (how far a span reaches
// past its duration depends on the requests' latency, up to 35 % apart
// at one point of one length). Where neither side's duration is known,
// the arm is judged as a whole (knee.SidesRanApart over the points both
// sides measured): spans a median more than knee.ArmSpansApart (15 %)
// apart whose longer side delivered that much more work (throughput ×
// span), as a longer run does and a slower engine does not, make every
// such point a length-mismatch, and so do one point's spans more than
// knee.SpansApart (50 %) apart; the differs line then names both sides'
// spans ("unknown → unknown (measured spans 1210 s → 306 s, HEAD's a
// median 0.253x BASE's)"), and is left out where they lie within
// knee.ArmSpansApart of each other. Sides that
// replayed different trace sets (knee.Setup's Dataset, as both sides'
// results say it) are a problem
// (dataset-mismatch): another workload, never a change. Another client,
// aiperf version or image is named among what differs and judged. The frontier and an A/A calibration read full-length
// results only.
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
// replicates) the interval is null and the arm INCONCLUSIVE, and so it is
// with a noise estimate of fewer than 2 degrees of freedom (two paired
// points, nothing else): there a point's 99 % family-wise interval has a
// t quantile over 100 and spans from a loss of everything to a gain of
// thousands of percent, so no interval is given (the arm's and its
// points' alike) and the noise source says what would give one (a third
// paired point, a second result per point and side, or a calibration),
// where an INCONCLUSIVE arm with an interval says how many results per
// point and side would decide it.
//
// Points. With a noise estimate every judged point has its own interval
// and a verdict read from it as the arm's is (Correction).
//
// Correction. A sweep of 20 arms makes 20 claims of a pooled change and
// one per point; read each at its own level and one of them lies beyond
// the tolerance by noise alone ever more often as the arms grow (a
// simulated A/A of 16 arms at noise far above the tolerance read
// REGRESSION 28 % of the time, 16 arms exactly at the tolerance line
// 56 %). So the REGRESSION claims are corrected for their number, by
// Holm's step-down procedure (valid whatever their dependence; they share
// the noise estimate): each arm's pooled change has, beside its own 90 %
// interval, a family CI over the k judged arms (those with an interval),
// taken in order of their p-values (one-sided, of no loss beyond the
// tolerance): the first at 1 − 0.10/k, the next at 1 − 0.10/(k−1) while
// each before it regressed, and the rest at the level of the step that
// stopped; the points' intervals are Holm's over every judged point of
// those arms at 99 % (the first at 1 − 0.01/n over n points). A point's
// REGRESSION is a second way for its arm to regress, so it is held to the
// stricter level. Together a comparison whose every arm and point lies
// within the tolerance reads REGRESSION with a chance of at most 5.5 %
// (5 % from the arms, 0.5 % from the points, one-sided), however many
// arms: the same simulations read 0.5 % and 6.5 % at 16 arms, within
// their sampling error (TestFamilyWiseFalseRegression). With one arm its family CI is its 90 % interval and its points'
// first step is 1 − 0.01/k over its k points: its verdicts are those
// read before the correction, but for the points Holm's later steps
// tell once one has regressed. PASS needs no correction: it needs every
// arm's own 90 % interval above −tol, and a comparison with an arm whose
// true loss is beyond the tolerance passes with a chance of at most 5 %
// however many arms (an intersection of one-sided tests). The report
// names the correction (Correction: its families, levels and the rule in
// words) beside the verdict.
//
// Verdicts. With tol the tolerance in percent and [lo, hi] an interval of
// the change: PASS when lo > −tol (IMPROVEMENT when lo > +tol, counted as
// PASS), REGRESSION when hi < −tol, INCONCLUSIVE otherwise (with how many
// results per point and side would decide it). For a metric where lower is
// better (TTFT, ITL, energy) the signs turn: REGRESSION when lo > +tol. An
// arm's PASS, IMPROVEMENT and INCONCLUSIVE are read from its own 90 %
// interval, its REGRESSION from its family CI; it is REGRESSION also when
// any of its points is: an arm never passes while one of its points
// decisively regresses, however the geometric mean dilutes it (why says
// which). Where the correction alone keeps an arm from regressing (its own
// 90 % interval lies beyond the tolerance but not its family CI, or one
// of its points' intervals at 99 % over the arm's own points, Bonferroni,
// lies beyond it but not its family CI) the arm is INCONCLUSIVE, never
// PASS: the correction keeps noise across many arms from being claimed as
// a regression, and does not pass what the arm's own data do not. The
// overall verdict is INCOMPLETE if there is any problem (a BASE point or
// arm without a valid HEAD counterpart, an invalid result as a point's
// only one, simulated results compared with real ones, results of
// different lengths: a probe compared with a full-length result, or
// different benchmark durations; the verdict line counts them by kind),
// else REGRESSION if any arm regresses, else
// INCONCLUSIVE if any arm is, else PASS. Points and arms only HEAD has are
// listed, never problems.
//
// Frontier. Beside the verdict (never changing it) each arm compares the
// two sides' Pareto frontiers of throughput per GPU against
// interactivity, on the axis of the report's charts (P90 E2E-normalised
// interactivity; median 1/ITL where a paired point lacks it): the Δ of
// throughput at the interactivities both frontiers cover, since a change
// can move the curve without moving a point much, and, since that range
// leaves out a high-throughput region only one side reaches, each
// frontier's range and the change of its peak (its highest throughput),
// stated in words (coverage; a reach beyond the common range narrower
// than its figures print is left out). Both frontiers are drawn through
// the paired points only: a side measured at fewer concurrencies would
// otherwise read low along its chords. It compares throughput, so there
// is none with a metric other than total or output.
//
// Output. Point values print in the metric's unit (Metric.Unit: latencies
// in milliseconds); the JSON keeps the results' units (seconds) with 6
// significant digits. The Markdown escapes its text for Markdown
// (markdown.Cell), but inside raw HTML (each arm's <details><summary>,
// where GitHub reads no Markdown) for HTML (markdown.HTML). sweep report
// prints the intervals as these outputs do (CIText, FamilyCIText, under
// ArmFamilyHeader and PointFamilyHeader).
package compare
