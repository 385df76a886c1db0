package leg

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"sweep/configs"
	"sweep/recipes/schema"
)

// origin says where the flags of a checked command came from in the leg
// file, so that a problem is reported at the key that set the token: its
// parsers, one of its args, else the mapping Key names.
type origin struct {
	Key     string      // "arms.b.router"
	Pos     configs.Pos // where Key's mapping is
	Parsers configs.ABParsers
	Args    []string
	ArgsPos []configs.Pos
}

// engineOrigin is where an arm's engine flags come from: the arm's
// parsers and args.
func engineOrigin(a configs.ABArm) origin {
	return origin{Key: "arms." + a.Label, Pos: a.Pos, Parsers: a.Parsers, Args: a.Args, ArgsPos: a.ArgsPos}
}

// routerOrigin is where the flags of an arm's router come from.
func routerOrigin(a configs.ABArm) origin {
	r := a.Router
	return origin{Key: "arms." + a.Label + ".router", Pos: r.Pos, Parsers: r.Parsers, Args: r.Args, ArgsPos: r.ArgsPos}
}

// engineOwned are the flags an arm's args may not give: the arm's keys
// (model-path, served-model-name, tp, parsers) or the runner (host,
// port) set them.
var engineOwned = []string{"--host", "--port", "--served-model-name", "--model", "--model-path", "--tensor-parallel-size", "-tp", "--tp-size", "--tp", "--tool-call-parser", "--reasoning-parser", "--enable-auto-tool-choice"}

// routerOwned are the flags a router's args may not give: the runner
// (ports, worker URL) or router.parsers set them.
var routerOwned = []string{"--worker-urls", "--host", "--port", "--prometheus-port", "--tool-call-parser", "--reasoning-parser"}

// ownedArgs refuses each of o's args that gives one of the flags owned,
// read as the tool reads it (its schema s: any spelling, '_' for '-'
// where it takes that, an abbreviation where it allows them, as SMG's
// and SGLang's argparse do), at that arg; setBy says what sets the flag
// instead. A flag the schema does not know is matched as spelt.
func (o origin) ownedArgs(s *schema.Schema, owned []string, setBy string) []*configs.Error {
	args := schema.ReadArgv(o.Args, schema.ArgvOptions{Schema: s, Abbrev: true})
	byAt := map[int]string{} // arg index → the owned flag it gives
	for _, own := range owned {
		for _, f := range args.All(own) {
			if _, seen := byAt[f.At]; !seen {
				byAt[f.At] = own
			}
		}
	}
	var out []*configs.Error
	for _, f := range args.Flags {
		own, ok := byAt[f.At]
		if !ok || f.At >= len(o.ArgsPos) {
			continue
		}
		what := f.Spelling
		if f.Flag != nil {
			own = f.Flag.Name
		}
		if f.Spelling != own {
			what = fmt.Sprintf("%s (%s reads it as %s)", f.Spelling, s.ID(), own)
		}
		pos := o.ArgsPos[f.At]
		out = append(out, &configs.Error{File: pos.File, Line: pos.Line, Col: pos.Col, Key: fmt.Sprintf("%s.args[%d]", o.Key, f.At),
			Msg: fmt.Sprintf("%s is set %s; remove it", what, setBy)})
	}
	return out
}

// checkArgv parses argv (program included) with the engine's flag
// schema s.
func checkArgv(s *schema.Schema, tool configs.Engine, argv []string, escapes []schema.Escape) error {
	rest := argv[3:] // python3 -m MODULE flags...
	if argv[0] == string(tool) {
		rest = argv[1:] // vllm serve MODEL flags...
	} else {
		rest = append(slices.Clone(tool.Facts().SchemaPrefix), rest...)
	}
	_, err := s.Parse(rest, schema.AllowUnchecked(escapes...))
	return err
}

// checkEngine checks an arm's engine command against the engine's flag
// schema at version (its recipe's release; "" for the default: a direct
// arm names no release), and its args for flags the arm's keys or the
// runner set (engineOwned); a refusal is a *configs.Error per problem,
// at the parser or arg of the leg that set it.
func checkEngine(a configs.ABArm, tool configs.Engine, version string, argv []string, escapes []schema.Escape) error {
	s, err := schema.Load(string(tool), version)
	if err != nil {
		return err
	}
	o := engineOrigin(a)
	owned := o.ownedArgs(s, engineOwned, "from the arm's keys (model-path, served-model-name, tp, parsers) or by the runner (host, port)")
	err = checkArgv(s, tool, argv, escapes)
	if err == nil && len(owned) == 0 {
		return nil
	}
	ref := string(tool)
	if version != "" {
		ref += "@" + version
	}
	return refusals(err, owned, o, s, fmt.Sprintf("the engine command %q", strings.Join(argv, " ")), ref)
}

// routerSchema is the flag schema of the program r's argv starts (SMG's
// python3 -m smg.launch_router); a router sweep has no schema for is
// refused, since nothing could check its flags or parser names.
func routerSchema(a configs.ABArm) (*schema.Schema, error) {
	cat, err := schema.Embedded()
	if err != nil {
		return nil, err
	}
	r := a.Router
	for _, c := range cat.All() {
		if c.Default && c.Program != "" && len(r.Argv) > 0 && len(c.TrimProgram(r.Argv)) == 0 {
			return c, nil
		}
	}
	fix := "add its flag schema under recipes/schema/data"
	if smg, err := cat.Get("smg", ""); err == nil {
		fix = fmt.Sprintf("start SMG's router as [%s] (schema %s), or %s", strings.Join(strings.Fields(smg.Program), ", "), smg.ID(), fix)
	}
	return nil, &configs.Error{File: r.ArgvPos.File, Line: r.ArgvPos.Line, Col: r.ArgvPos.Col, Key: "arms." + a.Label + ".router.argv",
		Msg: fmt.Sprintf("%q has no flag schema, so its flags and parser names cannot be checked: %s", strings.Join(r.Argv, " "), fix)}
}

// checkRouter checks the command of an arm's router against the flag
// schema of its program (routerSchema), and its args for flags the
// runner or router.parsers set (routerOwned).
func checkRouter(a configs.ABArm, argv []string) error {
	s, err := routerSchema(a)
	if err != nil {
		return err
	}
	o := routerOrigin(a)
	owned := o.ownedArgs(s, routerOwned, "by the runner (ports, worker URL) or by router.parsers")
	_, err = s.Parse(argv[len(a.Router.Argv):])
	if err == nil && len(owned) == 0 {
		return nil
	}
	return refusals(err, owned, o, s, fmt.Sprintf("the router command %q", strings.Join(argv, " ")), s.ID())
}

// refusals turns the problems of a schema parse (err, nil when it
// passed) into *configs.Error at the leg keys that set the offending
// tokens, each with the fix, and joins them with the refusals already
// made (more), in the file's order; s is the schema that parsed the
// command, what names the command and ref the schema ("smg@v1.9.0-...",
// "vllm").
func refusals(err error, more []*configs.Error, o origin, s *schema.Schema, what, ref string) error {
	errs := slices.Clone(more)
	probs := schema.Problems(err)
	if err != nil && len(probs) == 0 {
		errs = append(errs, &configs.Error{File: o.Pos.File, Line: o.Pos.Line, Col: o.Pos.Col, Key: o.Key, Msg: fmt.Sprintf("%s: %v", what, err)})
	}
	for _, p := range probs {
		key, pos := o.locate(s, p)
		fix := "see `sweep schema show " + ref + "`"
		switch p.Kind {
		case schema.UnknownFlag, schema.RemovedFlag:
			fix = "fix or remove the flag (`sweep schema show " + ref + "` lists them)"
		case schema.BadChoice:
			fix = "use a name it accepts (`sweep schema show " + ref + " " + p.Flag + "` lists them)"
		}
		msg := fmt.Sprintf("%v: %s", p, fix)
		if key == o.Key {
			msg = fmt.Sprintf("%v, in %s: %s", p, what, fix) // not set by one key: show the command
		}
		errs = append(errs, &configs.Error{File: pos.File, Line: pos.Line, Col: pos.Col, Key: key, Msg: msg})
	}
	slices.SortStableFunc(errs, func(x, y *configs.Error) int { return cmp.Or(cmp.Compare(x.Line, y.Line), cmp.Compare(x.Col, y.Col)) })
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return errors.Join(out...)
}

// locate finds the key and position that set the token of problem p: the
// parser value for a parser flag, the arg for a flag, value or stray
// token among the args (read as the tool reads them, with its schema s),
// else the command's mapping.
func (o origin) locate(s *schema.Schema, p *schema.Error) (string, configs.Pos) {
	for _, ps := range []struct {
		flag, key string
		val       *string
		pos       configs.Pos
	}{{"--tool-call-parser", "tool-call", o.Parsers.ToolCall, o.Parsers.ToolCallPos}, {"--reasoning-parser", "reasoning", o.Parsers.Reasoning, o.Parsers.ReasoningPos}} {
		if p.Flag == ps.flag && ps.val != nil && ps.pos.Line > 0 {
			return o.Key + ".parsers." + ps.key, ps.pos
		}
	}
	at := schema.ReadArgv(o.Args, schema.ArgvOptions{Schema: s, Abbrev: true}).TokenAt(cmp.Or(p.Spelling, p.Flag), p.Value)
	if at < 0 || at >= len(o.ArgsPos) {
		return o.Key, o.Pos
	}
	return fmt.Sprintf("%s.args[%d]", o.Key, at), o.ArgsPos[at]
}
