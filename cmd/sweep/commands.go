package main

// rootCommand lists every subcommand of sweep, in the order "sweep --help"
// shows them. Each command's constructor lives in its own file.
func rootCommand(ios *IOStreams) *Command {
	return &Command{
		Name: "sweep",
		Long: helpText("commands"),
		Sub: []*Command{
			newVersionCmd(ios),
			newMatrixCmd(ios),
			newChangelogCmd(ios, nil),
			newValidateCmd(ios, nil),
			newPlanCmd(ios, nil),
			newSchemaCmd(ios),
			newLoadgenCmd(ios, nil),
			newRunCmd(ios, nil),
			newSimEngineCmd(ios, nil),
			newSimRouterCmd(ios),
			newSimBFCLCmd(ios),
			newSimCmd(ios),
			newResultCmd(ios),
			newScrapeCmd(ios, nil),
			newCICmd(ios),
			newKneesCmd(ios, nil),
			newReportCmd(ios, nil),
			newDiscoverCmd(ios, nil),
			newRunArmCmd(ios),
			newLaunchGuardCmd(ios),
			newOfficialCmd(ios),
			newABCmd(ios),
			newCompareCmd(ios, nil),
		},
	}
}
