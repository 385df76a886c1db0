package main

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/internal/cli"
)

// matrixInputs names the config files a matrix command reads; empty names
// mean the configs built into sweep.
type matrixInputs struct {
	ConfigFiles  []string // master configs, in order
	RunnerConfig string   // runners.yaml
	// Load reads the files; nil means configs.Load. Tests substitute a
	// caching loader.
	Load func(files []string, runnerConfig string) (*configs.Masters, *configs.Runners, error)
}

// generator loads the inputs and returns a generator over them; a file
// that does not load exits 2 (inputError), in every command.
func (in *matrixInputs) generator() (*matrix.Generator, error) {
	load := in.Load
	if load == nil {
		load = configs.Load
	}
	m, r, err := load(in.ConfigFiles, in.RunnerConfig)
	if err != nil {
		return nil, inputError(err)
	}
	return &matrix.Generator{Masters: m, Runners: r}, nil
}

func (in *matrixInputs) bind(fs *pflag.FlagSet, lists *cli.Lists) {
	lists.Strings(fs, &in.ConfigFiles, "config-files", "master config files, in order (default: the built-in amd and nvidia masters)")
	fs.StringVar(&in.RunnerConfig, "runner-config", "", "runners.yaml (default: the built-in one)")
}

// bindEvalFlags binds the flags shared by both generator commands.
func bindEvalFlags(fs *pflag.FlagSet, o *matrix.EvalOptions) {
	fs.BoolVar(&o.NoEvals, "no-evals", false, "throughput rows only; skip eval selection")
	fs.BoolVar(&o.EvalsOnly, "evals-only", false, "only the rows selected for evals, marked eval-only")
	fs.BoolVar(&o.AllEvals, "all-evals", false, "select every 8k1k and agentic point for evals (prints only eval rows)")
}

// matrixError turns invalid generator options into usage errors.
func matrixError(err error) error {
	if errors.Is(err, matrix.ErrInvalidOptions) {
		return &FlagError{Err: err}
	}
	return err
}

// bindConfigKeyFlag binds --with-config-key of the generator commands.
func bindConfigKeyFlag(fs *pflag.FlagSet, on *bool) {
	fs.BoolVar(on, "with-config-key", false, `add each row's master config key as "config-key" (no longer InferenceX's exact output)`)
}

// agenticRows is g.AgenticRows with an unknown key and bad generator
// options as usage errors.
func agenticRows(g *matrix.Generator, patterns []string, conc []int, evals matrix.EvalOptions) (matrix.Matrix, []string, error) {
	rows, keys, err := g.AgenticRows(patterns, conc, evals)
	if ke, ok := errors.AsType[*matrix.KeyError](err); ok {
		return nil, nil, &FlagError{Err: ke}
	}
	return rows, keys, matrixError(err)
}

// inputError makes err, a file the command line names that cannot be
// used (a config file that does not parse or check, a changelog), exit
// with exitUsage as a usage error does: exit 1 says that points failed.
// It prints no --help hint, which cannot fix a file.
func inputError(err error) error {
	if err == nil || cli.IsUsage(err) {
		return err
	}
	return &exitCodeError{Code: exitUsage, Err: err}
}

// errNoResults is a results directory with nothing to show (campaign.
// Knees.Empty), as sweep knees and sweep report say of it.
func errNoResults(dir string) error {
	return fmt.Errorf("no result files under %s (looked for *.json with conc and request_metrics)", dir)
}
