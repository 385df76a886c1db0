// Package leg runs one accuracy A/B leg (configs/ab/<name>.yaml) end to
// end: each arm's server comes up through sweep/run, bfcl generate and
// bfcl evaluate run once per replicate in a fresh BFCL_PROJECT_ROOT
// against it, the server stops, and abgate.Compare decides:
//
//	l, err := configs.DefaultABLeg("minimaxm3-mi325x-smg") // or configs.LoadABLeg(file)
//	p, err := leg.NewPlan(l, leg.PlanOptions{Generator: g, Dir: out})
//	res, err := leg.Run(ctx, p, leg.Options{Dir: out, Setup: setup, Server: serverOpts})
//	// res.Report.Verdict: PASS, REGRESSION, INCONCLUSIVE or INCOMPLETE;
//	// res.Output: report.md and report.json (with each arm's server as
//	// planned: image, model, argv, parsers), written atomically, and their
//	// content, also when err is a *leg.NotWrittenError (a full disk)
//
// NewPlan checks every command before anything starts: each arm's engine
// argv with the leg's parsers against the engine's flag schema, and each
// router's argv against the schema of the program it starts (SMG's
// launch_router); a problem is a *configs.Error at the leg's key that set
// the token, with the closest known flag or parser name. It also checks
// that the leg is one model served two ways: both arms serve the same
// model (a config-key arm its key's model and precision, a direct arm its
// model-path), a router's --model-path is its engine's model, and a
// config-key arm's key runs on the leg's GPU (serves.go).
//
// leg.Calibrate is the A/A run: arm A against itself for a number of
// identical runs, its flip rates and false alarms written to
// calibration.json, which Options.Calibration hands to the comparison.
//
// Before each replicate, the model's registry entry is written
// (abgate.Registry: a static sitecustomize.py first on bfcl's PYTHONPATH)
// and verified with "bfcl models".
//
// Run marks its directory with LegFile (what each arm's replicates are
// made with, Made) and records each attempt at a replicate beside its
// root (Replicate, RecordFile); run again on the directory, it keeps the
// replicates that ended complete, whose roots the report accepts and that
// were made as the leg makes them now, runs the others (and those whose
// record does not read) in fresh roots (AttemptRoot) against a server
// whose earlier run's files it first moves aside to <arm>/server.<n>,
// moves the earlier report aside to report.md.<n> before it starts work,
// and refuses a directory made otherwise (CheckResume), naming each
// difference. It holds the directory's lock (run.LockOutDir) while it
// runs: a second Run or Calibrate on it is refused before anything
// starts.
// Interrupted, it writes an INCOMPLETE report drawn from those records
// alone (one abgate.ReasonInterrupted problem naming the complete and
// incomplete replicates and how to resume) at the interrupt and again once
// the arms have stopped, and returns it with an *InterruptedError.
//
// Arms run one after the other on the same ports. A stage that fails (a
// server that never becomes ready, a model bfcl does not list, bfcl
// exiting non-zero or running past its timeout, a server that dies before
// bfcl generate ends, run.Server.Died) is an abgate Problem (run-failed),
// so the leg is INCOMPLETE, never a silent zero; after a server died, the
// arm's later replicates are not run (run-failed). With
// Options.Simulate the engine is sweep's simulated one and `sweep
// sim-bfcl` stands in for bfcl, playing each arm's seeded case model
// (the leg's simulate section).
package leg

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sweep/recipes/models"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/recipes"
	"sweep/sweep/abgate"
	"sweep/sweep/abgate/bfclsim"
)

// Plan is a leg resolved against the master configs.
type Plan struct {
	Leg        *configs.ABLeg
	Categories []abgate.Category
	Arms       [2]Arm
	// Warnings are printed before the run (vLLM's temperature clamp).
	Warnings []string
}

// NewPlan resolves the leg's categories and arms. Problems with the leg
// file are *configs.Error at the leg's positions.
func NewPlan(l *configs.ABLeg, o PlanOptions) (*Plan, error) {
	if o.Generator == nil {
		return nil, errors.New("leg plan: no matrix generator")
	}
	port := o.Port
	if port == nil {
		port = func() (int, error) { return recipes.DefaultPort, nil }
	}
	p := &Plan{Leg: l}
	var errs []error
	for i, name := range l.Categories {
		cs, err := abgate.ExpandCategories([]string{name})
		if err != nil {
			pos := l.CategoriesPos[i]
			errs = append(errs, &configs.Error{File: pos.File, Line: pos.Line, Col: pos.Col, Key: fmt.Sprintf("categories[%d]", i), Msg: err.Error()})
			continue
		}
		for _, c := range cs {
			if !slices.ContainsFunc(p.Categories, func(x abgate.Category) bool { return x.Name == c.Name }) {
				p.Categories = append(p.Categories, c)
			}
		}
	}
	sim := l.Simulate
	if sim == nil {
		sim = &configs.ABSimulate{Seed: 1, Accuracy: 0.85}
	}
	// Concurrent arms serve at once: each needs ports of its own (public,
	// engine behind a router at +1).
	used := map[int]bool{}
	armPort := func() (int, error) {
		p, err := port()
		if err != nil || l.Mode != configs.ABConcurrent {
			return p, err
		}
		for used[p] || used[recipes.EnginePortBehindRouter(p)] {
			p += 2
		}
		used[p], used[recipes.EnginePortBehindRouter(p)] = true, true
		return p, nil
	}
	planned := 0
	for i, a := range l.Arms {
		arm, err := planArm(l, a, o, armPort)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		planned++
		errs = append(errs, checkArmServes(l, a, arm)...)
		arm.Sim = bfclsim.Arm{Model: l.Model, Seed: sim.Seed, Name: a.Label, Accuracy: sim.Accuracy, Flip: sim.Flip,
			InfraErrors: sim.InfraErrors[i], CategoryOffset: sim.CategoryOffset[i]}.WithOffset(sim.Offset[i])
		p.Arms[i] = arm
		if f := arm.Point.Row.Framework.Facts(); f.MinTemperature > 0 {
			if w := (abgate.BFCL{Temperature: l.Sampling.Temperature}).TemperatureWarning(f.Display, f.MinTemperature); w != "" {
				p.Warnings = append(p.Warnings, fmt.Sprintf("%s: sampling.temperature: arm %s (%s): %s", l.Sampling.TemperaturePos, a.Label, f.Display, w))
			}
		}
	}
	if planned == len(l.Arms) {
		errs = append(errs, checkSameModel(l, p.Arms))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}

// planArm finds the arm's matrix row, plans its point and applies the
// leg's parsers and router.
func planArm(l *configs.ABLeg, a configs.ABArm, o PlanOptions, port func() (int, error)) (Arm, error) {
	if a.Engine != "" {
		return planDirect(l, a, o, port, GPU(l))
	}
	g := o.Generator
	if _, ok := g.Masters.Lookup(a.ConfigKey); !ok {
		return Arm{}, armError(a, ".config-key", "%q is not a master config key (list them with: sweep matrix test-config --config-keys '%s*')", a.ConfigKey, strings.SplitN(a.ConfigKey, "-", 2)[0])
	}
	rows, err := g.TestConfig(matrix.TestConfigOptions{ConfigKeys: []string{a.ConfigKey}, ScenarioTypes: []string{"agentic-coding"}, EvalOptions: matrix.EvalOptions{NoEvals: true}})
	if err != nil {
		return Arm{}, armError(a, ".config-key", "%v", err)
	}
	row, err := selectRow(a, rows)
	if err != nil {
		return Arm{}, err
	}
	row.StampFingerprint()
	if a.Router != nil && row.DPAttn {
		return Arm{}, armError(a, ".router", "the point has DP attention, so its recipe already runs a router in front of the engine; remove router or pick a point without dp-attn")
	}
	public, enginePort, err := armPorts(a, port)
	if err != nil {
		return Arm{}, err
	}
	points, err := recipes.Plan(matrix.Matrix{row}, recipes.PlanOptions{Catalog: models.Builtin(), Runners: g.Runners, Port: enginePort, ResultDir: ServerDir(o.Dir, a.Label)})
	if err != nil {
		return Arm{}, armError(a, "", "plan the arm's server: %v", err)
	}
	pt := points[0]
	pt.Engine.Argv = applyParsers(pt.Engine.Argv, a.Parsers, pt.Row.Framework.Facts().AutoToolChoiceFlag)
	if a.Parsers.ToolCall != nil || a.Parsers.Reasoning != nil {
		// The recipe's own command was checked when it was built; the
		// leg's parsers are checked here.
		var version string // the recipe's pinned release, whose schema built its command
		if rc, ok := models.Builtin().Recipe(pt.Recipe); ok {
			version = rc.EngineVersion
		}
		if err := checkEngine(a, pt.Row.Framework, version, pt.Engine.Argv, pt.Escapes); err != nil {
			return Arm{}, err
		}
	}
	if a.Router != nil {
		pt.Router, pt.RouterHealthURL = routerCommand(a.Router, "http://127.0.0.1:"+strconv.Itoa(enginePort), public, o.Simulate)
		pt.Port = public
		if err := checkRouter(a, pt.Router.Argv); err != nil {
			return Arm{}, err
		}
	}
	name := a.Name
	if name == "" {
		name = a.Label
	}
	return Arm{Label: a.Label, Name: name, Point: pt, BaseURL: "http://127.0.0.1:" + strconv.Itoa(pt.Port) + "/v1"}, nil
}

// selectRow is the single-node row of rows that arm a names, picked by
// the rule sweep run picks a point by (matrix.Matrix.SelectPoint): rows
// there that differ in KV offloading, with no kv-offloading on the arm,
// are refused at the arm listing them with the kv-offloading that picks
// each; no row there is refused listing the key's points.
func selectRow(a configs.ABArm, rows matrix.Matrix) (*matrix.Row, error) {
	var single matrix.Matrix
	for _, r := range rows {
		if r.Kind == matrix.AgenticSingleNode {
			single = append(single, r)
		}
	}
	if len(single) == 0 {
		return nil, armError(a, ".config-key", "%s has no single-node agentic point to serve an arm", a.ConfigKey)
	}
	point := fmt.Sprintf("tp %d, ep %d, dp-attn %t, conc %d", a.TP, a.EP, a.DPAttn, a.Conc)
	row, err := single.SelectPoint(func(r *matrix.Row) bool {
		return r.TP == a.TP && r.EP == a.EP && r.DPAttn == a.DPAttn && r.Conc == a.Conc
	}, a.KVOffloading)
	if c, ok := errors.AsType[*matrix.KVChoiceError](err); ok {
		picks := make([]string, len(c.Rows))
		for i, r := range c.Rows {
			picks[i] = fmt.Sprintf("kv-offloading: %s (%s)", r.KVOffloading, r.ExpName)
		}
		return nil, armError(a, "", "%s has %d points %s that differ in KV offloading; add to the arm the kv-offloading that picks one of them: %s",
			a.ConfigKey, len(c.Rows), point, strings.Join(picks, ", "))
	}
	if err != nil || row != nil {
		return row, err
	}
	if a.KVOffloading != "" {
		point += ", kv-offloading " + a.KVOffloading
	}
	kv := single.KVPicks(func(r *matrix.Row) string { return fmt.Sprint(r.TP, r.EP, r.DPAttn, r.Conc) })
	have := make([]string, len(single))
	for i, r := range single {
		have[i] = fmt.Sprintf("{tp: %d, ep: %d, dp-attn: %t, conc: %d", r.TP, r.EP, r.DPAttn, r.Conc)
		if m := kv(r); m != "" {
			have[i] += ", kv-offloading: " + m
		}
		have[i] += "}"
	}
	return nil, armError(a, "", "%s has no point %s; pick one of: %s", a.ConfigKey, point, strings.Join(have, ", "))
}
