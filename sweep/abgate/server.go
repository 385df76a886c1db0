package abgate

import (
	"fmt"
	"strings"

	"sweep/recipes/schema"
)

// ArmServer is what one arm's server ran, as the leg runner launched it
// (sweep ab run), so that a report says which image, model, commands and
// parsers each verdict's arms used. sweep ab compare, which reads roots
// it did not make, has none.
type ArmServer struct {
	// Arm is "a" or "b"; Name is the leg's name for it ("vllm", "smg").
	Arm  string `json:"arm"`
	Name string `json:"name"`
	// ConfigKey and Precision are the master config key and precision of
	// a config-key arm ("" for an engine declared in the leg); Recipe is
	// the recipe its server ran ("ab-vllm" for a declared engine).
	ConfigKey string `json:"config_key,omitempty"`
	Precision string `json:"precision,omitempty"`
	Recipe    string `json:"recipe"`
	// Image is the container image of the engine ("" when none is named).
	Image string `json:"image"`
	// ModelPath is what the engine loads; ServedModel the name bfcl asks
	// the arm's server for.
	ModelPath   string `json:"model_path"`
	ServedModel string `json:"served_model"`
	// EngineArgv and RouterArgv are the commands started (RouterArgv nil
	// without a router in front).
	EngineArgv []string `json:"engine_argv"`
	RouterArgv []string `json:"router_argv,omitempty"`
	// EngineParsers and RouterParsers are the parser flags in those
	// commands ("" where a flag is absent).
	EngineParsers Parsers  `json:"engine_parsers"`
	RouterParsers *Parsers `json:"router_parsers,omitempty"`
	// NotStarted is set for an arm whose server the run never started (a
	// leg interrupted before the arm's turn): its commands are the ones
	// it would have run, ports by name ({port}), since none was used.
	NotStarted bool `json:"not_started,omitempty"`
	// Kept is set for an arm whose every replicate a resumed run kept
	// from an earlier one, so it started no server: this is what the
	// earlier run's server ran, as its replicates' records name it, ports
	// by name ({port}), since the ports it listened on are not recorded.
	Kept bool `json:"kept,omitempty"`
}

// Parsers are the tool-call and reasoning parsers a command was started
// with ("" when it has no such flag).
type Parsers struct {
	ToolCall  string `json:"tool_call"`
	Reasoning string `json:"reasoning"`
}

// String is "tool-call X, reasoning Y", "none" for an absent flag.
func (p Parsers) String() string {
	or := func(s string) string {
		if s == "" {
			return "none"
		}
		return s
	}
	return "tool-call " + or(p.ToolCall) + ", reasoning " + or(p.Reasoning)
}

// writeServers writes the arms' servers as a Markdown list, each
// command in full; an arm whose server was not started, or whose
// replicates were all kept from an earlier run (Kept), says so first.
func writeServers(b *strings.Builder, servers []ArmServer) {
	if len(servers) == 0 {
		return
	}
	b.WriteString("\nArms as launched:\n")
	for _, s := range servers {
		from := "recipe " + s.Recipe
		if s.ConfigKey != "" {
			from = fmt.Sprintf("config key %s (%s), recipe %s", s.ConfigKey, s.Precision, s.Recipe)
		}
		image := s.Image
		if image == "" {
			image = "none named"
		}
		switch {
		case s.NotStarted:
			from = "not started; " + from
		case s.Kept:
			from = "kept from an earlier run (every replicate kept; no server started by this run; ports by name); " + from
		}
		fmt.Fprintf(b, "- %s (%s): %s; image %s; model %s, served as %s; engine parsers %s", strings.ToUpper(s.Arm), s.Name, from, image, s.ModelPath, s.ServedModel, s.EngineParsers)
		if s.RouterParsers != nil {
			fmt.Fprintf(b, "; router parsers %s", *s.RouterParsers)
		}
		fmt.Fprintf(b, "\n  - engine: `%s`\n", schema.ShellJoin(s.EngineArgv))
		if len(s.RouterArgv) > 0 {
			fmt.Fprintf(b, "  - router: `%s`\n", schema.ShellJoin(s.RouterArgv))
		}
	}
}
