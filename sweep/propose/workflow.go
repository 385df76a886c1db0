package propose

import (
	"fmt"
	"strings"

	"sweep/configs"
	"sweep/internal/atomicfile"
	"sweep/internal/inputfile"
	"sweep/internal/usage"
	"sweep/sweep/knee"
)

// Proposal is the edited configs and changelog of a request, validated.
type Proposal struct {
	// Changes are the edits, for Diff.
	Changes []Change
	// Problems are what "sweep validate" finds in the edited files (with
	// the old changelog as the base); a proposal with problems is not
	// written.
	Problems []*configs.Error

	srcs      []configs.Source
	files     map[string][]byte
	changelog string
	newLog    []byte
}

// Propose plans each config key's arms of the discovery r.Results,
// edits its master config and appends its changelog entry, in memory,
// and validates the result. A discovery that has not finished is
// refused unless r.AllowUnfinished (CheckFinished); one with no result,
// or results it may not propose from (CheckResults), is refused too: each
// a *usage.Error.
func Propose(r Request) (*Proposal, error) {
	rs := r.Results
	if len(rs) == 0 {
		return nil, usage.Errorf("no result files under %s (looked for *.json with conc and request_metrics)", r.From)
	}
	if err := CheckFinished(r); err != nil {
		return nil, err
	}
	if s := unfinishedNote(r); s != "" && r.Log != nil {
		fmt.Fprintf(r.Log, "warning: --allow-unfinished: the discovery has not finished: %s; the unfinished arms' conc-lists stay as they are, "+
			"and the other arms' frontier points are read without the points not run\n", s)
	}
	srcs, err := configs.ReadSources(r.ConfigFiles, nil)
	if err != nil {
		return nil, err
	}
	masters, err := configs.ParseMasters(srcs...)
	if err != nil {
		return nil, err
	}
	byKey := map[string][]*knee.Result{}
	var keys []string
	for _, res := range rs {
		k := r.ConfigKey
		if k == "" {
			if k, err = ResolveKey(masters, res.Arm.Identity); err != nil {
				return nil, err
			}
		}
		if _, ok := masters.Lookup(k); !ok {
			return nil, fmt.Errorf("config key %q is not in %s", k, strings.Join(r.ConfigFiles, ", "))
		}
		if byKey[k] == nil {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], res)
	}
	for _, k := range keys {
		if err := CheckResults(byKey[k], r.AllowSimulated); err != nil {
			return nil, err
		}
	}
	p := &Proposal{srcs: srcs, files: map[string][]byte{}, changelog: r.Changelog}
	for _, s := range srcs {
		p.files[s.Name] = s.Data
	}
	oldLog, err := inputfile.Read(r.Changelog, inputfile.ConfigYAML)
	if err != nil {
		return nil, fmt.Errorf("read changelog: %w", err)
	}
	p.newLog = oldLog
	for _, k := range keys {
		rs := byKey[k]
		fr := knee.Frontiers(rs, knee.AxisE2ENormP90)
		if len(fr) != 1 {
			return nil, fmt.Errorf("config key %s: the arms span %d result groups (model, hardware, framework, precision, spec, scenario must agree)", k, len(fr))
		}
		m, _ := masters.Lookup(k)
		po := Options{Targets: r.Targets, Max: r.Max}
		if po.NotPlanned, err = notPlanned(r, p.files[m.File], m.File, k, rs); err != nil {
			return nil, err
		}
		plans := Plan(rs, fr[0], po)
		if r.Log != nil {
			fmt.Fprintf(r.Log, "%s:\n", k)
			for _, pl := range plans {
				fmt.Fprintf(r.Log, "  %s\n", pl.Summary())
			}
			if len(po.NotPlanned) > 0 {
				fmt.Fprintf(r.Log, "warning: %s: the discovery did not plan every official point (its --conc-list, or a config changed since): the arms missing some stay as they are, "+
					"and the others' frontier points are read without them (an arm they leave dominated stays dominated with them)\n", k)
			}
		}
		out, ch, err := EditMaster(p.files[m.File], m.File, k, plans)
		if err != nil {
			return nil, err
		}
		p.files[m.File] = out
		p.Changes = append(p.Changes, ch...)
		var c Change
		p.newLog, c = AppendChangelog(p.newLog, r.Changelog, Entry(k, plans))
		p.Changes = append(p.Changes, c)
	}
	runners, err := configs.ReadSources([]string{r.Runners}, nil)
	if err != nil {
		return nil, err
	}
	in := configs.ValidateInput{Runners: runners[0],
		Changelog:     &configs.Source{Name: r.Changelog, Data: p.newLog},
		ChangelogBase: &configs.Source{Name: r.Changelog + " (before)", Data: oldLog}}
	for _, s := range srcs {
		in.Masters = append(in.Masters, configs.Source{Name: s.Name, Data: p.files[s.Name]})
	}
	p.Problems = configs.Validate(in).Problems
	return p, nil
}

// notPlanned is Options.NotPlanned of key's results rs: per arm, the
// concurrencies of its conc-list in the master config data (file) that
// r.NotPlanned says the discovery did not plan; nil when none.
func notPlanned(r Request, data []byte, file, key string, rs []*knee.Result) (map[*knee.Result][]int, error) {
	if r.NotPlanned == nil {
		return nil, nil
	}
	official, err := officialConcs(data, file, key, rs)
	if err != nil {
		return nil, err
	}
	var out map[*knee.Result][]int
	for _, res := range rs {
		if u := r.NotPlanned(res.Arm.Identity, official[res]); len(u) > 0 {
			if out == nil {
				out = map[*knee.Result][]int{}
			}
			out[res] = u
		}
	}
	return out, nil
}

// Valid says whether the proposal validates: nil, or an error that
// counts the Problems.
func (p *Proposal) Valid() error {
	if len(p.Problems) > 0 {
		return fmt.Errorf("the proposal does not validate (%d problems); nothing written", len(p.Problems))
	}
	return nil
}

// Write writes the edited master configs that changed and the changelog,
// each atomically; a proposal with problems is refused (Valid).
func (p *Proposal) Write() error {
	if err := p.Valid(); err != nil {
		return err
	}
	for _, s := range p.srcs {
		if string(p.files[s.Name]) != string(s.Data) {
			if err := atomicfile.Write(s.Name, p.files[s.Name], 0o644); err != nil {
				return err
			}
		}
	}
	return atomicfile.Write(p.changelog, p.newLog, 0o644)
}
