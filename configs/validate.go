package configs

import (
	"fmt"
	"slices"
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
//   - search-space entries against their runner's hardware facts
//     (CheckHardware: present for kv-offloading: dram, the topology fits
//     one node);
//   - changelog entries against the ChangelogEntry schema and file rules
//     (CheckChangelog); with a base, the append-only rules
//     (CheckChangelogChange);
//   - new entries' config keys resolve (exact keys exist, wildcards match).
func Validate(in ValidateInput) *Report {
	rep := &Report{}
	var errs []*Error
	// The entries without problems (masters is never nil) go on to the
	// checks that need them, so every file's problems show in one pass.
	masters, merrs := parseMasters(in.Masters)
	errs = append(errs, merrs...)
	if len(merrs) == 0 {
		rep.MasterEntries = len(masters.Entries)
	}
	runners, err := ParseRunners(in.Runners)
	errs = append(errs, Errors(err)...)
	if runners != nil {
		rep.RunnerLabels = len(runners.Labels)
	}
	if runners != nil {
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
		errs = append(errs, Errors(CheckChangelogKeys(in.Changelog.Name, added, masters))...)
	}
	rep.Problems = Errors(joinErrors(errs))
	return rep
}

// CheckHardware checks every search-space entry of the entries named by
// keys (all entries when keys is empty) against its runner's hardware
// facts in runners.yaml, as far as the entry needs them:
//
//   - kv-offloading: dram sizes the offload from the facts, so the runner
//     label must have a hardware entry;
//   - a single-node point uses tp*pp*pcp-size GPUs (decode context
//     parallelism splits the tp group, dcp-size divides tp; DP attention
//     runs its dp ranks on the tp GPUs), which must fit one node of
//     gpus-per-node GPUs (InferenceX's generator refuses larger ones);
//   - ep splits the tp group into expert groups (SGLang's moe tp size is
//     tp/ep), so ep must divide tp;
//   - with kv-offloading: dram, a multinode prefill worker sizes per node,
//     so it must divide a node or fill whole nodes.
//
// Errors name the search-space entry and, where the runner caused them,
// the runner: line and the hardware entry too.
func CheckHardware(m *Masters, r *Runners, keys ...string) error {
	var errs []*Error
	for _, e := range m.Entries {
		if len(keys) > 0 && !slices.Contains(keys, e.Key) {
			continue
		}
		for _, it := range e.searchSpaces() {
			errs = append(errs, checkPoint(e, it.path, it.s, it.agentic, r)...)
		}
	}
	return joinErrors(errs)
}

// pathSpace is a search-space entry with its key path.
type pathSpace struct {
	path    string
	s       *SearchSpace
	agentic bool
}

// searchSpaces lists the entry's search-space entries in file order.
func (e *Master) searchSpaces() []pathSpace {
	var out []pathSpace
	for i, c := range e.Scenarios.FixedSeqLen {
		for j, s := range c.SearchSpace {
			out = append(out, pathSpace{fmt.Sprintf("%s.scenarios.%s[%d].search-space[%d]", e.Key, ScenarioFixedSeqLen, i, j), s, false})
		}
	}
	for i, c := range e.Scenarios.AgenticCoding {
		for j, s := range c.SearchSpace {
			out = append(out, pathSpace{fmt.Sprintf("%s.scenarios.%s[%d].search-space[%d]", e.Key, ScenarioAgenticCoding, i, j), s, true})
		}
	}
	return out
}

func checkPoint(e *Master, path string, s *SearchSpace, agentic bool, r *Runners) []*Error {
	var errs []*Error
	at := func(p Pos, key, format string, args ...any) {
		errs = append(errs, &Error{File: p.File, Line: p.Line, Col: p.Col, Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	runnerAt := fmt.Sprintf("runner: %q at %s", e.Runner, e.RunnerPos)
	dram := agentic && s.KVOffloadingValue() == KVOffloadDRAM
	if s.TP != nil && s.EP != nil && *s.EP > 1 && *s.TP%*s.EP != 0 {
		at(s.Pos, path+".ep", "ep (%d) must divide tp (%d): expert parallelism splits the tp group into ep expert groups; use ep 1 or ep %d", *s.EP, *s.TP, *s.TP)
	}
	hw, ok := r.Hardware[e.Runner]
	if !ok {
		if dram {
			at(s.KVOffloadingPos, path+".kv-offloading",
				"kv-offloading: dram needs hardware facts for the entry's runner (%s), but %s has no hardware entry for %q (known: %s); add one or use a runner label that has one",
				runnerAt, r.File, e.Runner, strings.Join(r.HardwareOrder, ", "))
		}
		return errs
	}
	hwAt := fmt.Sprintf("hardware entry at %s: gpus-per-node %d", r.HardwarePos[e.Runner], hw.GPUsPerNode)
	if s.TP != nil {
		if gpus := *s.TP * s.PPValue() * s.PCPSizeValue(); gpus > hw.GPUsPerNode {
			at(s.Pos, path+".tp",
				"tp*pp*pcp-size = %d*%d*%d = %d GPUs does not fit one node of the entry's runner (%s; %s): a single-node point must fit one node; lower tp, pp or pcp-size, or make it a multinode entry",
				*s.TP, s.PPValue(), s.PCPSizeValue(), gpus, runnerAt, hwAt)
		}
	} else if w := s.Prefill; w != nil && dram {
		gpus := w.TP * w.PPValue() * w.PCPSizeValue()
		if gpus > 0 && ((gpus > hw.GPUsPerNode && gpus%hw.GPUsPerNode != 0) || (gpus < hw.GPUsPerNode && hw.GPUsPerNode%gpus != 0)) {
			at(s.PrefillPos, path+".prefill",
				"prefill worker uses tp*pp*pcp-size = %d GPUs, which does not tile nodes of the entry's runner (%s; %s); use a divisor or a multiple of %d",
				gpus, runnerAt, hwAt, hw.GPUsPerNode)
		}
	}
	return errs
}
