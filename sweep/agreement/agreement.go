// Package agreement judges discoveries of config keys against the keys'
// official windows (the conc-list InferenceX chose for each arm around
// the knee measured on the hardware) with the window rules of
// sweep/knee (knee.JudgeKey: strictly by the knee, by the peak, by the
// Pareto frontier), as `sweep sim agreement` does: each key's discovery
// is OUT_DIR/KEY (what `sweep discover --out OUT_DIR/KEY` writes), read
// as `sweep knees` reads it; an arm that does not agree strictly is read
// at its frontier step too, a point off its conc-list that this package
// runs (asked to) as `sweep run --simulate` runs a point
// (sweep/point), into OUT_DIR/KEY.frontier/. An adaptive discovery is
// judged on the points it measured: the official points its journal
// records as skipped are not measured (knee.Discovery), never failed. A
// discovery that has not finished (killed or interrupted: its journal
// shows points started and never ended, or never run, or an adaptive
// arm whose search recorded no end, its probes then not finished but
// for one that failed as a full-length run fails too:
// campaign.Coverage.Unfinished) is not judged: its key is "unfinished"
// (knee.UnfinishedVerdict), those points named. A discovery whose journal
// records the arms it ran (campaign.Coverage.Arms) and not all of the
// key's is judged on the arms it has (knee.Discovery.Absent): an arm not
// in it is neither measured nor failed, and no frontier point of it
// runs; a discovery with none of the key's arms is not judged (skipped).
// Each key's line starts with where its official windows came from
// (Options.Windows, configs.DefaultWindowProvenance: chosen at a measured
// knee, a hard cap, ...), and the counts split by it (Tally.Windows,
// knee.WindowTally), so agreement with a measured knee is told from
// agreement with a cap.
//
// It sits above sweep/point, the last package of floor 5 it uses.
package agreement

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/internal/plural"
	"sweep/internal/usage"
	"sweep/metrics/result"
	"sweep/sweep/campaign"
	"sweep/sweep/knee"
	"sweep/sweep/point"
)

// Options say which discoveries to judge and how to measure a frontier
// point.
type Options struct {
	// Dir holds one discovery per key, Dir/KEY.
	Dir string
	// Keys are judged in order; a key given twice is judged once, as
	// every command that takes config keys reads them
	// (matrix.ResolveKeys).
	Keys []string
	// Generator loads the configs the official windows come from.
	Generator *matrix.Generator
	// RunFrontier runs an arm's point at its frontier step when
	// Dir/KEY.frontier holds no result of it (a simulated arm's only: a
	// real arm's point is the hardware's to measure); without it such a
	// point is not measured and the key's frontier verdict stays open.
	RunFrontier bool
	// Point is how the frontier point runs (its Mode simulated; Generator,
	// FreePort, FreePorts, Stdout and Stderr as sweep run sets them). Its
	// Row, Out and Key are set per point.
	Point point.Request
	// Windows says where the keys' official windows came from
	// (configs.DefaultWindowProvenance): each key's line starts with its
	// provenance and Tally.Windows counts by it. A key without a row is
	// "unlisted".
	Windows []configs.WindowSource
}

// Key is one key's verdict, or why it was skipped.
type Key struct {
	Key     string
	Verdict knee.KeyVerdict
	// Skipped says why the key is not judged ("" when it is).
	Skipped string
}

// Line is the key's line: its window provenance, then
// knee.KeyVerdict.Line, or "skip" with why (knee.KeyVerdict.WindowLine).
func (k Key) Line() string {
	if k.Skipped != "" {
		return fmt.Sprintf("%-*s%-17s %s: %s", knee.WindowColumn, k.Verdict.WindowLabel(), "skip", k.Key, k.Skipped)
	}
	return k.Verdict.WindowLine(k.Key)
}

// Tally counts the judged keys by the three rules, over every key and
// apart by where their windows came from.
type Tally struct {
	knee.Tally
	Windows knee.WindowTally
}

// Lines are the counts lines: over every key, then, when a key was
// judged, by window provenance.
func (t Tally) Lines() []string {
	if t.Keys == 0 {
		return []string{t.Tally.String()}
	}
	return []string{t.Tally.String(), t.Windows.String()}
}

// Judge judges each key of o in turn and reports it to each as soon as
// it is judged; the tally counts the judged keys.
func Judge(ctx context.Context, o Options, each func(Key)) (Tally, error) {
	var t Tally
	windows := map[string]string{}
	for _, s := range o.Windows {
		windows[s.Key] = s.Provenance
	}
	if st, err := os.Stat(o.Dir); err != nil {
		return t, usage.Errorf("OUT_DIR: %w (give the directory holding a discovery per key, OUT_DIR/KEY)", err)
	} else if !st.IsDir() {
		return t, usage.Errorf("%s is not a directory: want the directory holding a discovery per key (OUT_DIR/KEY)", o.Dir)
	}
	seen := map[string]bool{}
	for _, key := range o.Keys {
		if seen[key] {
			continue
		}
		seen[key] = true
		k, err := judgeKey(ctx, o, key)
		if err != nil {
			return t, fmt.Errorf("%s: %w", key, err)
		}
		k.Verdict.Window = windows[key]
		if k.Skipped == "" {
			t.Add(k.Verdict)
			t.Windows.Add(k.Verdict)
		}
		each(k)
	}
	return t, nil
}

// plannedArm is one arm of a key as the matrix plans it: its identity,
// its official concurrencies (ascending, distinct) and the row of its
// highest one, which the frontier point is planned from.
type plannedArm struct {
	id    result.Identity
	concs []int
	top   *matrix.Row
}

// plannedArms groups the key's single-node agentic rows into arms, in
// the matrix's order.
func plannedArms(g *matrix.Generator, key string) ([]*plannedArm, error) {
	rows, _, err := g.AgenticRows([]string{key}, nil, matrix.EvalOptions{NoEvals: true})
	if ke, ok := errors.AsType[*matrix.KeyError](err); ok {
		return nil, &usage.Error{Err: ke}
	}
	if err != nil {
		return nil, err
	}
	var arms []*plannedArm
	by := map[string]*plannedArm{}
	for _, r := range rows {
		if r.Kind != matrix.AgenticSingleNode {
			continue
		}
		id := result.RowIdentity(r)
		a := by[id.ArmKey()]
		if a == nil {
			a = &plannedArm{id: id}
			by[id.ArmKey()] = a
			arms = append(arms, a)
		}
		if !slices.Contains(a.concs, r.Conc) {
			a.concs = append(a.concs, r.Conc)
		}
		if a.top == nil || r.Conc >= a.top.Conc {
			a.top = r
		}
	}
	for _, a := range arms {
		slices.Sort(a.concs)
	}
	return arms, nil
}

// readError is a discovery that cannot be read (a result file cut
// short, a directory that is not there): a usage error, as sweep knees
// and sweep report say of it, unless ctx ended the read.
func readError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return err
	}
	return &usage.Error{Err: err}
}

// judgeKey judges one key's discovery.
func judgeKey(ctx context.Context, o Options, key string) (Key, error) {
	planned, err := plannedArms(o.Generator, key)
	if err != nil {
		return Key{}, err
	}
	if len(planned) == 0 {
		return Key{Key: key, Skipped: "no single-node agentic arm (multi-node and disaggregated keys are not judged)"}, nil
	}
	dir := filepath.Join(o.Dir, key)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return Key{Key: key, Skipped: "no discovery in " + dir}, nil
	}
	// A discovery linked into OUT_DIR is read where it lies: the walk
	// of its result files does not follow a link.
	dir, err = filepath.EvalSymlinks(dir)
	if err != nil {
		return Key{}, err
	}
	measured, err := knee.Read(ctx, dir)
	if err != nil {
		return Key{}, readError(ctx, err)
	}
	if _, err := os.Stat(filepath.Join(dir, campaign.JournalFile)); len(measured) == 0 && errors.Is(err, fs.ErrNotExist) {
		return Key{Key: key, Skipped: "no discovery in " + dir + ": neither a sweep journal nor a result"}, nil
	}
	chosen, err := discoveryOf(dir, measured)
	if err != nil {
		return Key{}, readError(ctx, err)
	}
	if !slices.ContainsFunc(planned, func(a *plannedArm) bool { return chosen.has(a.id) }) {
		return Key{Key: key, Skipped: fmt.Sprintf("none of its %s is in the discovery in %s (its journal records %s)",
			plural.Count(len(planned), "arm", "arms"), dir, chosen.ranLabel())}, nil
	}
	analysed := map[string]*knee.Result{}
	for _, a := range measured {
		analysed[a.Identity.ArmKey()] = knee.Analyze(a, knee.Options{})
	}
	windows := make([]knee.Window, len(planned))
	byName := map[string]*plannedArm{}
	for i, a := range planned {
		d := chosen.arms[a.id.ArmKey()]
		d.Adaptive = chosen.adaptive
		d.Absent = !chosen.has(a.id)
		for _, c := range chosen.plans.NotPlanned(a.id, a.concs) {
			if !slices.Contains(d.Skipped, c) {
				d.Skipped = append(d.Skipped, c)
			}
		}
		if chosen.unplaced > 0 {
			d.Unfinished = slices.Concat(d.Unfinished, withoutResult(a.concs, measured, a.id, d.Skipped))
		}
		windows[i] = knee.WindowOf(a.id.Parallelism(), analysed[a.id.ArmKey()], a.concs, d)
		byName[windows[i].Arm] = a
	}
	beyond := func(w knee.Window, conc int) (knee.WindowPoint, bool, error) {
		a := byName[w.Arm]
		simulated := true
		if r := analysed[a.id.ArmKey()]; r != nil {
			simulated = r.Arm.Simulated
		}
		return frontierPoint(ctx, o, filepath.Join(o.Dir, key+".frontier", pointDirName(a.id, conc)), a, conc, simulated)
	}
	if chosen.unplaced > 0 {
		// Points the journal places on no arm: JudgeKey's own check sees
		// only the windows.
		v, _ := knee.UnfinishedVerdict(windows, chosen.unplaced)
		return Key{Key: key, Verdict: v}, nil
	}
	v, err := knee.JudgeKey(windows, beyond)
	return Key{Key: key, Verdict: v}, err
}

// pointDirName names an arm's frontier point's directory:
// "tp8-ep8-dpa-kv-dram-c16".
func pointDirName(id result.Identity, conc int) string {
	name := strings.NewReplacer(" ", "-", ":", "-").Replace(id.Parallelism())
	return fmt.Sprintf("%s-c%d", name, conc)
}

// frontierPoint is arm a's point at conc from dir: the result there, or,
// when asked to and the arm is simulated, the point run into dir first.
func frontierPoint(ctx context.Context, o Options, dir string, a *plannedArm, conc int, simulated bool) (knee.WindowPoint, bool, error) {
	p, ok, err := readPoint(ctx, dir, a.id, conc)
	if err != nil || ok || !o.RunFrontier || !simulated {
		return p, ok, err
	}
	row := a.top.AtConc(conc)
	row.StampFingerprint()
	req := o.Point
	req.Row, req.Out = row, dir
	req.Key = point.Key{ConfigKey: row.ConfigKey, TP: row.TP, EP: row.EP, DPAttn: row.DPAttn, Conc: conc, KVOffloading: row.KVOffloading}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return knee.WindowPoint{}, false, err
	}
	runErr := point.Run(ctx, &req)
	if runErr != nil && ctx.Err() != nil {
		return knee.WindowPoint{}, false, runErr
	}
	p, ok, err = readPoint(ctx, dir, a.id, conc)
	if err != nil || ok || runErr == nil {
		return p, ok, err
	}
	// The point failed before it wrote a result: a failed point.
	fmt.Fprintf(o.Point.Stderr, "frontier point %s: %v\n", dir, runErr)
	return knee.WindowPoint{Conc: conc, Failed: true}, true, nil
}

// readPoint reads the arm's result at conc under dir (ok false when
// there is none).
func readPoint(ctx context.Context, dir string, id result.Identity, conc int) (knee.WindowPoint, bool, error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return knee.WindowPoint{}, false, nil
	}
	arms, err := knee.Read(ctx, dir)
	if err != nil {
		return knee.WindowPoint{}, false, err
	}
	for _, a := range arms {
		if a.Identity.ArmKey() != id.ArmKey() || !slices.ContainsFunc(a.Samples, func(s knee.Sample) bool { return s.Conc == conc }) {
			continue
		}
		w := knee.WindowOf(id.Parallelism(), knee.Analyze(a, knee.Options{}), []int{conc}, knee.Discovery{})
		return w.Points[0], true, nil
	}
	return knee.WindowPoint{}, false, nil
}

// discovery is how a discovery directory's sweep chose its points and
// how far it got, as its journal records it (campaign.ReadCoverage).
type discovery struct {
	adaptive bool
	// arms holds per arm (result.Identity.ArmKey) the concurrencies
	// adaptive discovery recorded as skipped and those not finished.
	arms map[string]knee.Discovery
	// unplaced counts the points not finished that the journal places
	// on no arm (a journal written before its start recorded the arms):
	// each official point without a result may be one of them, and is
	// read as not finished.
	unplaced int
	// ran holds (by result.Identity.ArmKey) the arms the journal's start
	// records, the discovery's own, with their labels; nil when it
	// records none (no journal, or one written before it recorded the
	// arms): such a discovery is read as having every arm of its key.
	ran map[string]string
	// plans are the concurrencies the journal's start plans for each of
	// its arms; an official one it does not plan (a discovery with
	// --conc-list: campaign.Plans.NotPlanned) is not measured, not failed.
	plans campaign.Plans
}

// has reports whether arm id is in the discovery: one its journal
// records, or any when it records none.
func (d discovery) has(id result.Identity) bool {
	if d.ran == nil {
		return true
	}
	_, ok := d.ran[id.ArmKey()]
	return ok
}

// ranLabel names the arms the discovery ran: "1 arm: qwen3.5 mi325x
// sglang fp8 mtp tp4 ep4".
func (d discovery) ranLabel() string {
	labels := slices.Sorted(maps.Values(d.ran))
	return fmt.Sprintf("%s: %s", plural.Count(len(labels), "arm", "arms"), strings.Join(labels, ", "))
}

// withoutResult returns the concurrencies of concs at which arm id has no
// result in measured (usable or not), skipped ones left out: where a
// discovery whose journal places its unfinished points on no arm may
// not have got to yet.
func withoutResult(concs []int, measured []*knee.Arm, id result.Identity, skipped []int) []int {
	var out []int
	for _, c := range concs {
		has := slices.ContainsFunc(measured, func(a *knee.Arm) bool {
			return a.Identity.ArmKey() == id.ArmKey() && slices.ContainsFunc(a.Samples, func(s knee.Sample) bool { return s.Conc == c })
		})
		if !has && !slices.Contains(skipped, c) {
			out = append(out, c)
		}
	}
	return out
}

// discoveryOf reads how the sweep in dir chose its points: a directory
// without a journal (result files gathered by hand, InferenceX's own) is
// read as a full, finished discovery: an official point without a
// result there is failed, never guessed to be skipped or still to run.
// A point is tied to its arm through the arm's identity the sweep's
// start records, else through the results the journal records for the
// same arm number: the identity their files carry (measured, read from
// dir).
func discoveryOf(dir string, measured []*knee.Arm) (discovery, error) {
	d := discovery{arms: map[string]knee.Discovery{}}
	c, err := campaign.ReadCoverage(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return d, err
	}
	d.adaptive = c.Adaptive
	if len(c.Arms) > 0 {
		d.ran = map[string]string{}
		for _, id := range c.Arms {
			d.ran[id.ArmKey()] = id.Label()
		}
	}
	d.plans = c.Plans()
	armOf := func(arm int) string {
		if id, ok := c.ArmOf(dir, arm, measured); ok {
			return id.ArmKey()
		}
		return ""
	}
	for _, r := range c.Skipped {
		k := armOf(r.Arm)
		if k == "" {
			// No result of the arm to say which it is: its official
			// points read as failed, as without a journal.
			continue
		}
		a := d.arms[k]
		a.Skipped = append(a.Skipped, r.Conc)
		d.arms[k] = a
	}
	for _, r := range c.Unfinished {
		k := armOf(r.Arm)
		if k == "" || r.Conc == 0 {
			d.unplaced++
			continue
		}
		a := d.arms[k]
		a.Unfinished = append(a.Unfinished, r.Conc)
		d.arms[k] = a
	}
	return d, nil
}
