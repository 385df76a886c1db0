package main

// newSimCmd groups the commands about the simulated engine itself.
func newSimCmd(ios *IOStreams) *Command {
	return &Command{
		Name:  "sim",
		Short: "Fit the simulated engine to measured results",
		Long: `The simulated engine (sim-engine, run --simulate) derives its step costs and
KV pool from the GPU, the model's name and the engine flags. sim calibrate
fits them to a real discovery's results, so a simulated run rehearses a sweep
of that hardware (its schedule, cost and knee search) before GPU-hours are
spent.`,
		Sub: []*Command{newSimCalibrateCmd(ios, nil)},
	}
}
