package main

import (
	"context"

	"github.com/spf13/pflag"

	"sweep/configs"
	"sweep/configs/matrix"
)

// changelogOptions are the inputs of "sweep changelog".
type changelogOptions struct {
	IO *IOStreams
	// Inputs are the master configs and runners.yaml the new entries
	// refer to (the head's).
	Inputs matrixInputs
	// The changelog before (base) and after (head) the change: a file or
	// a git ref holding ChangelogFile.
	BaseFile, BaseRef string
	HeadFile, HeadRef string
	ChangelogFile     string // path of perf-changelog.yaml inside the repository
	// BaseConfigFiles and BaseRunnerConfig are the base revision's master
	// configs and runners.yaml, for append-only entries. Without them and
	// with BaseRef, they are read from git at BaseRef.
	BaseConfigFiles  []string
	BaseRunnerConfig string
	TrimConc         bool
	AllEvals         bool
	EvalsOnly        bool
	// Git returns the content of path at ref; nil means "git show".
	Git configs.GitShow
}

// bindSides binds the flags naming the changelog before and after the change.
func (o *changelogOptions) bindSides(fs *pflag.FlagSet) {
	fs.StringVar(&o.BaseFile, "base-file", "", "the changelog before the change")
	fs.StringVar(&o.HeadFile, "head-file", "", "the changelog after the change")
	fs.StringVar(&o.BaseRef, "base-ref", "", "git ref holding the changelog before the change (instead of --base-file)")
	fs.StringVar(&o.HeadRef, "head-ref", "", "git ref holding the changelog after the change (instead of --head-file)")
	fs.StringVar(&o.ChangelogFile, "changelog-file", "perf-changelog.yaml", "path of the changelog in the repository, for --base-ref/--head-ref")
}

// checkSides requires exactly one source for each side.
func (o *changelogOptions) checkSides() error {
	switch {
	case (o.BaseFile == "") == (o.BaseRef == ""):
		return flagErrorf("give exactly one of --base-file and --base-ref")
	case (o.HeadFile == "") == (o.HeadRef == ""):
		return flagErrorf("give exactly one of --head-file and --head-ref")
	}
	return nil
}

func cmpOrString(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// baseInputs returns the loader of the base revision's configs for
// append-only entries, or nil when there is no way to get them.
func (o *changelogOptions) baseInputs(ctx context.Context) func() (*configs.Masters, *configs.Runners, error) {
	switch {
	case len(o.BaseConfigFiles) > 0 || o.BaseRunnerConfig != "":
		return func() (*configs.Masters, *configs.Runners, error) {
			files := o.BaseConfigFiles
			if len(files) == 0 {
				files = o.Inputs.ConfigFiles
			}
			runner := o.BaseRunnerConfig
			if runner == "" {
				runner = o.Inputs.RunnerConfig
			}
			return configs.Load(files, runner)
		}
	case o.BaseRef != "":
		return func() (*configs.Masters, *configs.Runners, error) {
			return configs.LoadAt(ctx, o.Git, o.BaseRef, o.Inputs.ConfigFiles, o.Inputs.RunnerConfig)
		}
	}
	return nil
}

// process reads both sides of the change and turns the added entries into
// their sweep with the options' TrimConc, AllEvals and EvalsOnly; it also
// returns the generator (its runners say where points may run).
func (o *changelogOptions) process(ctx context.Context) (*matrix.Changelog, *matrix.Generator, error) {
	base, err := configs.ReadChangelog(ctx, o.Git, o.BaseFile, o.BaseRef, o.ChangelogFile)
	if err != nil {
		return nil, nil, err
	}
	head, err := configs.ReadChangelog(ctx, o.Git, o.HeadFile, o.HeadRef, o.ChangelogFile)
	if err != nil {
		return nil, nil, err
	}
	g, err := o.Inputs.generator()
	if err != nil {
		return nil, nil, err
	}
	res, err := g.ProcessChangelog(matrix.ChangelogOptions{
		Base:       base,
		Head:       head,
		BaseRef:    cmpOrString(o.BaseRef, o.BaseFile),
		HeadRef:    cmpOrString(o.HeadRef, o.HeadFile),
		TrimConc:   o.TrimConc,
		AllEvals:   o.AllEvals,
		EvalsOnly:  o.EvalsOnly,
		BaseInputs: o.baseInputs(ctx),
	})
	return res, g, err
}
