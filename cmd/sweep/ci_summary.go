package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"sweep/internal/plural"
	"sweep/sweep/gha"
)

// ciSummaryOptions are the inputs of "sweep ci summary".
type ciSummaryOptions struct {
	IO     *IOStreams
	Fanout string // the fan-out JSON of "sweep ci matrix" ("" : none)
	Dir    string
}

func newCISummaryCmd(ios *IOStreams, runF func(context.Context, *ciSummaryOptions) error) *Command {
	if runF == nil {
		runF = ciSummaryRun
	}
	return &Command{
		Name:  "summary",
		Args:  "RESULTS_DIR",
		Short: "Write the Markdown summary of a PR-label sweep's results",
		Long:  helpText("ci_summary"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &ciSummaryOptions{IO: ios}
			fs := pflag.NewFlagSet("ci summary", pflag.ContinueOnError)
			fs.StringVar(&o.Fanout, "fanout", "", "`FILE` holding the fan-out JSON of \"sweep ci matrix\"")
			return fs, func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return flagErrorf("want one results directory, got %d arguments", len(args))
				}
				o.Dir = args[0]
				return runF(ctx, o)
			}
		},
	}
}

func ciSummaryRun(_ context.Context, o *ciSummaryOptions) error {
	var fan *gha.FanoutJSON
	if o.Fanout != "" {
		var err error
		if fan, err = gha.ReadFanout(o.Fanout); err != nil {
			return err
		}
	}
	out, err := gha.WriteSummary(o.IO.Out, fan, o.Dir)
	if err != nil {
		return err
	}
	if out.Incomplete() {
		return fmt.Errorf("ci summary: the results are incomplete (%s missing, %s unreadable): the summary names them",
			plural.Count(len(out.Missing), "point's result", "points' results"), plural.Count(out.Unreadable, "file", "files"))
	}
	return nil
}
