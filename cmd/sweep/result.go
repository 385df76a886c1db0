package main

func newResultCmd(ios *IOStreams) *Command {
	return &Command{
		Name:  "result",
		Short: "Aggregate and validate a point's aiperf artifacts (InferenceX-compatible)",
		Long:  helpText("result"),
		Sub: []*Command{
			newResultAggregateCmd(ios, nil),
			newResultValidateCmd(ios, nil),
			newResultPowerCmd(ios, nil),
		},
	}
}
