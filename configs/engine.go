package configs

import "fmt"

// Engine names an inference server: the master config's framework name, the
// flag schema's tool name, the simulator's kind and the metric prefix of its
// /metrics page.
type Engine string

// The engines sweep starts, simulates and scrapes. ATOM and TRT-LLM would add
// their own constants.
const (
	SGLang Engine = "sglang"
	VLLM   Engine = "vllm"
)

// Set validates and stores an engine name (pflag.Value).
func (e *Engine) Set(s string) error {
	switch Engine(s) {
	case SGLang, VLLM:
		*e = Engine(s)
		return nil
	}
	return fmt.Errorf("engine %q: want one of sglang, vllm", s)
}

// String returns the engine name (pflag.Value).
func (e *Engine) String() string { return string(*e) }

// Type names the flag type in --help (pflag.Value).
func (e *Engine) Type() string { return "engine" }

// Prefix is the engine's metric name prefix ("sglang:" or "vllm:").
func (e Engine) Prefix() string { return string(e) + ":" }
