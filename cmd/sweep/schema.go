package main

// newSchemaCmd groups the flag-schema commands: list, validate, check.
func newSchemaCmd(ios *IOStreams) *Command {
	return &Command{
		Name:  "schema",
		Short: "List, validate against and check the versioned flag schemas of aiperf, SGLang and vLLM",
		Long: `Every command sweep runs (aiperf profile, the SGLang server, vllm serve) is built
from the flag schema of the exact tool version it targets. These commands show
the schemas, check a command line against one, and compare a schema with the
installed tool's --help to catch version drift before a sweep starts.

A schema is named TOOL or TOOL@VERSION (for example aiperf, aiperf@0.12.0,
aiperf@sa-754356e9, sglang@v0.5.16, vllm@v0.27.1); TOOL alone means the
tool's default version.`,
		Sub: []*Command{
			newSchemaListCmd(ios, nil),
			newSchemaValidateCmd(ios, nil),
			newSchemaCheckCmd(ios, nil),
			newSchemaShowCmd(ios, nil),
		},
	}
}
