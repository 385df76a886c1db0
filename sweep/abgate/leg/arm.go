package leg

import (
	"fmt"
	"slices"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/recipes"
	"sweep/recipes/schema"
	"sweep/sweep/abgate/bfclsim"
)

// Arm is one planned arm: the recipe point its server runs (parsers and
// router applied) and the URL bfcl talks to.
type Arm struct {
	// Label is "a" or "b"; Name is the leg's name for it ("vllm").
	Label, Name string
	Point       recipes.Point
	// BaseURL is the OpenAI base URL of the arm (router if any), ".../v1".
	BaseURL string
	// Sim is the arm's case model for the simulated bfcl.
	Sim bfclsim.Arm
}

// PlanOptions tune NewPlan.
type PlanOptions struct {
	// Generator holds the master configs and runners.
	Generator *matrix.Generator
	// Port returns the public port of an arm (recipes.RouterPorts(p) must
	// be free); nil means recipes.DefaultPort for both (arms run one after
	// the other).
	Port func() (int, error)
	// Dir is the leg's output directory; each arm's server writes under
	// Dir/<label>/server.
	Dir string
	// Simulate plans for the simulated engine and router (the router's
	// health URL is /health, the only one the simulated router answers).
	Simulate bool
}

// armError is a problem of arm a at its mapping, or at its config-key
// value for key ".config-key".
func armError(a configs.ABArm, key, format string, args ...any) error {
	pos := a.Pos
	if key == ".config-key" && a.ConfigKeyPos.Line > 0 {
		pos = a.ConfigKeyPos
	}
	return &configs.Error{File: pos.File, Line: pos.Line, Col: pos.Col, Key: "arms." + a.Label + key, Msg: fmt.Sprintf(format, args...)}
}

// armPorts takes the arm's public port; its engine listens there, or one
// above behind the arm's router.
func armPorts(a configs.ABArm, port func() (int, error)) (public, engine int, err error) {
	if public, err = port(); err != nil {
		return 0, 0, err
	}
	if a.Router != nil {
		return public, recipes.EnginePortBehindRouter(public), nil
	}
	return public, public, nil
}

// applyParsers sets the parser flags of argv: a parser left nil keeps
// the flag as it is, configs.ABParserNone removes it, any other value
// replaces it or is appended. autoToolChoice, when set, is the flag the
// engine needs beside a tool-call parser (the engine table's
// AutoToolChoiceFlag: vLLM's --enable-auto-tool-choice). argv is read
// with the schema of the program it starts with (schema.OfProgram).
func applyParsers(argv []string, ps configs.ABParsers, autoToolChoice string) []string {
	read := func(argv []string) schema.Argv {
		return schema.ReadArgv(argv, schema.ArgvOptions{Schema: schema.OfProgram(argv)})
	}
	out := slices.Clone(argv)
	for _, f := range []struct {
		flag string
		val  *string
	}{{"--tool-call-parser", ps.ToolCall}, {"--reasoning-parser", ps.Reasoning}} {
		if f.val == nil {
			continue
		}
		out = read(out).Without(f.flag)
		if *f.val != configs.ABParserNone {
			out = append(out, f.flag, *f.val)
		}
	}
	if autoToolChoice != "" && ps.ToolCall != nil {
		a := read(out)
		_, has := a.Find("--tool-call-parser")
		out = a.Without(autoToolChoice)
		if has {
			out = append(out, autoToolChoice)
		}
	}
	return out
}
