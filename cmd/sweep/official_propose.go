package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"sweep/configs"
	"sweep/internal/atomicfile"
	"sweep/internal/inputfile"
	"sweep/sweep/knee"
	"sweep/sweep/propose"
)

// officialProposeOptions are the inputs of "sweep official --propose".
type officialProposeOptions struct {
	IO          *IOStreams
	Propose     bool
	From        string   // directory of discovery results
	ConfigFiles []string // master configs edited in place
	Runners     string
	Changelog   string
	ConfigKey   string // empty: resolved from the results
	DryRun      bool
	Threshold   float64
	Targets     []float64
	Max         int
	// AllowSimulated proposes from simulated results (the changelog entry
	// says so).
	AllowSimulated bool
}

// newOfficialProposeCmd binds "sweep official" flags; today it only has
// --propose (the entry point is separate so "sweep official" proper can
// grow beside it).
func newOfficialProposeCmd(ios *IOStreams, runF func(context.Context, *officialProposeOptions) error) *Command {
	if runF == nil {
		runF = officialProposeRun
	}
	return &Command{
		Name:  "official",
		Short: "Propose the official conc-lists from a discovery sweep (--propose --from DIR)",
		Long: `With --propose, read the discovery results under --from (as "sweep knees"
does), and per config key and arm propose the official conc-list: the
latency floor, the knee, the first post-knee point, the arm's points on
the Pareto frontier (throughput/GPU vs P90 E2E-normalised interactivity)
and the two frontier points bracketing each --target interactivity, at
most --max per arm. Arms with no frontier point are dropped (their entry
stays; the changelog says why). The master config is edited in place:
only each arm's conc-list text changes, comments and formatting stay. A
perf-changelog.yaml entry is appended (pr-link XXX until the PR exists).
The result is checked as "sweep validate" does (with the old changelog as
the base: append-only rules) before anything is written. Simulated
results are refused unless --allow-simulated (the entry then says so); a
result with a concurrency above 65536 is refused.

Examples:
  sweep official --propose --from results/ --dry-run
  sweep official --propose --from results/ --config-key qwen3.5-fp8-mi325x-sglang-agentic-mtp`,
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &officialProposeOptions{IO: ios}
			fs := pflag.NewFlagSet("official", pflag.ContinueOnError)
			fs.BoolVar(&o.Propose, "propose", false, "propose official conc-lists from a discovery sweep")
			fs.StringVar(&o.From, "from", "", "directory of discovery results")
			fs.StringSliceVar(&o.ConfigFiles, "config-files", configs.DefaultMasterFiles, "master config files to edit in place")
			fs.StringVar(&o.Runners, "runner-config", configs.DefaultRunnerFile, "runners.yaml (for validation)")
			fs.StringVar(&o.Changelog, "changelog", defaultChangelog, "perf-changelog.yaml to append to")
			fs.StringVar(&o.ConfigKey, "config-key", "", "config key of every arm (default: resolved from the results' model prefix, precision, framework and hardware)")
			fs.BoolVar(&o.DryRun, "dry-run", false, "print the diff; write nothing")
			fs.Float64Var(&o.Threshold, "threshold", 0.9, "knee threshold, a fraction of the arm's peak in (0, 1)")
			fs.Float64SliceVar(&o.Targets, "target", []float64{20, 50, 100}, "target interactivities (tok/s/user) whose bracketing frontier points are kept")
			fs.IntVar(&o.Max, "max", 4, "points per arm (floor, knee and first post-knee point always stay)")
			fs.BoolVar(&o.AllowSimulated, "allow-simulated", false, "propose from simulated results (refused otherwise; the changelog entry says they were simulated)")
			return fs, func(ctx context.Context, args []string) error {
				switch {
				case len(args) > 0:
					return flagErrorf("official takes no arguments, got %q", args)
				case !o.Propose:
					return flagErrorf("official: only --propose is implemented; run sweep official --propose --from DIR")
				case o.From == "":
					return flagErrorf("--propose needs --from DIR (the discovery results)")
				case !(o.Threshold > 0 && o.Threshold < 1):
					return flagErrorf("--threshold %g: want a fraction in (0, 1)", o.Threshold)
				case o.Max < 1:
					return flagErrorf("--max %d: want at least 1", o.Max)
				}
				return runF(ctx, o)
			}
		},
	}
}

// officialProposeRun plans, edits, validates and (unless dry-run) writes.
func officialProposeRun(ctx context.Context, o *officialProposeOptions) error {
	arms, err := knee.Read(ctx, o.From)
	if err != nil {
		return err
	}
	if len(arms) == 0 {
		return fmt.Errorf("no result files under %s", o.From)
	}
	srcs, err := configs.ReadSources(o.ConfigFiles, nil)
	if err != nil {
		return err
	}
	masters, err := configs.ParseMasters(srcs...)
	if err != nil {
		return err
	}
	byKey := map[string][]*knee.Result{}
	var keys []string
	for _, a := range arms {
		k := o.ConfigKey
		if k == "" {
			if k, err = propose.ResolveKey(masters, a.Identity); err != nil {
				return err
			}
		}
		if _, ok := masters.Lookup(k); !ok {
			return fmt.Errorf("config key %q is not in %s", k, strings.Join(o.ConfigFiles, ", "))
		}
		if byKey[k] == nil {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], knee.Analyze(a, knee.Options{Threshold: o.Threshold}))
	}
	for _, k := range keys {
		if err := propose.CheckResults(byKey[k], o.AllowSimulated); err != nil {
			return err
		}
	}
	files := map[string][]byte{}
	for _, s := range srcs {
		files[s.Name] = s.Data
	}
	oldLog, err := inputfile.Read(o.Changelog, inputfile.ConfigYAML)
	if err != nil {
		return fmt.Errorf("read changelog: %w", err)
	}
	newLog := oldLog
	var changes []propose.Change
	for _, k := range keys {
		rs := byKey[k]
		fr := knee.Frontiers(rs, knee.AxisE2ENormP90)
		if len(fr) != 1 {
			return fmt.Errorf("config key %s: the arms span %d result groups (model, hardware, framework, precision, spec, scenario must agree)", k, len(fr))
		}
		plans := propose.Plan(rs, fr[0], propose.Options{Targets: o.Targets, Max: o.Max})
		fmt.Fprintf(o.IO.ErrOut, "%s:\n", k)
		for _, p := range plans {
			fmt.Fprintf(o.IO.ErrOut, "  %s\n", p.Summary())
		}
		m, _ := masters.Lookup(k)
		out, ch, err := propose.EditMaster(files[m.File], m.File, k, plans)
		if err != nil {
			return err
		}
		files[m.File] = out
		changes = append(changes, ch...)
		var c propose.Change
		newLog, c = propose.AppendChangelog(newLog, o.Changelog, propose.Entry(k, plans))
		changes = append(changes, c)
	}
	runners, err := configs.ReadSources([]string{o.Runners}, nil)
	if err != nil {
		return err
	}
	in := configs.ValidateInput{Runners: runners[0],
		Changelog:     &configs.Source{Name: o.Changelog, Data: newLog},
		ChangelogBase: &configs.Source{Name: o.Changelog + " (before)", Data: oldLog}}
	for _, s := range srcs {
		in.Masters = append(in.Masters, configs.Source{Name: s.Name, Data: files[s.Name]})
	}
	if rep := configs.Validate(in); !rep.OK() {
		for _, p := range rep.Problems {
			fmt.Fprintln(o.IO.ErrOut, p)
		}
		return fmt.Errorf("the proposal does not validate (%d problems); nothing written", len(rep.Problems))
	}
	fmt.Fprint(o.IO.Out, propose.Diff(changes))
	if o.DryRun {
		return nil
	}
	for _, s := range srcs {
		if string(files[s.Name]) != string(s.Data) {
			if err := atomicfile.Write(s.Name, files[s.Name], 0o644); err != nil {
				return err
			}
		}
	}
	return atomicfile.Write(o.Changelog, newLog, 0o644)
}
