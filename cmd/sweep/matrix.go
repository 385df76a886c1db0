package main

// newMatrixCmd groups the matrix generator commands.
func newMatrixCmd(ios *IOStreams) *Command {
	return &Command{
		Name:  "matrix",
		Batch: true,
		Short: "Generate the benchmark matrix from master configs, as InferenceX's generator does",
		Long: `Expand master config entries into matrix rows: one JSON object per benchmark
point, exactly what InferenceX's utils/matrix_logic/generate_sweep_configs.py
prints for the same arguments (same rows, order, keys and values).`,
		Sub: []*Command{
			newMatrixTestConfigCmd(ios, nil),
			newMatrixFullSweepCmd(ios, nil),
		},
	}
}
