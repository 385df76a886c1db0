package simengine

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"sweep/configs"
	"sweep/recipes/schema"
)

// honoured lists, per engine, the flags the simulator reads, by the
// canonical name of the engine's flag schema (recipes/schema): exactly
// the names ConfigFromArgs looks up. Spellings and value types are the
// schema's business.
func honoured(e configs.Engine) []string {
	switch e {
	case configs.SGLang:
		return []string{
			"--model-path", "--served-model-name", "--host", "--port",
			"--tp-size", "--dp-size", "--pp-size", "--ep-size", "--enable-dp-attention",
			"--max-running-requests", "--mem-fraction-static", "--max-total-tokens", "--page-size",
			"--chunked-prefill-size", "--context-length", "--disable-radix-cache",
			"--enable-metrics", "--enable-cache-report", "--stream-interval", "--decode-log-interval",
			"--skip-server-warmup", "--kv-cache-dtype", "--attention-backend", "--swa-full-tokens-ratio",
			"--enable-hierarchical-cache", "--hicache-ratio", "--hicache-size", "--hicache-write-policy",
			"--disaggregation-mode", "--disaggregation-transfer-backend", "--disaggregation-decode-enable-radix-cache",
			"--speculative-algorithm", "--speculative-num-steps", "--speculative-eagle-topk", "--speculative-num-draft-tokens",
		}
	case configs.VLLM:
		return []string{
			"--model", "--served-model-name", "--host", "--port",
			"--tensor-parallel-size", "--data-parallel-size", "--pipeline-parallel-size", "--enable-expert-parallel",
			"--max-num-seqs", "--gpu-memory-utilization", "--cpu-offload-gb", "--block-size", "--max-num-batched-tokens",
			"--max-model-len", "--enable-prefix-caching", "--kv-cache-dtype", "--kv-transfer-config",
			"--speculative-config", "--spec-method", "--spec-tokens",
		}
	}
	return nil
}

// HonouredFlags lists the flags of the engine's command line that shape
// the simulation, by canonical name, sorted. Every other flag the
// engine's schema accepts is accepted and has no effect.
func HonouredFlags(e configs.Engine) []string {
	out := slices.Clone(honoured(e))
	slices.Sort(out)
	return out
}

// ErrNoProgram is returned by ParseCommand for an argv that starts with a
// flag when ParseOptions.Engine does not name the engine.
var ErrNoProgram = errors.New("the engine command has no program, so the engine must be named")

// ParseOptions say how ParseCommand reads an engine command line.
type ParseOptions struct {
	// Engine is required when the argv has no program (it starts with a
	// flag); with a program it is ignored.
	Engine configs.Engine
	// Schema is the flag schema ref, TOOL@VERSION or TOOL; "" means the
	// engine's default schema.
	Schema string
	// Lenient turns the schema's complaints about flags the simulator
	// does not read (unknown or removed flags, stray tokens, bad values
	// or rule violations of other flags) into Command.Ignored, for an
	// engine version newer than any schema. Problems with the honoured
	// flags are still errors.
	Lenient bool
	// Unchecked are flags the plan passes without a schema check (a flag
	// newer than the schema; recipes.Point.Escapes): they are accepted with
	// their number of values (len(Values)) and reported as warnings.
	Unchecked []schema.Escape
}

// Command is an engine command line read with the engine's flag schema.
type Command struct {
	Engine configs.Engine
	Parsed *schema.Parsed
	// Flags gives the simulator typed access to Parsed.
	Flags Lookup
	// Warnings are the schema's warnings (deprecated flags and the like).
	Warnings []*schema.Error
	// Ignored are the problems ParseOptions.Lenient let through.
	Ignored []*schema.Error
}

// ParseCommand reads a full engine command line
// ("python3 -m sglang.launch_server --model-path X ...",
// "sglang serve --model-path X ...", "vllm serve MODEL ...", or only the
// flags when o.Engine is set) with the engine's flag schema from the
// embedded catalog, so the argv is accepted or rejected as the real
// engine's argparse would. A rejected argv gives an error that wraps the
// schema's *schema.Error problems.
func ParseCommand(argv []string, o ParseOptions) (*Command, error) {
	var engine configs.Engine
	rest := argv
	if len(argv) > 0 && strings.HasPrefix(argv[0], "-") {
		if err := engine.Set(string(o.Engine)); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNoProgram, err)
		}
		if engine == configs.VLLM {
			rest = append([]string{"serve"}, argv...)
		}
	} else {
		var err error
		if engine, rest, err = SplitProgram(argv); err != nil {
			return nil, err
		}
	}
	ref := o.Schema
	if ref == "" {
		ref = string(engine)
	}
	cat, err := schema.Embedded()
	if err != nil {
		return nil, fmt.Errorf("flag schemas: %w", err)
	}
	s, err := cat.Resolve(ref)
	if err != nil {
		return nil, fmt.Errorf("flag schema %q: %w", ref, err)
	}
	if s.Tool != string(engine) {
		return nil, fmt.Errorf("schema %s is not a %s schema", s.ID(), engine)
	}
	p, err := s.Parse(rest, schema.AllowUnchecked(o.Unchecked...))
	if p.Help {
		return nil, fmt.Errorf("%s --help is not a server: use sweep sim-engine --help", engine)
	}
	c := &Command{Engine: engine, Parsed: p, Flags: LookupFromParsed(p), Warnings: p.Warnings}
	if err != nil && o.Lenient {
		var kept []error
		for _, e := range schema.Problems(err) {
			if ignorable(s, engine, e) {
				c.Ignored = append(c.Ignored, e)
			} else {
				kept = append(kept, e)
			}
		}
		err = errors.Join(kept...)
	}
	if err != nil {
		return nil, fmt.Errorf("engine argv rejected by %s: %w", s.ID(), err)
	}
	return c, nil
}

// ignorable reports whether a lenient parse may drop the problem: it
// concerns no flag the simulator reads and does not break the command
// itself.
func ignorable(s *schema.Schema, e configs.Engine, p *schema.Error) bool {
	switch p.Kind {
	case schema.BadCommand:
		return false
	case schema.UnknownFlag, schema.RemovedFlag, schema.StrayToken:
		return true
	}
	if p.Flag == "" {
		return true // a rule over several flags; the simulator checks what it reads
	}
	for _, name := range honoured(e) {
		if f, ok := s.Lookup(name); ok && f.Name == p.Flag {
			return false
		}
	}
	return true
}

// LookupFromParsed adapts an engine argv parsed with its flag schema to
// Lookup. A JSON flag's String is its document re-encoded.
func LookupFromParsed(p *schema.Parsed) Lookup { return parsedLookup{p} }

type parsedLookup struct{ p *schema.Parsed }

func (l parsedLookup) String(name string) (string, bool) {
	if v, ok := l.p.Get(name); ok && v.Flag.Type == schema.JSON {
		b, err := json.Marshal(v.JSON)
		return string(b), err == nil
	}
	return l.p.String(name)
}

func (l parsedLookup) Int(name string) (int, bool) {
	n, ok := l.p.Int(name)
	return int(n), ok
}

func (l parsedLookup) Float(name string) (float64, bool) { return l.p.Float(name) }
func (l parsedLookup) Bool(name string) (bool, bool)     { return l.p.Bool(name) }

// SplitProgram recognises the engine from the program part of a command
// line and returns the rest as that engine's own parser reads it: the
// flags for SGLang, "serve MODEL flags..." for vLLM.
func SplitProgram(argv []string) (configs.Engine, []string, error) {
	if len(argv) == 0 {
		return "", nil, fmt.Errorf("empty engine command: want python3 -m sglang.launch_server ... or vllm serve MODEL ...")
	}
	prog := filepath.Base(argv[0])
	switch {
	case strings.HasPrefix(prog, "python") && len(argv) >= 3 && argv[1] == "-m":
		switch argv[2] {
		case "sglang.launch_server":
			return configs.SGLang, argv[3:], nil
		case "vllm.entrypoints.openai.api_server", // flags only
			"vllm.entrypoints.grpc_server": // vLLM's gRPC worker behind SMG: the engine's flags, model by --model
			return configs.VLLM, append([]string{"serve"}, argv[3:]...), nil
		}
		return "", nil, fmt.Errorf("engine command %q: unknown module %q, want sglang.launch_server, vllm.entrypoints.openai.api_server or vllm.entrypoints.grpc_server", strings.Join(argv[:3], " "), argv[2])
	case prog == "sglang" && len(argv) >= 2 && argv[1] == "serve":
		return configs.SGLang, argv[2:], nil
	case prog == "vllm" && len(argv) >= 2 && argv[1] == "serve":
		return configs.VLLM, argv[1:], nil
	}
	return "", nil, fmt.Errorf("engine command %q: want python3 -m sglang.launch_server ..., sglang serve ... or vllm serve MODEL ...", argv[0])
}
