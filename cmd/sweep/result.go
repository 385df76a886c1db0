package main

func newResultCmd(ios *IOStreams) *Command {
	return &Command{
		Name:  "result",
		Short: "Aggregate and validate a point's aiperf artifacts (InferenceX-compatible)",
		Long: `Turns a point's aiperf artifacts into the aggregate result JSON InferenceX's
dashboard ingests, and validates a run the way InferenceX does.`,
		Sub: []*Command{
			newResultAggregateCmd(ios, nil),
			newResultValidateCmd(ios, nil),
			newResultPowerCmd(ios, nil),
		},
	}
}
