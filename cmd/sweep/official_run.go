package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"sweep/configs/matrix"
	"sweep/internal/cli"
	"sweep/sweep/campaign"
)

// officialOptions are the inputs of "sweep official" (without --propose).
type officialOptions struct {
	campaignOptions
	ConfigKeys []string
	// The changelog change whose points to run, as InferenceX's PR sweep
	// runs them ("sweep changelog").
	Changelog changelogOptions
}

// newOfficialRunCmd is "sweep official" without --propose: run the
// selected points at official durations.
func newOfficialRunCmd(ios *IOStreams, runF func(context.Context, *officialOptions) error) *Command {
	if runF == nil {
		runF = officialRun
	}
	return &Command{
		Name:  "official",
		Short: "Run the selected points at official durations, or exactly the points of a changelog change (--propose: edit conc-lists)",
		Long:  helpText("official_run"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &officialOptions{campaignOptions: campaignOptions{IO: ios, Command: "official"}}
			o.Changelog.IO = ios
			fs := pflag.NewFlagSet("official", pflag.ContinueOnError)
			lists := cli.NewLists()
			lists.Strings(fs, &o.ConfigKeys, "config-keys", "master config keys (fnmatch patterns allowed) whose points to run")
			fs.StringVar(&o.Changelog.BaseRef, "changelog-base", "", "git ref of the changelog before the change: run the points it adds (instead of --config-keys)")
			fs.StringVar(&o.Changelog.HeadRef, "changelog-head", "", "git ref of the changelog after the change (default HEAD)")
			fs.StringVar(&o.Changelog.BaseFile, "changelog-base-file", "", "the changelog before the change, as a file (instead of --changelog-base)")
			fs.StringVar(&o.Changelog.HeadFile, "changelog-head-file", "", "the changelog after the change, as a file (instead of --changelog-head)")
			fs.StringVar(&o.Changelog.ChangelogFile, "changelog-file", "perf-changelog.yaml", "path of the changelog in the repository, for the git refs")
			fs.BoolVar(&o.Changelog.TrimConc, "trim-conc", false, "with a changelog: keep only the lowest concurrency of each configuration, as InferenceX's trim-conc label")
			o.bind(fs, lists)
			fs.Bool("propose", false, "propose official conc-lists from a discovery instead (see sweep official --propose --help)")
			adaptive := fs.Bool("adaptive", false, "not official's: an adaptive knee search is sweep discover --adaptive")
			_ = fs.MarkHidden("adaptive")
			lists.Finish(fs)
			return fs, func(ctx context.Context, args []string) error {
				if err := lists.ParseRest(fs, args); err != nil {
					return err
				}
				if len(fs.Args()) > 0 {
					return flagErrorf("official takes no arguments, got %q", fs.Args())
				}
				if *adaptive {
					return flagErrorf("--adaptive is sweep discover's: sweep official runs every point of the official conc-lists (the published numbers); sweep discover --adaptive searches for an arm's knee with fewer points")
				}
				byChangelog := o.Changelog.BaseRef != "" || o.Changelog.BaseFile != ""
				switch {
				case byChangelog && len(o.ConfigKeys) > 0:
					return flagErrorf("give --config-keys or --changelog-base, not both")
				case !byChangelog && len(o.ConfigKeys) == 0:
					return flagErrorf("missing --config-keys or --changelog-base (which points to run)")
				case !byChangelog && (o.Changelog.HeadRef != "" || o.Changelog.HeadFile != "" || o.Changelog.TrimConc):
					return flagErrorf("--changelog-head, --changelog-head-file and --trim-conc need --changelog-base")
				}
				if byChangelog && o.Changelog.HeadRef == "" && o.Changelog.HeadFile == "" {
					o.Changelog.HeadRef = "HEAD"
				}
				if byChangelog {
					if err := o.Changelog.checkSides(); err != nil {
						return err
					}
				}
				if err := o.check(fs); err != nil {
					return err
				}
				return runF(ctx, o)
			}
		},
	}
}

func officialRun(ctx context.Context, o *officialOptions) error {
	if err := cli.CheckOutDir("out", o.Out); err != nil {
		return err
	}
	var (
		rows     matrix.Matrix
		g        *matrix.Generator
		settings []campaign.Setting
		err      error
	)
	if len(o.ConfigKeys) > 0 {
		var keys []string
		if rows, keys, g, err = o.keyRows(o.ConfigKeys); err != nil {
			return err
		}
		settings = o.settings(campaign.Setting{Name: "--config-keys", Value: fmt.Sprint(keys)})
	} else {
		o.Changelog.Inputs = o.Inputs
		cl, gen, err := o.Changelog.process(ctx)
		if err != nil {
			return inputError(err)
		}
		g = gen
		if rows = cl.SingleNodeRows("agentic"); len(rows) == 0 {
			return inputError(errors.New("the changelog change adds no single-node agentic points (sweep changelog lists what it adds)"))
		}
		base, head := o.Changelog.Names()
		settings = o.settings(
			campaign.Setting{Name: "--changelog-base", Value: base},
			campaign.Setting{Name: "--changelog-head", Value: head},
			campaign.Setting{Name: "--trim-conc", Value: fmt.Sprint(o.Changelog.TrimConc)})
	}
	return o.execute(ctx, rows, g, settings)
}
