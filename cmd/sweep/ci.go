package main

func newCICmd(ios *IOStreams) *Command {
	return &Command{
		Name:  "ci",
		Short: "GitHub Actions helpers: the PR-label sweep matrix",
		Sub:   []*Command{newCIMatrixCmd(ios, nil), newCIRunJobCmd(ios, nil), newCISummaryCmd(ios, nil)},
	}
}
