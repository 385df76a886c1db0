package main

import (
	"context"

	"github.com/spf13/pflag"
)

func newChangelogCmd(ios *IOStreams, runF func(context.Context, *changelogOptions) error) *Command {
	if runF == nil {
		runF = changelogRun
	}
	return &Command{
		Name:  "changelog",
		Batch: true,
		Short: "Turn new perf-changelog.yaml entries into the sweep they ask for, as InferenceX's CI does",
		Long: `Compare perf-changelog.yaml before (base) and after (head) a change, and
print the sweep the added entries ask for as one JSON object, exactly what
InferenceX's utils/process_changelog.py prints:

  single_node / multi_node   throughput rows by bucket: 1k1k, 8k1k,
                             <isl>_<osl>, agentic; each row carries its
                             recipe-fingerprint (sha256 of the row without
                             conc and exp-name)
  evals, agentic_evals,      eval rows (fixed-seq-len / agentic,
  multinode_evals,           single-node / multi-node)
  multinode_agentic_evals
  changelog_metadata         base_ref, head_ref and the added entries

The changelog may only grow: a removed or rewritten line is an error that
quotes it. Entries with all-evals are processed first; a config and
scenario already covered by an earlier entry is not generated again.
Append-only entries emit only the points the base's matrix lacks; they
need the base revision's configs (read from git with --base-ref, or given
with --base-config-files / --base-runner-config).

The new entries' config keys are resolved against --config-files (default:
the built-in master configs), as InferenceX resolves them against its
checked-out configs.

Examples:
  sweep changelog --base-ref origin/main --head-ref HEAD
  sweep changelog --base-file old/perf-changelog.yaml --head-file perf-changelog.yaml --trim-conc`,
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &changelogOptions{IO: ios}
			fs := pflag.NewFlagSet("changelog", pflag.ContinueOnError)
			lists := newArgparseLists()
			o.bindSides(fs)
			o.Inputs.bind(fs, lists)
			lists.strings(fs, &o.BaseConfigFiles, "base-config-files", "the base revision's master configs, for append-only entries (default with --base-ref: read from git)")
			fs.StringVar(&o.BaseRunnerConfig, "base-runner-config", "", "the base revision's runners.yaml, for append-only entries (default with --base-ref: read from git)")
			fs.BoolVar(&o.TrimConc, "trim-conc", false, "keep only the lowest concurrency of each configuration")
			fs.BoolVar(&o.AllEvals, "all-evals", false, "widen every entry's eval selection to all eligible points")
			fs.BoolVar(&o.EvalsOnly, "evals-only", false, "suppress throughput rows of every entry")
			lists.finish(fs)
			return fs, func(ctx context.Context, args []string) error {
				if err := lists.parseRest(fs, args); err != nil {
					return err
				}
				if err := o.checkSides(); err != nil {
					return err
				}
				return runF(ctx, o)
			}
		},
	}
}

// changelogRun prints the changelog's sweep to o.IO.Out.
func changelogRun(ctx context.Context, o *changelogOptions) error {
	res, _, err := o.process(ctx)
	if err != nil {
		return err
	}
	b := res.AppendJSON(nil)
	_, err = o.IO.Out.Write(append(b, '\n'))
	return err
}
