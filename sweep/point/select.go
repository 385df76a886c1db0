package point

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/internal/inputfile"
	"sweep/internal/usage"
	"sweep/recipes"
	"sweep/recipes/models"
	"sweep/recipes/schema"
)

// Key names a point of the matrix: its master config key (a plain key,
// or an fnmatch pattern matching exactly one), its layout and its
// concurrency; Eval picks the eval points: those InferenceX evaluates by
// default (the highest concurrency per model and runner), or with
// AllEvals every agentic point, as its all-evals label selects.
// KVOffloading (configs.KVOffloadModes: "none", "dram"; "" any) picks
// among the rows of one layout and concurrency that differ in KV
// offloading (a key with a kv:none and a kv:dram search space at one
// concurrency): without it such a choice is refused, listing the rows
// (a key with one row there needs none).
type Key struct {
	ConfigKey    string
	TP, EP       int
	DPAttn       bool
	Conc         int
	Eval         bool
	AllEvals     bool
	KVOffloading string
}

// ResolveKey resolves a config key as every command resolves keys
// (matrix.ResolveKeys: a plain key must exist, a key holding '*' or '?' is
// an fnmatch pattern) and requires exactly one key, since a run is one
// point.
func ResolveKey(masters *configs.Masters, pattern string) (string, error) {
	ms, err := matrix.ResolveKeys(masters, []string{pattern})
	if err != nil {
		return "", usage.Errorf("--config-key: %w", err)
	}
	if len(ms) > 1 {
		keys := make([]string, len(ms))
		for i, m := range ms {
			keys[i] = m.Key
		}
		return "", usage.Errorf("--config-key %q matches %d config keys; a run is one point, name one of:\n  %s", pattern, len(ms), strings.Join(keys, "\n  "))
	}
	return ms[0].Key, nil
}

// matrixError makes invalid generator options a usage error.
func matrixError(err error) error {
	if errors.Is(err, matrix.ErrInvalidOptions) {
		return &usage.Error{Err: err}
	}
	return err
}

// SelectRow finds the single-node matrix row of the point, or lists the
// points the key has.
func (k Key) SelectRow(g *matrix.Generator) (*matrix.Row, error) {
	evals := matrix.EvalOptions{NoEvals: !k.Eval, EvalsOnly: k.Eval, AllEvals: k.Eval && k.AllEvals}
	key, err := ResolveKey(g.Masters, k.ConfigKey)
	if err != nil {
		return nil, err
	}
	if err := configs.CheckHardware(g.Masters, g.Runners, key); err != nil {
		return nil, fmt.Errorf("%s cannot run on its runner:\n%w", key, err)
	}
	rows, err := g.TestConfig(matrix.TestConfigOptions{ConfigKeys: []string{key}, ScenarioTypes: []string{"agentic-coding"}, EvalOptions: evals})
	if err != nil {
		return nil, matrixError(err)
	}
	if err := k.checkKVOffloading(); err != nil {
		return nil, err
	}
	var single matrix.Matrix
	for _, r := range rows {
		if r.Kind == matrix.AgenticSingleNode {
			single = append(single, r)
		}
	}
	at := func(r *matrix.Row) bool {
		return r.TP == k.TP && r.EP == k.EP && r.DPAttn == k.DPAttn && r.Conc == k.Conc
	}
	row, err := single.SelectPoint(at, k.KVOffloading)
	if row != nil || err != nil {
		return k.picked(key, row, err)
	}
	if err := k.otherMode(single, at, key, fmt.Sprintf("tp%d ep%d dp-attn=%t conc%d", k.TP, k.EP, k.DPAttn, k.Conc)); err != nil {
		return nil, err
	}
	what := "points"
	if k.Eval {
		what = "eval points"
	}
	if len(single) == 0 {
		return nil, usage.Errorf("%s has no single-node agentic %s", key, what)
	}
	kv := k.kvPicks(single, func(r *matrix.Row) string { return fmt.Sprint(r.TP, r.EP, r.DPAttn, r.Conc) })
	have := make([]string, len(single))
	for i, r := range single {
		have[i] = pointFlags(r.TP, r.EP, r.DPAttn, r.Conc) + kvFlag(kv(r))
	}
	return nil, usage.Errorf("%s has no point tp%d ep%d dp-attn=%t conc%d%s%s; its %s are:\n  %s",
		key, k.TP, k.EP, k.DPAttn, k.Conc, k.kvWhat(), k.noModeAt(single), what, strings.Join(have, "\n  "))
}

// otherMode is the refusal of a KVOffloading the point (at, named point)
// has no row of while it has rows of another: the point is there, of that
// KV offloading only, and the fix names it. nil when k asks for no mode or
// the point is not in rows at all.
func (k Key) otherMode(rows matrix.Matrix, at func(*matrix.Row) bool, key, point string) error {
	if k.KVOffloading == "" {
		return nil
	}
	row, err := rows.SelectPoint(at, "")
	if row == nil || err != nil {
		return nil // no row there (or rows of both modes, so one of k's)
	}
	return usage.Refusef("%s's point %s is a kv-offloading %s point only, not %s (%s): drop --kv-offloading, or give --kv-offloading %s",
		key, point, row.KVOffloading, k.KVOffloading, row.ExpName, row.KVOffloading)
}

// kvPicks is the KV offloading each row of rows is listed with when k
// has no point there: with k's KVOffloading given, every row's (what
// differs may be the mode asked for), else only where its point needs one
// (matrix.Matrix.KVPicks).
func (k Key) kvPicks(rows matrix.Matrix, point func(*matrix.Row) string) func(*matrix.Row) string {
	if k.KVOffloading != "" {
		return func(r *matrix.Row) string { return r.KVOffloading }
	}
	return rows.KVPicks(point)
}

// noModeAt says, after the point k names, that rows have no row of k's
// KVOffloading at all ("" when k asks for none or some row has it).
func (k Key) noModeAt(rows matrix.Matrix) string {
	if k.KVOffloading == "" || slices.ContainsFunc(rows, func(r *matrix.Row) bool { return r.KVOffloading == k.KVOffloading }) {
		return ""
	}
	return fmt.Sprintf(" (it has no kv-offloading %s point at all: drop --kv-offloading)", k.KVOffloading)
}

// pointFlags are the flags of sweep run that name a point's layout and
// concurrency.
func pointFlags(tp, ep int, dpAttn bool, conc int) string {
	return fmt.Sprintf("--tp %d --ep %d%s --conc %d", tp, ep, map[bool]string{true: " --dp-attn"}[dpAttn], conc)
}

// checkKVOffloading refuses a KVOffloading that is no kv-offloading mode.
func (k Key) checkKVOffloading() error {
	if err := CheckKVOffloading(k.KVOffloading); err != nil {
		return &usage.Error{Err: err}
	}
	return nil
}

// CheckKVOffloading refuses a --kv-offloading (sweep run's, sweep plan's)
// that is no kv-offloading mode (configs.KVOffloadModes); "" (any) is one.
func CheckKVOffloading(kv string) error {
	if kv != "" && !slices.Contains(configs.KVOffloadModes(), kv) {
		return fmt.Errorf("--kv-offloading %q: want one of %s (a search space's kv-offloading)", kv, strings.Join(configs.KVOffloadModes(), ", "))
	}
	return nil
}

// kvWhat is the KV offloading k asks for as the point's name ends with
// it, "" for any.
func (k Key) kvWhat() string {
	if k.KVOffloading == "" {
		return ""
	}
	return " kv-offloading=" + k.KVOffloading
}

// kvFlag is the --kv-offloading that picks a row of KV offloading mode
// where its point needs one (matrix.Matrix.KVPicks), "" where mode is "".
func kvFlag(mode string) string {
	if mode == "" {
		return ""
	}
	return " --kv-offloading " + mode
}

// picked is SelectPoint's answer for k: the row, stamped, or for rows
// that differ in KV offloading a usage refusal listing them with the
// --kv-offloading that picks each.
func (k Key) picked(key string, row *matrix.Row, err error) (*matrix.Row, error) {
	if c, ok := errors.AsType[*matrix.KVChoiceError](err); ok {
		lines := make([]string, len(c.Rows))
		for i, r := range c.Rows {
			lines[i] = fmt.Sprintf("--kv-offloading %s  (%s)", r.KVOffloading, r.ExpName)
		}
		return nil, usage.Refusef("%s has %d points tp%d ep%d dp-attn=%t conc%d that differ in KV offloading: add the --kv-offloading that picks one of them:\n  %s",
			key, len(c.Rows), k.TP, k.EP, k.DPAttn, k.Conc, strings.Join(lines, "\n  "))
	}
	if err != nil {
		return nil, err
	}
	row.StampFingerprint()
	return row, nil
}

// MultiNodeRows are the multi-node agentic rows of the key (none for a
// single-node key).
func (k Key) MultiNodeRows(g *matrix.Generator) (matrix.Matrix, error) {
	key, err := ResolveKey(g.Masters, k.ConfigKey)
	if err != nil {
		return nil, err
	}
	rows, err := g.TestConfig(matrix.TestConfigOptions{ConfigKeys: []string{key}, ScenarioTypes: []string{"agentic-coding"}, EvalOptions: matrix.EvalOptions{NoEvals: true}})
	if err != nil {
		return nil, matrixError(err)
	}
	return slices.DeleteFunc(rows, func(r *matrix.Row) bool { return r.Kind != matrix.AgenticMultiNode }), nil
}

// SelectMultiNodeRow is the row of a multi-node key whose prefill layout
// is the key's TP, EP and DP-attention and whose concurrencies hold its
// concurrency.
func (k Key) SelectMultiNodeRow(rows matrix.Matrix) (*matrix.Row, error) {
	if err := k.checkKVOffloading(); err != nil {
		return nil, err
	}
	at := func(r *matrix.Row) bool {
		p := r.ArmLayout()
		return p.TP == k.TP && p.EP == k.EP && p.DPAttn == k.DPAttn && slices.Contains(r.Concs, k.Conc)
	}
	row, err := rows.SelectPoint(at, k.KVOffloading)
	if row != nil || err != nil {
		return k.picked(rows[0].ConfigKey, row, err)
	}
	if err := k.otherMode(rows, at, rows[0].ConfigKey, fmt.Sprintf("with prefill tp%d ep%d dp-attn=%t at conc %d", k.TP, k.EP, k.DPAttn, k.Conc)); err != nil {
		return nil, err
	}
	var have []string
	kv := k.kvPicks(rows, func(r *matrix.Row) string { p := r.ArmLayout(); return fmt.Sprint(p.TP, p.EP, p.DPAttn, r.Concs) })
	for _, r := range rows {
		p := r.ArmLayout()
		for _, c := range r.Concs {
			have = append(have, fmt.Sprintf("%s%s  (%s)", pointFlags(p.TP, p.EP, p.DPAttn, c), kvFlag(kv(r)), r.ExpName))
		}
	}
	return nil, usage.Errorf("%s has no multi-node point with prefill tp%d ep%d dp-attn=%t at conc %d%s%s; --tp, --ep and --dp-attn name the prefill workers' layout, and its points are:\n  %s",
		rows[0].ConfigKey, k.TP, k.EP, k.DPAttn, k.Conc, k.kvWhat(), k.noModeAt(rows), strings.Join(have, "\n  "))
}

// planOne plans row with po: invalid options are a usage error, any other
// planning error is behind "plan: ".
func planOne(row *matrix.Row, po recipes.PlanOptions) (*recipes.Point, error) {
	points, err := recipes.Plan(matrix.Matrix{row}, models.WithBuiltin(po))
	if err != nil {
		if errors.Is(err, recipes.ErrInvalidOptions) {
			return nil, &usage.Error{Err: err}
		}
		return nil, fmt.Errorf("plan: %w", err)
	}
	return &points[0], nil
}

// planWant is what a --plan file should be, ending its problems.
const planWant = "a planned point as `sweep plan --format json` prints it (an object, or an array of one)"

// ReadPlanFile reads one planned point: a JSON object, or an array of
// exactly one, as `sweep plan --format json` prints them, strictly
// (configs.DecodeJSON: a problem at its file:line:col). Its engine command
// must parse with its recipe's flag schema (the plan's escapes allowed),
// as planning checks it, and write nowhere outside the point's result
// directory (schema.Parsed.WritesOutside; run.FromPlan checks the
// client's). The plan's result directory must be out, since its commands
// write there. Every problem is a usage error.
func ReadPlanFile(path, out string) (*recipes.Point, error) {
	data, err := inputfile.Read(path, inputfile.SmallJSON)
	if err != nil {
		return nil, usage.Errorf("--plan: %w", err)
	}
	var points []recipes.Point
	var at []any // the JSON path of the point: [] for an object, [0] for an array of one
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '[' {
		at = []any{0}
		if err := configs.DecodeJSON(path, data, &points, planWant); err != nil {
			return nil, usage.Errorf("--plan: %w", err)
		}
	} else {
		var p recipes.Point
		if err := configs.DecodeJSON(path, data, &p, planWant); err != nil {
			return nil, usage.Errorf("--plan: %w", err)
		}
		points = append(points, p)
	}
	if len(points) != 1 {
		return nil, planCountError(path, points)
	}
	p := &points[0]
	if p.Row.Model == "" || len(p.Engine.Argv) == 0 {
		return nil, usage.Errorf("--plan %s: the point has no row or no engine command", path)
	}
	if filepath.Clean(p.ResultDir) != out {
		return nil, usage.Refusef("--plan %s writes into %s, not --out %s: plan it with --result-dir %s, or run it with --out %s", path, p.ResultDir, out, out, p.ResultDir)
	}
	if err := checkPlannedEngine(path, data, at, p); err != nil {
		return nil, err
	}
	if err := checkPlannedSidecars(path, data, at, p); err != nil {
		return nil, err
	}
	if err := checkPlannedGolden(path, p); err != nil {
		return nil, err
	}
	return p, nil
}

// planCountError refuses a --plan file of other than one point, listing
// its points (index, experiment, KV offloading) and the sweep plan
// filters that plan one: points of one layout and concurrency that differ
// only in KV offloading are told apart by --kv-offloading alone.
func planCountError(path string, points []recipes.Point) error {
	if len(points) == 0 {
		return usage.Refusef("--plan %s holds no point; give one: plan it with sweep plan --format json", path)
	}
	lines := make([]string, len(points))
	kvOnly := true
	for i, p := range points {
		r, r0 := p.Row, points[0].Row
		lines[i] = fmt.Sprintf("[%d] %s (tp%d ep%d conc%d kv-offloading %s)", i, r.ExpName, r.TP, r.EP, r.Conc, r.KVOffloading)
		kvOnly = kvOnly && r.TP == r0.TP && r.EP == r0.EP && r.DPAttn == r0.DPAttn && r.Conc == r0.Conc
	}
	fix := "plan one with sweep plan's --tp, --ep, --dp-attn, --conc and --kv-offloading filters"
	if kvOnly {
		fix = "they are one point's rows that differ in KV offloading: plan one with sweep plan --kv-offloading none or dram"
	}
	return usage.Refusef("--plan %s holds %d points; give one: %s, or pick one with jq '.[i]':\n  %s", path, len(points), fix, strings.Join(lines, "\n  "))
}

// checkPlannedGolden checks a plan file's golden acceptance length
// against its recipe's, as planning sets it: the golden the point's
// acceptance length is judged against, none for an eval point (real
// acceptance) or a recipe without speculative decoding. An edited
// golden_al (null on an MTP point read "golden n/a: no_golden", a point
// never judged) is refused naming both.
func checkPlannedGolden(path string, p *recipes.Point) error {
	rc, ok := models.Builtin().Recipe(p.Recipe)
	if !ok {
		return nil // checkPlannedEngine refused it
	}
	want, err := rc.GoldenAL(nil)
	if err != nil {
		return fmt.Errorf("--plan %s: recipe %s: %w", path, rc.Name, err)
	}
	if p.Eval != nil {
		want = nil
	}
	text := func(al *float64) string {
		if al == nil {
			return "null"
		}
		return strconv.FormatFloat(*al, 'g', -1, 64)
	}
	if (p.GoldenAL == nil) != (want == nil) || (want != nil && *p.GoldenAL != *want) {
		return usage.Refusef("--plan %s: golden_al %s, but recipe %s plans %s for this point: the point's acceptance length is judged against its recipe's golden; restore golden_al %s, or plan the point again (sweep plan --format json)",
			path, text(p.GoldenAL), rc.Name, text(want), text(want))
	}
	return nil
}

// checkPlannedEngine checks a plan file's engine command against the flag
// schema its recipe plans with (engine and version), as planning does: an
// edited plan's unknown flag or bad value (a parser name the engine does
// not register) is refused here, not by the engine at start-up. A path the
// command writes outside the point's result directory (the schema's
// write-path flags: SGLang's crash dumps, metrics files, traces;
// schema.Parsed.WritesOutside, the rule run.FromPlan holds the client's
// argv to) is refused too. Both name the line and column in data of the
// argv token at fault (the first problem's), the point being at the JSON
// path at.
func checkPlannedEngine(path string, data []byte, at []any, p *recipes.Point) error {
	rc, ok := models.Builtin().Recipe(p.Recipe)
	if !ok {
		return usage.Refusef("--plan %s: recipe %q: this sweep has no recipe of that name; plan the point again with this sweep (sweep plan --format json)", path, p.Recipe)
	}
	s, err := schema.Load(string(rc.Engine), rc.EngineVersion)
	if err != nil {
		return fmt.Errorf("--plan %s: recipe %s: %w", path, rc.Name, err)
	}
	argv := p.Engine.Argv
	rest := s.TrimProgram(argv)
	if len(rest) == len(argv) {
		return usage.Refusef("--plan %s: engine argv starts %q, not %s's program %q: want the engine command its recipe %s plans", path, argv[0], rc.Engine, s.Program, rc.Name)
	}
	// argvErrorf is a problem at argv[i] (the whole argv when i < 0).
	argvErrorf := func(i int, format string, a ...any) error {
		where, key := append(slices.Clone(at), "engine", "argv"), "engine.argv"
		if i >= 0 {
			where, key = append(where, i), fmt.Sprintf("%s[%d]", key, i)
		}
		return fmt.Errorf("--plan: %w", configs.JSONValueErrorf(path, data, where, key, format, a...))
	}
	parsed, err := s.Parse(rest, schema.AllowUnchecked(p.Escapes...))
	if err != nil {
		i := -1
		if probs := schema.Problems(err); len(probs) > 0 {
			i = argvToken(s, argv, cmp.Or(probs[0].Spelling, probs[0].Flag), probs[0].Value)
		}
		return usage.Refuse(argvErrorf(i, "engine command, checked with the %s %s flag schema of recipe %s:\n%v\nedit the plan's engine argv to flags the schema has (sweep schema show %s@%s), or plan the point again",
			rc.Engine, rc.EngineVersion, rc.Name, err, rc.Engine, rc.EngineVersion))
	}
	if out := parsed.WritesOutside(p.ResultDir); len(out) > 0 {
		w := out[0]
		return usage.Refuse(argvErrorf(argvToken(s, argv, w.Flag, w.Path),
			"engine command: %s %s writes outside the point's result directory %s: give it a path under %s, or plan the point again for its directory (sweep plan --format json --result-dir %s)",
			w.Flag, w.Path, p.ResultDir, p.ResultDir, p.ResultDir))
	}
	return nil
}

// checkPlannedSidecars checks a plan file's sidecar commands against the
// flag schema of their program (an LMCache server's), as planning does
// (recipes.CheckSidecar): an edited plan's unknown flag or bad value is refused
// here, not by the simulated engine at its start or the real server. The
// error names the sidecar and the line and column in data of the argv
// token at fault (the first problem's), the point being at the JSON path
// at. A program with no schema (mooncake_master) is not checked.
func checkPlannedSidecars(path string, data []byte, at []any, p *recipes.Point) error {
	for i, sc := range p.Sidecars {
		argv := sc.Command.Argv
		s, err := recipes.CheckSidecar(sc)
		if err == nil {
			continue
		}
		where, key := append(slices.Clone(at), "sidecars", i, "command", "argv"), fmt.Sprintf("sidecars[%d].command.argv", i)
		if probs := schema.Problems(err); len(probs) > 0 {
			if j := argvToken(s, argv, cmp.Or(probs[0].Spelling, probs[0].Flag), probs[0].Value); j >= 0 {
				where, key = append(where, j), fmt.Sprintf("%s[%d]", key, j)
			}
		}
		fix := fmt.Sprintf("edit the plan's sidecar argv to flags the schema has (sweep schema show %s), or plan the point again", s.ID())
		if !s.Complete {
			fix += fmt.Sprintf("; %s is partial, the flags sweep's recipes pass: a flag the server takes belongs in recipes/schema/data/%s.yaml", s.ID(), s.ID())
		}
		return usage.Refuse(fmt.Errorf("--plan: %w", configs.JSONValueErrorf(path, data, where, key,
			"sidecar %s's command, checked with the %s flag schema:\n%v\n%s", sc.Name, s.ID(), err, fix)))
	}
	return nil
}

// argvToken is the index in argv of the token a problem of flag and
// value stands at (schema.Argv.TokenAt: the token that gives the flag
// that value, else the flag's; a stray token when flag is ""), argv read
// as the engine reads it, with its schema s, so FLAG is any spelling of
// the flag, an argparse abbreviation included (a parse names the
// canonical flag); -1 when there is none.
func argvToken(s *schema.Schema, argv []string, flag, value string) int {
	return schema.ReadArgv(argv, schema.ArgvOptions{Schema: s, Abbrev: true}).TokenAt(flag, value)
}
