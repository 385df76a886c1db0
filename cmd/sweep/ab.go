package main

// newABCmd groups the accuracy A/B commands.
func newABCmd(ios *IOStreams) *Command {
	return &Command{
		Name:  "ab",
		Short: "Compare the BFCL function-calling accuracy of two serving arms of one model",
		Long: `Accuracy A/B gate: two serving arms of one model (a router in front of vLLM
against vLLM directly, two images, two vendors) answer BFCL, and the gate
fails only on a drop beyond a tolerance that the data can support.`,
		Sub: []*Command{
			newABCompareCmd(ios, nil),
			newABRunCmd(ios, nil),
			newABCalibrateCmd(ios, nil),
			newABLegsCmd(ios, nil),
		},
	}
}
