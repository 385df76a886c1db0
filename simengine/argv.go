package simengine

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// flagKind is how the fallback parser reads a flag's value.
type flagKind int

const (
	kindValue   flagKind = iota // takes one value
	kindBool                    // store_true: bare flag
	kindBoolOpt                 // BooleanOptionalAction: --x / --no-x
)

type flagDef struct {
	kind    flagKind
	aliases []string
}

// honoured lists, per engine, the flags the simulator reads, by canonical
// name (engine-flags.yaml), with their aliases. Every other flag is
// accepted and ignored by ParseFlags.
func honoured(e Engine) (map[string]flagDef, bool) {
	m, ok := map[Engine]map[string]flagDef{
		SGLang: {
			"--model-path":                   {aliases: []string{"--model"}},
			"--served-model-name":            {},
			"--host":                         {},
			"--port":                         {},
			"--tp-size":                      {aliases: []string{"--tensor-parallel-size", "--tp"}},
			"--dp-size":                      {aliases: []string{"--data-parallel-size", "--dp"}},
			"--pp-size":                      {aliases: []string{"--pipeline-parallel-size", "--pp"}},
			"--ep-size":                      {aliases: []string{"--expert-parallel-size", "--ep"}},
			"--enable-dp-attention":          {kind: kindBool},
			"--max-running-requests":         {},
			"--mem-fraction-static":          {},
			"--max-total-tokens":             {},
			"--page-size":                    {},
			"--chunked-prefill-size":         {},
			"--context-length":               {},
			"--disable-radix-cache":          {kind: kindBool},
			"--enable-metrics":               {kind: kindBool},
			"--enable-cache-report":          {kind: kindBool},
			"--stream-interval":              {},
			"--decode-log-interval":          {},
			"--skip-server-warmup":           {kind: kindBool},
			"--kv-cache-dtype":               {},
			"--speculative-algorithm":        {},
			"--speculative-num-steps":        {},
			"--speculative-eagle-topk":       {},
			"--speculative-num-draft-tokens": {},
		},
		VLLM: {
			"--model":                  {},
			"--served-model-name":      {},
			"--host":                   {},
			"--port":                   {},
			"--tensor-parallel-size":   {aliases: []string{"-tp"}},
			"--data-parallel-size":     {aliases: []string{"-dp"}},
			"--pipeline-parallel-size": {aliases: []string{"-pp"}},
			"--enable-expert-parallel": {kind: kindBoolOpt, aliases: []string{"-ep"}},
			"--max-num-seqs":           {},
			"--gpu-memory-utilization": {},
			"--block-size":             {},
			"--max-num-batched-tokens": {},
			"--max-model-len":          {},
			"--enable-prefix-caching":  {kind: kindBoolOpt},
			"--kv-cache-dtype":         {},
			"--speculative-config":     {aliases: []string{"-sc"}},
			"--spec-method":            {},
			"--spec-tokens":            {},
		},
	}[e]
	return m, ok
}

// Args is an engine argv parsed by the fallback parser; it implements
// Lookup. Values are kept as given and converted on lookup.
type Args struct {
	engine Engine
	values map[string]string // canonical name -> last value
	bools  map[string]bool
}

// ParseArgv parses a full engine command line:
// "python3 -m sglang.launch_server --model-path X ...",
// "sglang serve --model-path X ...", or "vllm serve MODEL ...". It reads
// only the flags the simulator honours and skips the rest (with their
// values), so a recipe's complete argv is accepted. The real flag schemas
// (recipes/schema) validate argv strictly; this parser does not.
func ParseArgv(argv []string) (Engine, *Args, error) {
	engine, rest, model, err := stripProgram(argv)
	if err != nil {
		return "", nil, err
	}
	a, err := ParseFlags(engine, rest)
	if err != nil {
		return "", nil, err
	}
	if model != "" {
		if _, ok := a.values["--model"]; !ok {
			a.values["--model"] = model
		}
	}
	return engine, a, nil
}

// SplitProgram recognises the engine from the program part of a command
// line and returns the rest as that engine's own parser reads it: the
// flags for SGLang, "serve MODEL flags..." for vLLM.
func SplitProgram(argv []string) (Engine, []string, error) {
	e, _, _, err := stripProgram(argv)
	if err != nil {
		return "", nil, err
	}
	if e == VLLM && filepath.Base(argv[0]) == "vllm" {
		return e, argv[1:], nil
	}
	if e == VLLM { // python3 -m vllm.entrypoints.openai.api_server: flags only
		return e, append([]string{"serve"}, argv[3:]...), nil
	}
	if filepath.Base(argv[0]) == "sglang" {
		return e, argv[2:], nil
	}
	return e, argv[3:], nil
}

func stripProgram(argv []string) (Engine, []string, string, error) {
	if len(argv) == 0 {
		return "", nil, "", fmt.Errorf("empty engine command: want python3 -m sglang.launch_server ... or vllm serve MODEL ...")
	}
	prog := filepath.Base(argv[0])
	switch {
	case strings.HasPrefix(prog, "python") && len(argv) >= 3 && argv[1] == "-m":
		switch argv[2] {
		case "sglang.launch_server":
			return SGLang, argv[3:], "", nil
		case "vllm.entrypoints.openai.api_server":
			return VLLM, argv[3:], "", nil
		}
		return "", nil, "", fmt.Errorf("engine command %q: unknown module %q, want sglang.launch_server or vllm.entrypoints.openai.api_server", strings.Join(argv[:3], " "), argv[2])
	case (prog == "sglang" || prog == "vllm") && len(argv) >= 2 && argv[1] == "serve":
		e, rest, model := Engine(prog), argv[2:], ""
		if e == VLLM && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
			model, rest = rest[0], rest[1:]
		}
		return e, rest, model, nil
	}
	return "", nil, "", fmt.Errorf("engine command %q: want python3 -m sglang.launch_server ..., sglang serve ... or vllm serve MODEL ...", argv[0])
}

// ParseFlags parses engine flags without the program prefix.
func ParseFlags(engine Engine, args []string) (*Args, error) {
	defs, ok := honoured(engine)
	if !ok {
		return nil, fmt.Errorf("engine %q: want one of sglang, vllm", engine)
	}
	names := map[string]string{} // spelling -> canonical
	for name, d := range defs {
		names[name] = name
		for _, al := range d.aliases {
			names[al] = name
		}
	}
	a := &Args{engine: engine, values: map[string]string{}, bools: map[string]bool{}}
	for i := 0; i < len(args); i++ {
		tok := args[i]
		if !strings.HasPrefix(tok, "-") || tok == "-" || tok == "--" {
			if engine == VLLM && i == 0 {
				a.values["--model"] = tok
				continue
			}
			return nil, fmt.Errorf("engine argv: unexpected argument %q at position %d", tok, i+1)
		}
		flag, inline, hasInline := strings.Cut(tok, "=")
		if engine == VLLM && strings.HasPrefix(flag, "--") {
			flag = "--" + strings.ReplaceAll(flag[2:], "_", "-")
		}
		negated := false
		canon, known := names[flag]
		if !known && strings.HasPrefix(flag, "--no-") {
			if c, ok := names["--"+flag[5:]]; ok && defs[c].kind == kindBoolOpt {
				canon, known, negated = c, true, true
			}
		}
		if !known {
			// Unknown flag: skip its values (every following token that is
			// not a flag; covers nargs="+" lists and JSON objects).
			if !hasInline {
				for i+1 < len(args) && !looksLikeFlag(args[i+1]) {
					i++
				}
			}
			continue
		}
		switch defs[canon].kind {
		case kindBool, kindBoolOpt:
			if hasInline {
				return nil, fmt.Errorf("engine argv: %s takes no value, got %q", flag, tok)
			}
			a.bools[canon] = !negated
		default:
			v := inline
			if !hasInline {
				if i+1 >= len(args) {
					return nil, fmt.Errorf("engine argv: %s needs a value", flag)
				}
				i++
				v = args[i]
			}
			a.values[canon] = v
		}
	}
	return a, nil
}

// looksLikeFlag reports whether tok starts a new option (negative numbers
// are values).
func looksLikeFlag(tok string) bool {
	if !strings.HasPrefix(tok, "-") || len(tok) < 2 {
		return false
	}
	_, err := strconv.ParseFloat(tok, 64)
	return err != nil
}

// String returns a flag's value as given.
func (a *Args) String(name string) (string, bool) {
	v, ok := a.values[name]
	return v, ok
}

// Int returns a flag's value as an integer. SGLang's human-readable sizes
// ("128k", "1m") are accepted. A value that does not parse reports false;
// use Validate to surface it.
func (a *Args) Int(name string) (int, bool) {
	v, ok := a.values[name]
	if !ok {
		return 0, false
	}
	n, err := parseSize(v)
	return n, err == nil
}

// Float returns a flag's value as a float.
func (a *Args) Float(name string) (float64, bool) {
	v, ok := a.values[name]
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	return f, err == nil
}

// Bool returns a boolean flag's value: true for a bare flag, false for a
// --no- form.
func (a *Args) Bool(name string) (bool, bool) {
	v, ok := a.bools[name]
	return v, ok
}

// Validate checks that every honoured numeric flag holds a number.
func (a *Args) Validate() error {
	for name, v := range a.values {
		switch name {
		case "--model-path", "--model", "--served-model-name", "--host", "--kv-cache-dtype",
			"--speculative-algorithm", "--speculative-config", "--spec-method":
			continue
		case "--mem-fraction-static", "--gpu-memory-utilization":
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				return fmt.Errorf("engine argv: %s %q: want a number", name, v)
			}
		default:
			if _, err := parseSize(v); err != nil {
				return fmt.Errorf("engine argv: %s %q: want an integer", name, v)
			}
		}
	}
	return nil
}

func parseSize(s string) (int, error) {
	// Human-readable sizes as vLLM reads them: k/m decimal, K/M binary.
	mult := 1
	if n := len(s); n > 1 {
		if m, ok := map[byte]int{'k': 1000, 'm': 1000000, 'K': 1024, 'M': 1024 * 1024}[s[n-1]]; ok {
			mult, s = m, s[:n-1]
		}
	}
	n, err := strconv.Atoi(s)
	return n * mult, err
}
