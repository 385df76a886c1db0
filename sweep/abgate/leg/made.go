package leg

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"sweep/internal/redact"
	"sweep/recipes"
	"sweep/recipes/schema"
	"sweep/sweep/abgate"
	"sweep/sweep/abgate/bfclsim"
	"sweep/sweep/run"
)

// Made is what a replicate of an arm is made with: the leg's arm, its
// server as the report records it (abgate.ArmServer: config key, recipe,
// image, model, engine and router argv), the servers' environment, the
// bfcl commands (model, categories, sampling) and, simulated, the case
// model bfcl plays (its seed, accuracy and offsets). The arm's own ports,
// which a simulated leg draws afresh on every run, are written by name
// ({port}, {engine-port}, {router-metrics-port}), and secrets are
// redacted, so two runs of the same leg make the same Made. A resumed
// `sweep ab run` keeps a replicate only when it was made as the leg would
// make it now (madeDiff).
type Made struct {
	Leg       string           `json:"leg"`
	Model     string           `json:"model"`
	Simulated bool             `json:"simulated"`
	Server    abgate.ArmServer `json:"server"`
	// EngineEnv and RouterEnv are the variables the plan sets for the
	// engine and the router.
	EngineEnv map[string]string `json:"engine_env,omitempty"`
	RouterEnv map[string]string `json:"router_env,omitempty"`
	// Generate and Evaluate are the bfcl commands' arguments after the
	// program (which a simulated leg's build of sweep names).
	Generate []string `json:"generate"`
	Evaluate []string `json:"evaluate"`
	// Sim is the simulated bfcl's case model of the arm (nil: real bfcl).
	Sim *bfclsim.Arm `json:"sim,omitempty"`
}

// bfclOf is the bfcl run of one replicate of arm against its server, in
// root (the program is Options.BFCL's, put in front of its arguments).
func bfclOf(p *Plan, arm *Arm, root string) abgate.BFCL {
	return abgate.BFCL{Model: p.Leg.Model, Categories: p.Categories, Root: root, BaseURL: arm.BaseURL,
		Temperature: p.Leg.Sampling.Temperature, NumThreads: p.Leg.Sampling.NumThreads, PartialEval: p.Leg.PartialEval}
}

// madeOf is how a replicate of arm is made now (simulated: by sweep's
// simulated engine and bfcl).
func madeOf(p *Plan, arm *Arm, simulated bool) Made {
	ports := armPortNames(arm.Point)
	srv := armServer(p.Leg.Model, arm)
	srv.EngineArgv = redact.Argv(ports.argv(srv.EngineArgv))
	if srv.RouterArgv != nil {
		srv.RouterArgv = redact.Argv(ports.argv(srv.RouterArgv))
	}
	b := bfclOf(p, arm, "")
	m := Made{Leg: p.Leg.Name, Model: p.Leg.Model, Simulated: simulated, Server: srv,
		EngineEnv: ports.env(arm.Point.Engine.Env), Generate: b.Generate()[1:], Evaluate: b.Evaluate()[1:]}
	if arm.Point.Router != nil {
		m.RouterEnv = ports.env(arm.Point.Router.Env)
	}
	if simulated {
		sim := arm.Sim
		m.Sim = &sim
	}
	return m
}

// portNames names an arm's own ports: its public port, its engine's
// behind a router and the router's metrics port.
type portNames map[string]string

func armPortNames(pt recipes.Point) portNames {
	names := portNames{}
	if pt.Port > 0 {
		names[strconv.Itoa(recipes.RouterMetricsPort(pt.Port))] = "{router-metrics-port}"
	}
	if pt.EnginePort > 0 {
		names[strconv.Itoa(pt.EnginePort)] = "{engine-port}"
	}
	if pt.Port > 0 {
		names[strconv.Itoa(pt.Port)] = "{port}"
	}
	return names
}

// hostPort is a URL's host and port.
var hostPort = regexp.MustCompile(`://[^/\s:@]+:[0-9]+`)

// url writes the arm's ports in s's URLs by name.
func (n portNames) url(s string) string {
	return hostPort.ReplaceAllStringFunc(s, func(m string) string {
		i := strings.LastIndexByte(m, ':')
		if name, ok := n[m[i+1:]]; ok {
			return m[:i+1] + name
		}
		return m
	})
}

// argv writes the arm's ports by name in argv: the value of a flag
// named for a port (--port, --prometheus-port, "--port=N", or an
// abbreviation the tool accepts, "--po N": read as schema.ReadArgv reads
// the tool's argv, schema.OfProgram) and the port of a URL.
func (n portNames) argv(argv []string) []string {
	out := make([]string, len(argv))
	for i, tok := range argv {
		out[i] = n.url(tok)
	}
	for _, f := range schema.ReadArgv(argv, schema.ArgvOptions{Schema: schema.OfProgram(argv), Abbrev: true}).Flags {
		name := n[f.Value()]
		switch {
		case name == "" || !strings.HasSuffix(f.Name, "port"):
		case f.Attached:
			out[f.At] = f.Spelling + "=" + name
		default:
			out[f.ValueAt()] = name
		}
	}
	return out
}

// env is env with the arm's ports in its URLs written by name, secrets
// redacted (nil for none).
func (n portNames) env(env map[string]string) map[string]string {
	if len(env) == 0 {
		return nil
	}
	out := redact.Env(env)
	for k, v := range out {
		out[k] = n.url(v)
	}
	return out
}

// madeDiff lists how a replicate made as was differs from one made as
// now, each as "what: recorded, now new"; none when they are the same.
func madeDiff(was, now Made) []string {
	var diffs []string
	add := func(what, a, b string) {
		if a != b {
			diffs = append(diffs, fmt.Sprintf("%s: %s, now %s", what, orNone(a), orNone(b)))
		}
	}
	add("leg", was.Leg, now.Leg)
	add("model", was.Model, now.Model)
	kind := map[bool]string{true: "simulated", false: "real"}
	add("engines and bfcl", kind[was.Simulated], kind[now.Simulated])
	ws, ns := was.Server, now.Server
	add("arm name", ws.Name, ns.Name)
	add("config key", ws.ConfigKey, ns.ConfigKey)
	add("precision", ws.Precision, ns.Precision)
	add("recipe", ws.Recipe, ns.Recipe)
	add("image", ws.Image, ns.Image)
	add("model path", ws.ModelPath, ns.ModelPath)
	add("served model", ws.ServedModel, ns.ServedModel)
	diffs = append(diffs, argvDiff("engine", ws.EngineArgv, ns.EngineArgv)...)
	diffs = append(diffs, argvDiff("router", ws.RouterArgv, ns.RouterArgv)...)
	diffs = append(diffs, envDiff("engine", was.EngineEnv, now.EngineEnv)...)
	diffs = append(diffs, envDiff("router", was.RouterEnv, now.RouterEnv)...)
	generate := argvDiff("bfcl generate", was.Generate, now.Generate)
	diffs = append(diffs, generate...)
	for _, d := range argvDiff("bfcl evaluate", was.Evaluate, now.Evaluate) {
		// A flag both commands take (--model, --test-category) is named once.
		if !slices.Contains(generate, strings.Replace(d, "bfcl evaluate", "bfcl generate", 1)) {
			diffs = append(diffs, d)
		}
	}
	if was.Simulated == now.Simulated {
		for _, d := range mapDiff(jsonFields(was.Sim), jsonFields(now.Sim)) {
			add("simulated bfcl's "+d[0], d[1], d[2])
		}
	}
	return diffs
}

// argvDiff lists how command what's argv differs: flag by flag
// (run.FlagDiff), else as a whole when its positional words differ. Two
// argvs that give the same flags the same values and the same positional
// words do not differ, however their flags are spelt ("--model-path=X"
// and "--model-path X").
func argvDiff(what string, was, now []string) []string {
	switch {
	case slices.Equal(was, now):
		return nil
	case was == nil || now == nil:
		return []string{fmt.Sprintf("%s: %s, now %s", what, argvText(was), argvText(now))}
	}
	var diffs []string
	for _, d := range run.FlagDiff(was, now) {
		diffs = append(diffs, fmt.Sprintf("%s flag %s: %s, now %s", what, d[0], d[1], d[2]))
	}
	if len(diffs) == 0 && !slices.Equal(positionals(was), positionals(now)) {
		diffs = append(diffs, fmt.Sprintf("%s command: %s, now %s", what, argvText(was), argvText(now)))
	}
	return diffs
}

// positionals is argv's positional words (the program, a subcommand, a
// model), read as run.FlagDiff reads its flags: with the schema of the
// program argv starts with (schema.OfProgram).
func positionals(argv []string) []string {
	a := schema.ReadArgv(argv, schema.ArgvOptions{Schema: schema.OfProgram(argv)})
	words := make([]string, len(a.Positionals))
	for i, at := range a.Positionals {
		words[i] = argv[at]
	}
	return words
}

func argvText(argv []string) string {
	if argv == nil {
		return "none"
	}
	return strings.Join(argv, " ")
}

// envDiff lists the variables of command what's environment that differ.
func envDiff(what string, was, now map[string]string) []string {
	var diffs []string
	for _, d := range mapDiff(was, now) {
		diffs = append(diffs, fmt.Sprintf("%s environment %s: %s, now %s", what, d[0], d[1], d[2]))
	}
	return diffs
}

// mapDiff lists the keys whose values differ: {key, a's, b's}, sorted
// by key, a key one side lacks "absent".
func mapDiff(a, b map[string]string) [][3]string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out [][3]string
	for _, k := range keys {
		va, oka := a[k]
		vb, okb := b[k]
		if oka != okb || va != vb {
			out = append(out, [3]string{k, valueOr(va, oka), valueOr(vb, okb)})
		}
	}
	return out
}

func valueOr(v string, ok bool) string {
	if !ok {
		return "absent"
	}
	return v
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// jsonFields is v's JSON object as field: value text (nil for nil).
func jsonFields(v *bfclsim.Arm) map[string]string {
	if v == nil {
		return nil
	}
	data, _ := json.Marshal(v) // plain fields: cannot fail
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(data, &fields)
	out := make(map[string]string, len(fields))
	for k, raw := range fields {
		out[k] = string(raw)
	}
	return out
}

// apiModel is the model name bfcl sends to the arm: the engine's served
// model name, else the registry name without its "-FC" suffix.
func apiModel(registry string, arm *Arm) string {
	if names := run.ServedModels(arm.Point.Engine.Argv); len(names) > 0 {
		return names[0]
	}
	return strings.TrimSuffix(registry, "-FC")
}

// armServer is what arm's server ran, from its planned point: the
// report's record of the arm (registry is the leg's BFCL model name).
func armServer(registry string, arm *Arm) abgate.ArmServer {
	pt := arm.Point
	s := abgate.ArmServer{Arm: arm.Label, Name: arm.Name, ConfigKey: pt.Row.ConfigKey, Recipe: pt.Recipe, Image: pt.Row.Image,
		ModelPath: pt.Row.Model, ServedModel: apiModel(registry, arm), EngineArgv: slices.Clone(pt.Engine.Argv), EngineParsers: parsersOf(pt.Engine.Argv)}
	if s.ConfigKey != "" {
		s.Precision = pt.Row.Precision
	}
	if pt.Router != nil {
		s.RouterArgv = slices.Clone(pt.Router.Argv)
		ps := parsersOf(pt.Router.Argv)
		s.RouterParsers = &ps
	}
	return s
}

// parsersOf is the parser flags of argv, read with the schema of the
// program it starts with (schema.OfProgram).
func parsersOf(argv []string) abgate.Parsers {
	a := schema.ReadArgv(argv, schema.ArgvOptions{Schema: schema.OfProgram(argv)})
	tool, _ := a.Find("--tool-call-parser")
	reasoning, _ := a.Find("--reasoning-parser")
	return abgate.Parsers{ToolCall: tool.Value(), Reasoning: reasoning.Value()}
}
