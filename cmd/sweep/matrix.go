package main

// newMatrixCmd groups the matrix generator commands.
func newMatrixCmd(ios *IOStreams) *Command {
	return &Command{
		Name:  "matrix",
		Batch: true,
		Short: "Generate the benchmark matrix from master configs, as InferenceX's generator does",
		Long:  helpText("matrix"),
		Sub: []*Command{
			newMatrixTestConfigCmd(ios, nil),
			newMatrixFullSweepCmd(ios, nil),
		},
	}
}
