package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"sweep/internal/cli"
	"sweep/metrics/result"
)

type resultValidateOptions struct {
	IO          *IOStreams
	ArtifactDir string
	Validate    result.ValidateOptions
}

func newResultValidateCmd(ios *IOStreams, runF func(context.Context, *resultValidateOptions) error) *Command {
	if runF == nil {
		runF = resultValidateRun
	}
	return &Command{
		Name:  "validate",
		Args:  "ARTIFACT_DIR",
		Short: "Check an aiperf artifact directory the way InferenceX does after a replay",
		Long:  helpText("result_validate"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &resultValidateOptions{IO: ios}
			fs := pflag.NewFlagSet("validate", pflag.ContinueOnError)
			cli.FloatVar(fs, &o.Validate.FailedRequestThreshold, "failed-request-threshold", result.DefaultFailedRequestThreshold, "largest accepted fraction of failed requests, inclusive, in [0, 1]", failedRequestRatio)
			fs.StringVar(&o.Validate.RequiredMetricPrefix, "required-metric-prefix", "", "also require a server metric with this prefix, e.g. sglang: or vllm:")
			return fs, func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return flagErrorf("result validate: want exactly one ARTIFACT_DIR, got %d arguments", len(args))
				}
				o.ArtifactDir = args[0]
				return runF(ctx, o)
			}
		},
	}
}

func resultValidateRun(_ context.Context, o *resultValidateOptions) error {
	v, err := result.Validate(o.ArtifactDir, o.Validate)
	if err != nil {
		if errors.Is(err, result.ErrBadThreshold) {
			return &FlagError{Err: err}
		}
		return err
	}
	if !v.Valid {
		return &exitCodeError{Code: exitError, Err: errors.New(v.Reason)}
	}
	fmt.Fprintln(o.IO.Out, v.Message)
	return nil
}
