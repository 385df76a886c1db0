package main

// newSimCmd groups the commands about the simulated engine itself.
func newSimCmd(ios *IOStreams) *Command {
	return &Command{
		Name:  "sim",
		Short: "Fit the simulated engine to measured results",
		Long:  helpText("sim"),
		Sub:   []*Command{newSimCalibrateCmd(ios, nil)},
	}
}
