package propose

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"sweep/configs"
	"sweep/metrics/result"
	"sweep/sweep/knee"
)

// Change is one edited line range of a file, for a diff.
type Change struct {
	File string
	Line int      // first line, 1-based, in the old file
	Old  []string // the old lines
	New  []string // the new lines
}

// Diff renders changes as a unified diff (one hunk per change, no
// context lines; a file's changes in line order). As in diff -U0, an
// empty range starts at the line before it (appending 8 lines to a file
// of 43: "@@ -43,0 +44,8 @@"), and a hunk's new lines start where the
// file's earlier hunks moved them.
func Diff(changes []Change) string {
	var b strings.Builder
	file, shift := "", 0
	for _, c := range changes {
		if c.File != file {
			fmt.Fprintf(&b, "--- %s\n+++ %s\n", c.File, c.File)
			file, shift = c.File, 0
		}
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", hunkRange(c.Line, len(c.Old)), hunkRange(c.Line+shift, len(c.New)))
		shift += len(c.New) - len(c.Old)
		for _, l := range c.Old {
			fmt.Fprintf(&b, "-%s\n", l)
		}
		for _, l := range c.New {
			fmt.Fprintf(&b, "+%s\n", l)
		}
	}
	return b.String()
}

// hunkRange is a hunk's range of n lines from line (1-based): "12,3",
// or for no lines the line before ("43,0").
func hunkRange(line, n int) string {
	if n == 0 {
		line--
	}
	return fmt.Sprintf("%d,%d", line, n)
}

// EditMaster rewrites the conc-list of every kept arm of key in a master
// config file. It finds each arm's search-space entry through the yaml.v3
// Node tree (tp, ep, dp-attn, pp, spec-decoding, kv-offloading with
// InferenceX's defaults) and replaces only the text of its conc-list
// (a flow [..] in place, or the lines of a block list), so comments and
// formatting elsewhere stay byte for byte. Dropped arms keep their entry
// (the changelog entry says they were dropped); removing a search-space
// entry is left to a person.
func EditMaster(data []byte, file, key string, plans []ArmPlan) ([]byte, []Change, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	entry, spaces, err := searchSpaces(&doc, file, key)
	if err != nil {
		return nil, nil, err
	}
	lines := strings.SplitAfter(string(data), "\n")
	type edit struct {
		node *yaml.Node
		conc []int
	}
	var edits []edit
	var problems []string
	for _, p := range plans {
		if p.Conc == nil {
			continue
		}
		id := p.Result.Arm.Identity
		hit := armEntry(spaces, id)
		if hit == nil {
			problems = append(problems, (&configs.Error{File: file, Line: entry.Line, Col: entry.Column, Key: key,
				Msg: "no agentic-coding search-space entry for " + id.Parallelism()}).Error())
			continue
		}
		cl := mapGet(hit, "conc-list")
		if cl == nil || cl.Kind != yaml.SequenceNode {
			problems = append(problems, (&configs.Error{File: file, Line: hit.Line, Col: hit.Column, Key: key,
				Msg: "the " + id.Parallelism() + " entry has no conc-list (conc-start/conc-end); write one by hand first"}).Error())
			continue
		}
		edits = append(edits, edit{node: cl, conc: p.Conc})
	}
	if len(problems) > 0 {
		return nil, nil, fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].node.Line > edits[j].node.Line })
	var changes []Change
	for _, e := range edits {
		first, last, repl, err := replaceSeq(lines, e.node, e.conc)
		if err != nil {
			return nil, nil, &configs.Error{File: file, Line: e.node.Line, Col: e.node.Column, Key: "conc-list", Err: err}
		}
		old := trimNL(lines[first : last+1])
		if strings.Join(old, "\n") == strings.Join(trimNL(repl), "\n") {
			continue
		}
		changes = append(changes, Change{File: file, Line: first + 1, Old: old, New: trimNL(repl)})
		lines = append(lines[:first], append(repl, lines[last+1:]...)...)
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Line < changes[j].Line })
	return []byte(strings.Join(lines, "")), changes, nil
}

// searchSpaces finds key's entry in a master config document and its
// agentic-coding search-space entries, in file order.
func searchSpaces(doc *yaml.Node, file, key string) (entry *yaml.Node, spaces []*yaml.Node, err error) {
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("%s: not a master config (want a mapping of config keys)", file)
	}
	entry = mapGet(doc.Content[0], key)
	if entry == nil {
		return nil, nil, fmt.Errorf("%s: config key %q not found", file, key)
	}
	if sc := mapGet(entry, "scenarios"); sc != nil {
		if ac := mapGet(sc, "agentic-coding"); ac != nil {
			for _, item := range ac.Content {
				if ss := mapGet(item, "search-space"); ss != nil {
					spaces = append(spaces, ss.Content...)
				}
			}
		}
	}
	return entry, spaces, nil
}

// armEntry is the search-space entry of the arm id (matches), nil when
// there is none.
func armEntry(spaces []*yaml.Node, id result.Identity) *yaml.Node {
	for _, s := range spaces {
		if matches(s, id.Get("tp"), id.Get("ep"), id.Get("dp_attention"), id.Get("pp"), id.Get("spec_decoding"), id.Get("kv_offloading")) {
			return s
		}
	}
	return nil
}

// officialConcs are the conc-list of each result's arm in key's entry of
// the master config data (file), by result: the concurrencies a proposal
// replaces. An arm with no entry or no conc-list of integers has none
// (EditMaster says why when it edits the arm).
func officialConcs(data []byte, file, key string, rs []*knee.Result) (map[*knee.Result][]int, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	_, spaces, err := searchSpaces(&doc, file, key)
	if err != nil {
		return nil, err
	}
	out := map[*knee.Result][]int{}
	for _, r := range rs {
		cl := mapGet(armEntry(spaces, r.Arm.Identity), "conc-list")
		if cl == nil || cl.Kind != yaml.SequenceNode {
			continue
		}
		var concs []int
		for _, n := range cl.Content {
			if c, err := strconv.Atoi(n.Value); err == nil {
				concs = append(concs, c)
			}
		}
		out[r] = concs
	}
	return out, nil
}

func trimNL(ls []string) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = strings.TrimRight(l, "\n")
	}
	return out
}

// replaceSeq returns the line range [first, last] (0-based) holding the
// sequence node and its replacement lines.
func replaceSeq(lines []string, n *yaml.Node, conc []int) (int, int, []string, error) {
	vals := make([]string, len(conc))
	for i, c := range conc {
		vals[i] = strconv.Itoa(c)
	}
	if n.Style&yaml.FlowStyle != 0 {
		first := n.Line - 1
		text := strings.Join(lines[first:], "")
		start := n.Column - 1
		if start >= len(text) || text[start] != '[' {
			return 0, 0, nil, fmt.Errorf("flow list does not start with [ at its position")
		}
		depth, end := 0, -1
		for i := start; i < len(text) && end < 0; i++ {
			switch text[i] {
			case '[':
				depth++
			case ']':
				depth--
				if depth == 0 {
					end = i
				}
			}
		}
		if end < 0 {
			return 0, 0, nil, fmt.Errorf("unterminated flow list")
		}
		last := first + strings.Count(text[:end], "\n")
		span := strings.Join(lines[first:last+1], "") // a prefix of text
		newSpan := span[:start] + "[" + strings.Join(vals, ", ") + "]" + span[end+1:]
		repl := strings.SplitAfter(newSpan, "\n")
		if repl[len(repl)-1] == "" {
			repl = repl[:len(repl)-1]
		}
		return first, last, repl, nil
	}
	if len(n.Content) == 0 {
		return 0, 0, nil, fmt.Errorf("empty block list")
	}
	first, last := n.Content[0].Line-1, n.Content[len(n.Content)-1].Line-1
	prefix := lines[first][:n.Content[0].Column-1]
	var repl []string
	for _, v := range vals {
		repl = append(repl, prefix+v+"\n")
	}
	return first, last, repl, nil
}

func mapGet(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// matches compares a search-space entry with an arm's identity, with
// InferenceX's defaults for absent keys (ep 1, dp-attn false, pp 1,
// spec-decoding none, kv-offloading none).
func matches(s *yaml.Node, tp, ep, dpa, pp, spec, kv string) bool {
	get := func(k, def string) string {
		if v := mapGet(s, k); v != nil {
			return v.Value
		}
		return def
	}
	or := func(v, def string) string {
		if v == "" {
			return def
		}
		return v
	}
	return get("tp", "") == tp && get("ep", "1") == or(ep, "1") && get("dp-attn", "false") == or(dpa, "false") &&
		get("pp", "1") == or(pp, "1") && get("spec-decoding", "none") == or(spec, "none") &&
		get("kv-offloading", "none") == or(kv, "none")
}
