package leg

import (
	"fmt"

	"sweep/configs"
	"sweep/recipes/schema"
)

// served is what a planned arm serves: the model its engine loads and,
// for a config-key arm, the precision of the key's matrix row (a
// directly declared arm names none), with the leg key that sets them.
type served struct {
	model, precision string
	key              string // "arms.b.config-key", "arms.b.model-path"
	pos              configs.Pos
	from             string // "config key K, fp8", "model-path"
}

// servedBy is what arm (planned from a) serves.
func servedBy(a configs.ABArm, arm Arm) served {
	row := arm.Point.Row
	if a.ConfigKey != "" {
		return served{model: row.Model, precision: row.Precision, key: "arms." + a.Label + ".config-key", pos: posOr(a.ConfigKeyPos, a.Pos),
			from: fmt.Sprintf("config key %s, %s", a.ConfigKey, row.Precision)}
	}
	return served{model: a.ModelPath, key: "arms." + a.Label + ".model-path", pos: posOr(a.ModelPathPos, a.Pos),
		from: "model-path"}
}

// posOr is p, or orElse when p was not recorded.
func posOr(p, orElse configs.Pos) configs.Pos {
	if p.Line > 0 {
		return p
	}
	return orElse
}

// checkArmServes checks what one planned arm serves against its leg: a
// config-key arm's key runs on the leg's hardware, and a router that
// loads a model (SMG's --model-path: its tokenizer and chat template)
// loads the one its engine serves.
func checkArmServes(l *configs.ABLeg, a configs.ABArm, arm Arm) []error {
	var errs []error
	s := servedBy(a, arm)
	if a.ConfigKey != "" {
		if keyGPU, legGPU := configs.GPUOfRunner(arm.Point.Row.Runner), GPU(l); keyGPU != legGPU {
			errs = append(errs, &configs.Error{File: s.pos.File, Line: s.pos.Line, Col: s.pos.Col, Key: s.key,
				Msg: fmt.Sprintf("config key %s runs on %s (%s), but the leg runs on %s (%s, runner at %s): pick a config key of %s, or move the leg to the key's runner",
					a.ConfigKey, arm.Point.Row.Runner, keyGPU, l.Runner, legGPU, l.RunnerPos, legGPU)})
		}
	}
	if a.Router == nil {
		return errs
	}
	rs, err := routerSchema(a)
	if err != nil {
		return errs // planning the arm refused it
	}
	// Read as the router reads its args: "--model-pa" is --model-path to
	// SMG's argparse.
	f, _ := schema.ReadArgv(a.Router.Args, schema.ArgvOptions{Schema: rs, Abbrev: true}).Find("--model-path")
	at, value := f.ValueAt(), f.Value()
	if at < 0 || value == s.model || at >= len(a.Router.ArgsPos) {
		return errs
	}
	pos := a.Router.ArgsPos[at]
	errs = append(errs, &configs.Error{File: pos.File, Line: pos.Line, Col: pos.Col, Key: fmt.Sprintf("arms.%s.router.args[%d]", a.Label, at),
		Msg: fmt.Sprintf("the router loads %s, but its engine serves %s (%s at %s): a router's --model-path is its engine's model; set it to %s",
			value, s.model, s.from, s.pos, s.model)})
	return errs
}

// checkSameModel refuses a leg whose arms serve different models (or
// precisions of one): an A/B leg is one model served two ways, and its
// verdict is reported under one model name. The refusal is at arm b's
// key.
func checkSameModel(l *configs.ABLeg, arms [2]Arm) error {
	a, b := servedBy(l.Arms[0], arms[0]), servedBy(l.Arms[1], arms[1])
	if a.model == b.model && (a.precision == "" || b.precision == "" || a.precision == b.precision) {
		return nil
	}
	want := a.model
	if a.precision != "" {
		want += " at " + a.precision
	}
	return &configs.Error{File: b.pos.File, Line: b.pos.Line, Col: b.pos.Col, Key: b.key,
		Msg: fmt.Sprintf("arm b serves %s (%s), arm a serves %s (%s at %s): an A/B leg compares one model served two ways; make arm b serve %s, or put the other model in a leg of its own",
			b.model, b.from, a.model, a.from, a.pos, want)}
}
