package main

// newABCmd groups the accuracy A/B commands.
func newABCmd(ios *IOStreams) *Command {
	return &Command{
		Name:  "ab",
		Short: "Compare the BFCL function-calling accuracy of two serving arms of one model",
		Long:  helpText("ab"),
		Sub: []*Command{
			newABCompareCmd(ios, nil),
			newABRunCmd(ios, nil),
			newABCalibrateCmd(ios, nil),
			newABLegsCmd(ios, nil),
		},
	}
}
