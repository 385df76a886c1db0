package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"sweep/simengine"
)

func newSimRouterCmd(ios *IOStreams) *Command {
	return &Command{
		Name:  "sim-router",
		Args:  "-- ROUTER_COMMAND...",
		Short: "Internal: stand in for sglang_router / vllm-router in simulated runs",
		Long:  helpText("simrouter"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			fs := pflag.NewFlagSet("sim-router", pflag.ContinueOnError)
			fs.SetInterspersed(false)
			return fs, func(ctx context.Context, args []string) error {
				if len(args) == 0 {
					return flagErrorf("sim-router: want the router command after --")
				}
				cfg, err := simengine.ParseRouterArgv(args)
				if err != nil {
					return &FlagError{Err: fmt.Errorf("sim-router: %w", err)}
				}
				fmt.Fprintf(ios.ErrOut, "sim-router: %s on %s:%d -> %v\n", cfg.Name, cfg.Host, cfg.Port, cfg.Workers)
				raiseGCPercent()
				return simengine.NewRouter(cfg).Run(ctx)
			}
		},
	}
}
