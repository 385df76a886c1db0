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
	// ChangeSides are the changelog before (base) and after (head) the
	// change and the base revision's configs.
	configs.ChangeSides
	TrimConc  bool
	AllEvals  bool
	EvalsOnly bool
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

// process reads both sides of the change and turns the added entries into
// their sweep with the options' TrimConc, AllEvals and EvalsOnly; it also
// returns the generator (its runners say where points may run).
func (o *changelogOptions) process(ctx context.Context) (*matrix.Changelog, *matrix.Generator, error) {
	base, head, err := o.Read(ctx)
	if err != nil {
		return nil, nil, inputError(err)
	}
	g, err := o.Inputs.generator()
	if err != nil {
		return nil, nil, err
	}
	baseName, headName := o.Names()
	res, err := g.ProcessChangelog(matrix.ChangelogOptions{Base: base, Head: head, BaseRef: baseName, HeadRef: headName,
		TrimConc: o.TrimConc, AllEvals: o.AllEvals, EvalsOnly: o.EvalsOnly,
		BaseInputs: o.BaseLoader(ctx, o.Inputs.ConfigFiles, o.Inputs.RunnerConfig)})
	if err != nil {
		// The change itself (a deleted line, an entry that does not
		// parse or names no config) is the input's mistake.
		return nil, nil, inputError(err)
	}
	return res, g, nil
}
