package configs

import (
	"strings"

	"gopkg.in/yaml.v3"
)

var changelogKeys = []string{"config-keys", "scenario-type", "description", "pr-link", "evals-only", "all-evals", "append-only", "eval-min-prefill-ep"}

// ParseChangelog parses perf-changelog.yaml content (or a fragment of
// appended entries) into its entries and checks each against InferenceX's
// ChangelogEntry schema: no unknown or duplicate keys, config-keys and
// description with at least one string, a pr-link, scenario-type values
// fixed-seq-len/agentic-coding, eval-min-prefill-ep >= 1, and append-only
// never combined with evals-only, all-evals or eval-min-prefill-ep.
// file names the source in error positions. Empty content gives no entries
// and no error. Every problem is reported (errors.Join of *Error).
func ParseChangelog(file string, data []byte) ([]ChangelogEntry, error) {
	d := &decoder{file: file}
	entries := d.changelog(data)
	if len(d.errs) > 0 {
		return nil, joinErrors(d.errs)
	}
	return entries, nil
}

func (d *decoder) changelog(data []byte) []ChangelogEntry {
	return d.changelogRoot(d.parseDocument(data))
}

func (d *decoder) changelogRoot(root *yaml.Node) []ChangelogEntry {
	if root == nil {
		return nil
	}
	items, ok := d.sequence(root, "")
	if !ok {
		d.errs[len(d.errs)-1].Msg = "perf-changelog.yaml must be a list of entries (each starting with '- config-keys:'), got " + kindName(resolve(root))
		return nil
	}
	out := make([]ChangelogEntry, 0, len(items))
	for i, it := range items {
		if e, ok := d.changelogEntry(it, indexPath("entry", i+1)); ok {
			e.Index = i + 1
			out = append(out, e)
		}
	}
	return out
}

func (d *decoder) changelogEntry(n *yaml.Node, path string) (ChangelogEntry, bool) {
	before := len(d.errs)
	nn := resolve(n)
	e := ChangelogEntry{Pos: d.pos(nn)}
	f, ok := d.mapping(n, path, changelogKeys, nil)
	if !ok {
		return e, false
	}
	e.Keys = f.order
	d.require(f, nn, path, "config-keys", "description", "pr-link")
	if v := f.get("config-keys"); v != nil {
		p := joinPath(path, "config-keys")
		if list, ok := d.strList(v, p); ok {
			if len(list) == 0 {
				d.errAt(resolve(v), p, "must list at least one config key (exact keys or '*' wildcards)")
			}
			e.ConfigKeys = list
			for _, it := range resolve(v).Content {
				e.ConfigKeyPos = append(e.ConfigKeyPos, d.pos(resolve(it)))
			}
		}
	}
	if v := f.get("description"); v != nil {
		p := joinPath(path, "description")
		if list, ok := d.strList(v, p); ok {
			if len(list) == 0 {
				d.errAt(resolve(v), p, "must list at least one line saying what changed")
			}
			e.Description = list
		}
	}
	if v := f.get("pr-link"); v != nil {
		e.PRLink, _ = d.str(v, joinPath(path, "pr-link"))
		e.PRLinkPos = d.pos(resolve(v))
	}
	if v := f.get("scenario-type"); v != nil && !isNull(v) {
		p := joinPath(path, "scenario-type")
		if list, ok := d.strList(v, p); ok {
			if len(list) == 0 {
				d.errAt(resolve(v), p, "must list at least one scenario type (%s, %s), or be removed", ScenarioFixedSeqLen, ScenarioAgenticCoding)
			}
			for i, s := range list {
				if s != ScenarioFixedSeqLen && s != ScenarioAgenticCoding {
					d.errAt(resolve(v).Content[i], indexPath(p, i), "unknown scenario type %q; allowed: %s, %s", s, ScenarioFixedSeqLen, ScenarioAgenticCoding)
				}
			}
			e.ScenarioType = list
		}
	}
	if v := f.get("evals-only"); v != nil {
		e.EvalsOnly, _ = d.boolean(v, joinPath(path, "evals-only"))
	}
	if v := f.get("all-evals"); v != nil {
		e.AllEvals, _ = d.boolean(v, joinPath(path, "all-evals"))
	}
	if v := f.get("append-only"); v != nil {
		e.AppendOnly, _ = d.boolean(v, joinPath(path, "append-only"))
	}
	if v := f.get("eval-min-prefill-ep"); v != nil && !isNull(v) {
		if x, ok := d.intMin(v, joinPath(path, "eval-min-prefill-ep"), 1); ok {
			e.EvalMinPrefillEP = &x
		}
	}
	if e.AppendOnly && (e.EvalsOnly || e.AllEvals || e.EvalMinPrefillEP != nil) {
		var set []string
		for _, k := range []string{"evals-only", "all-evals", "eval-min-prefill-ep"} {
			if (k == "evals-only" && e.EvalsOnly) || (k == "all-evals" && e.AllEvals) || (k == "eval-min-prefill-ep" && e.EvalMinPrefillEP != nil) {
				set = append(set, k)
			}
		}
		d.errAt(f.keyNode("append-only"), joinPath(path, "append-only"),
			"append-only cannot be combined with eval selection (%s); append-only entries only add throughput points", strings.Join(set, ", "))
	}
	return e, len(d.errs) == before
}

func isNull(n *yaml.Node) bool {
	n = resolve(n)
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}
