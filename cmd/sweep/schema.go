package main

// newSchemaCmd groups the flag-schema commands: list, validate, check.
func newSchemaCmd(ios *IOStreams) *Command {
	return &Command{
		Name:  "schema",
		Short: "List, validate against and check the versioned flag schemas of aiperf, SGLang and vLLM",
		Long:  helpText("schema"),
		Sub: []*Command{
			newSchemaListCmd(ios, nil),
			newSchemaValidateCmd(ios, nil),
			newSchemaCheckCmd(ios, nil),
			newSchemaShowCmd(ios, nil),
		},
	}
}
