package configs

import (
	"fmt"
	"strings"
)

// ValidateInput names the files Validate checks. Masters and Runners are
// required; Changelog and ChangelogBase are optional.
type ValidateInput struct {
	Masters []Source
	Runners Source
	// Changelog, when set, is checked entry by entry; its config keys must
	// resolve against Masters.
	Changelog *Source
	// ChangelogBase, when set, is the changelog before the change: the
	// append-only rules apply and only appended entries need resolvable
	// config keys. Without a base every entry counts as new.
	ChangelogBase *Source
}

// Report is what Validate found.
type Report struct {
	Problems []*Error // sorted by file (in input order), line and column

	MasterEntries    int // entries in the master configs (0 when they do not load)
	RunnerLabels     int
	ChangelogEntries int // entries in the changelog (head)
	NewEntries       int // entries appended relative to the base (all without a base)
	Corrections      int // historical pr-link lines corrected
}

// OK reports whether no problem was found.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// Validate checks master configs, runners.yaml and optionally the
// changelog, and collects every problem in all of them:
//
//   - master and runner files against InferenceX's schema (LoadMasters,
//     LoadRunners rules);
//   - agentic entries with kv-offloading: dram against their runner's
//     hardware facts (present, and the topology fits the node);
//   - changelog entries against the ChangelogEntry schema and file rules
//     (CheckChangelog); with a base, the append-only rules
//     (CheckChangelogChange);
//   - new entries' config keys resolve (exact keys exist, wildcards match).
func Validate(in ValidateInput) *Report {
	rep := &Report{}
	var errs []*Error
	masters, err := ParseMasters(in.Masters...)
	errs = append(errs, Errors(err)...)
	if masters != nil {
		rep.MasterEntries = len(masters.Entries)
	}
	runners, err := ParseRunners(in.Runners)
	errs = append(errs, Errors(err)...)
	if runners != nil {
		rep.RunnerLabels = len(runners.Labels)
	}
	if masters != nil && runners != nil {
		errs = append(errs, Errors(CheckHardware(masters, runners))...)
	}
	if in.Changelog != nil {
		var added []ChangelogEntry
		if in.ChangelogBase != nil {
			ch, err := CheckChangelogChange(*in.ChangelogBase, *in.Changelog)
			errs = append(errs, Errors(err)...)
			if ch != nil {
				rep.ChangelogEntries = len(ch.Head)
				rep.Corrections = ch.Corrections
				added = ch.Added
			}
		} else {
			entries, err := CheckChangelog(in.Changelog.Name, in.Changelog.Data)
			errs = append(errs, Errors(err)...)
			rep.ChangelogEntries = len(entries)
			added = entries
		}
		rep.NewEntries = len(added)
		if masters != nil {
			errs = append(errs, Errors(CheckChangelogKeys(in.Changelog.Name, added, masters))...)
		}
	}
	rep.Problems = Errors(joinErrors(errs))
	return rep
}

// CheckHardware checks that every agentic search-space entry with
// kv-offloading: dram can be sized from its runner's hardware facts in
// runners.yaml: the runner label has hardware, a single-node topology
// (tp*pp*pcp) fits one node, and a multinode prefill worker either divides
// a node or fills whole nodes. The matrix generator fails on these later.
func CheckHardware(m *Masters, r *Runners) error {
	var errs []*Error
	for _, e := range m.Entries {
		for _, ac := range e.Scenarios.AgenticCoding {
			for _, s := range ac.SearchSpace {
				if s.KVOffloadingValue() != KVOffloadDRAM {
					continue
				}
				hw, ok := r.Hardware[e.Runner]
				if !ok {
					errs = append(errs, &Error{File: s.Pos.File, Line: s.Pos.Line, Col: s.Pos.Col, Key: e.Key + ".runner",
						Msg: fmt.Sprintf("kv-offloading: dram needs hardware facts for runner %q, but %s has no hardware entry for it (known: %s)",
							e.Runner, r.File, strings.Join(r.HardwareOrder, ", "))})
					continue
				}
				if s.TP != nil {
					gpus := *s.TP * s.PPValue() * s.PCPSizeValue()
					if gpus > hw.GPUsPerNode {
						errs = append(errs, &Error{File: s.Pos.File, Line: s.Pos.Line, Col: s.Pos.Col, Key: e.Key + ".tp",
							Msg: fmt.Sprintf("tp*pp*pcp-size = %d GPUs exceeds gpus-per-node = %d of runner %q; a single-node topology must fit one node",
								gpus, hw.GPUsPerNode, e.Runner)})
					}
				} else if w := s.Prefill; w != nil {
					gpus := w.TP * w.PPValue() * w.PCPSizeValue()
					if (gpus > hw.GPUsPerNode && gpus%hw.GPUsPerNode != 0) || (gpus < hw.GPUsPerNode && hw.GPUsPerNode%gpus != 0) {
						errs = append(errs, &Error{File: w.Pos.File, Line: w.Pos.Line, Col: w.Pos.Col, Key: e.Key + ".prefill",
							Msg: fmt.Sprintf("prefill worker uses tp*pp*pcp-size = %d GPUs, which does not tile nodes of %d GPUs (runner %q); use a divisor or a multiple of %d",
								gpus, hw.GPUsPerNode, e.Runner, hw.GPUsPerNode)})
					}
				}
			}
		}
	}
	return joinErrors(errs)
}
