package main

import (
	"context"

	"github.com/spf13/pflag"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/internal/cli"
	"sweep/sweep/gha"
)

// ciMatrixOptions are the inputs of "sweep ci matrix".
type ciMatrixOptions struct {
	changelogOptions
	Labels []string
	// Grouping makes one job per point or one per arm.
	Grouping gha.Grouping
	// OnlineRunners is a file of runner names GitHub reports online (one
	// per line, or a JSON list); "" means unknown.
	OnlineRunners string
}

func newCIMatrixCmd(ios *IOStreams, runF func(context.Context, *ciMatrixOptions) error) *Command {
	if runF == nil {
		runF = ciMatrixRun
	}
	return &Command{
		Name:  "matrix",
		Batch: true,
		Short: "Print the GitHub Actions matrix a pull request's labels and changelog diff ask for",
		Long:  helpText("ci_matrix"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &ciMatrixOptions{changelogOptions: changelogOptions{IO: ios}}
			fs := pflag.NewFlagSet("ci matrix", pflag.ContinueOnError)
			lists := cli.NewLists()
			fs.StringSliceVar(&o.Labels, "labels", nil, "the pull request's labels, comma-separated")
			per := fs.String("per", "point", "one job per point or per arm (point|arm)")
			fs.StringVar(&o.OnlineRunners, "online-runners", "", "file of runner names that are online (one per line or a JSON list); default: every registered runner counts")
			o.bindSides(fs)
			o.Inputs.bind(fs, lists)
			lists.Finish(fs)
			return fs, func(ctx context.Context, args []string) error {
				if err := lists.ParseRest(fs, args); err != nil {
					return err
				}
				switch *per {
				case "point":
				case "arm":
					o.Grouping = gha.PerArm
				default:
					return flagErrorf("--per %q: want point or arm", *per)
				}
				if err := o.checkSides(); err != nil {
					return err
				}
				return runF(ctx, o)
			}
		},
	}
}

// ciMatrixRun prints the fan-out JSON to Out and the notices to ErrOut.
func ciMatrixRun(ctx context.Context, o *ciMatrixOptions) error {
	mode, err := gha.ParseLabels(o.Labels)
	if err != nil {
		return flagErrorf("--labels: %w", err)
	}
	var online map[string]bool
	if o.OnlineRunners != "" {
		if online, err = gha.ReadOnlineRunners(o.OnlineRunners); err != nil {
			return inputError(err)
		}
	}
	ch := &matrix.Changelog{}
	var runners *configs.Runners
	if mode.Sweep() {
		o.TrimConc, o.AllEvals, o.EvalsOnly = mode.TrimConc, mode.AllEvals, mode.EvalsOnly
		var g *matrix.Generator
		if ch, g, err = o.process(ctx); err != nil {
			return err
		}
		runners = g.Runners
	}
	fan := gha.Build(ch, mode, gha.Availability{Runners: runners, Online: online}, o.Grouping)
	if err := fan.WriteNotices(o.IO.ErrOut); err != nil {
		return err
	}
	b, err := fan.JSON()
	if err != nil {
		return err
	}
	_, err = o.IO.Out.Write(b)
	return err
}
