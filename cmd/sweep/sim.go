package main

// newSimCmd groups the commands about the simulated engine itself.
func newSimCmd(ios *IOStreams) *Command {
	return &Command{
		Name:  "sim",
		Short: "Fit the simulated engine to measured results, and judge its discoveries against official windows",
		Long:  helpText("sim"),
		Sub:   []*Command{newSimCalibrateCmd(ios, nil), newSimAgreementCmd(ios, nil)},
	}
}
