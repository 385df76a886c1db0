package matrix

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"sweep/configs"
	"sweep/internal/pyjson"
)

// ChangelogOptions are the inputs of ProcessChangelog.
type ChangelogOptions struct {
	// Base and Head are perf-changelog.yaml before and after the change.
	// Head must only add lines to Base.
	Base, Head configs.Source
	// BaseRef and HeadRef are recorded in the result's changelog_metadata
	// (InferenceX records the git commits).
	BaseRef, HeadRef string
	// TrimConc keeps one concurrency per configuration (--trim-conc).
	TrimConc bool
	// AllEvals widens every entry's eval selection (--all-evals).
	AllEvals bool
	// EvalsOnly suppresses throughput rows of every entry (--evals-only).
	EvalsOnly bool
	// BaseInputs loads the master configs and runners.yaml as they were
	// at the base. Only append-only entries need it; when it is nil they
	// fail.
	BaseInputs func() (*configs.Masters, *configs.Runners, error)
}

// Changelog is the sweep a changelog change asks for, as
// process_changelog.py prints it: throughput rows in buckets by node type
// and scenario, eval rows in their own lists, and the new entries.
// MarshalJSON writes it byte for byte as the Python tool does.
type Changelog struct {
	// SingleNode and MultiNode hold throughput rows by bucket: "1k1k",
	// "8k1k", "<isl>_<osl>" for fixed-seq-len rows, "agentic" for
	// agentic-coding rows, in the order buckets were first filled.
	SingleNode []Bucket
	MultiNode  []Bucket
	// Eval rows by shape.
	Evals                 Matrix // fixed-seq-len single-node
	AgenticEvals          Matrix // agentic-coding single-node
	MultinodeEvals        Matrix // fixed-seq-len multi-node
	MultinodeAgenticEvals Matrix // agentic-coding multi-node
	Metadata              ChangelogMetadata
}

// Bucket is a named list of throughput rows.
type Bucket struct {
	Name string
	Rows Matrix
}

// SingleNodeRows are the single-node throughput rows of the bucket name
// ("agentic", "1k1k", ...); nil when there is none.
func (c *Changelog) SingleNodeRows(name string) Matrix {
	var rows Matrix
	for _, b := range c.SingleNode {
		if b.Name == name {
			rows = append(rows, b.Rows...)
		}
	}
	return rows
}

// ChangelogMetadata records where a Changelog came from.
type ChangelogMetadata struct {
	BaseRef string
	HeadRef string
	Entries []configs.ChangelogEntry // the added entries, in file order
}

// Throughput returns every throughput row, single-node buckets first.
func (c *Changelog) Throughput() Matrix {
	var out Matrix
	for _, b := range c.SingleNode {
		out = append(out, b.Rows...)
	}
	for _, b := range c.MultiNode {
		out = append(out, b.Rows...)
	}
	return out
}

// ProcessChangelog turns the entries a change appends to
// perf-changelog.yaml into the sweep they ask for, exactly as InferenceX's
// utils/process_changelog.py does:
//
//  1. the added lines are parsed as changelog entries (any removed line
//     that is not blank is an error, *DeletionError);
//  2. each entry's config-keys are resolved against the master configs
//     ('*' matches any run of characters);
//  3. entries with all-evals go first; per config and scenario only the
//     first entry generates rows, so overlapping entries do not duplicate
//     points;
//  4. throughput rows are the test-config matrix without evals (skipped
//     for evals-only and all-evals entries); for append-only entries only
//     the points missing from the base's matrix, which must otherwise be
//     unchanged;
//  5. eval rows are the test-config matrix with --evals-only (and
//     --all-evals when asked), minus multi-node rows whose prefill ep is
//     below eval-min-prefill-ep;
//  6. with TrimConc each configuration keeps its lowest concurrency;
//  7. every throughput row gets its recipe-fingerprint (Fingerprint).
func (g *Generator) ProcessChangelog(o ChangelogOptions) (*Changelog, error) {
	entries, appendOnly, err := addedEntries(o)
	if err != nil {
		return nil, err
	}
	all := g.Masters.Keys()
	res := make([]resolvedEntry, 0, len(entries))
	for _, e := range entries {
		keys, err := changelogKeys(e.ConfigKeys, all)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Pos, err)
		}
		res = append(res, resolvedEntry{e, keys})
	}
	var base *Generator
	if appendOnly {
		if base, err = g.appendOnlyBase(o, res); err != nil {
			return nil, err
		}
	}
	// All-evals entries first, so their wider eval selection wins.
	slices.SortStableFunc(res, func(a, b resolvedEntry) int {
		switch {
		case a.entry.AllEvals == b.entry.AllEvals:
			return 0
		case a.entry.AllEvals:
			return -1
		}
		return 1
	})
	throughput, evals, err := g.changelogRows(o, res, base)
	if err != nil {
		return nil, err
	}
	if o.TrimConc {
		throughput = trimConc(throughput)
	}
	return bucketChangelog(o, entries, throughput, evals), nil
}

// resolvedEntry is a changelog entry with its config-key patterns
// expanded.
type resolvedEntry struct {
	entry configs.ChangelogEntry
	keys  []string
}

// addedEntries parses the changelog entries head adds to base (steps 1
// and 2) and reports whether they are append-only (all or none may be).
func addedEntries(o ChangelogOptions) ([]configs.ChangelogEntry, bool, error) {
	added, err := addedLines(o.Base.Name, o.Base.Data, o.Head.Data)
	if err != nil {
		return nil, false, err
	}
	if strings.TrimSpace(added) == "" {
		return nil, false, fmt.Errorf("%s: no additions found in the changelog (compared with %s)", o.Head.Name, o.Base.Name)
	}
	entries, err := configs.ParseChangelog(o.Head.Name, []byte(added))
	if err != nil {
		return nil, false, fmt.Errorf("added changelog entries: %w", err)
	}
	if len(entries) == 0 {
		return nil, false, fmt.Errorf("%s: the added lines hold no changelog entries", o.Head.Name)
	}
	appendOnly := 0
	for _, e := range entries {
		if e.AppendOnly {
			appendOnly++
		}
	}
	if appendOnly > 0 && appendOnly < len(entries) {
		return nil, false, errors.New("append-only entries cannot share a sweep with regular changelog entries")
	}
	if appendOnly > 0 && (o.AllEvals || o.EvalsOnly) {
		return nil, false, errors.New("append-only sweeps cannot use all-evals or evals-only modifiers")
	}
	return entries, appendOnly > 0, nil
}

// appendOnlyBase loads the base revision's inputs of an append-only sweep
// and checks that every selected config exists there and changed only by
// appending.
func (g *Generator) appendOnlyBase(o ChangelogOptions, res []resolvedEntry) (*Generator, error) {
	if o.BaseInputs == nil {
		return nil, errors.New("append-only entries need the base revision's master configs and runners.yaml, and none were given")
	}
	bm, br, err := o.BaseInputs()
	if err != nil {
		return nil, fmt.Errorf("append-only base inputs: %w", err)
	}
	selected := map[string][]string{}
	var order []string
	for _, r := range res {
		scen := entryScenarios(r.entry)
		for _, k := range r.keys {
			if _, ok := selected[k]; !ok {
				order = append(order, k)
			}
			for _, s := range scen {
				if !slices.Contains(selected[k], s) {
					selected[k] = append(selected[k], s)
				}
			}
		}
	}
	var missing []string
	for _, k := range order {
		if _, ok := bm.Lookup(k); !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, fmt.Errorf("append-only requires every selected config to exist in the base revision; missing: %s", strings.Join(missing, ", "))
	}
	if err := checkAppendOnlyScope(bm, g.Masters, selected); err != nil {
		return nil, err
	}
	return &Generator{Masters: bm, Runners: br}, nil
}

// changelogRows expands the entries into throughput and eval rows (steps
// 3 to 5); base is the base revision's generator of an append-only sweep.
func (g *Generator) changelogRows(o ChangelogOptions, res []resolvedEntry, base *Generator) (throughput, evals Matrix, err error) {
	benchSeen := map[string][]string{}
	evalSeen := map[string][]string{}
	for _, r := range res {
		e := r.entry
		scen := entryScenarios(e)
		if !(o.EvalsOnly || e.EvalsOnly || e.AllEvals) {
			for _, grp := range unseenGroups(r.keys, scen, benchSeen) {
				rows, err := g.entryThroughputRows(e, grp, base)
				if err != nil {
					return nil, nil, err
				}
				throughput = append(throughput, rows...)
			}
		}
		if e.AppendOnly {
			continue
		}
		for _, grp := range unseenGroups(r.keys, scen, evalSeen) {
			rows, err := g.TestConfig(TestConfigOptions{
				ConfigKeys:    grp.keys,
				ScenarioTypes: grp.scenarios,
				EvalOptions:   EvalOptions{EvalsOnly: true, AllEvals: o.AllEvals || e.AllEvals},
			})
			if err != nil {
				return nil, nil, err
			}
			evals = append(evals, filterByPrefillEP(rows, e.EvalMinPrefillEP)...)
		}
	}
	return throughput, evals, nil
}

// entryThroughputRows is one group's throughput rows of entry e; for an
// append-only entry only the rows base does not have.
func (g *Generator) entryThroughputRows(e configs.ChangelogEntry, grp configGroup, base *Generator) (Matrix, error) {
	opts := TestConfigOptions{ConfigKeys: grp.keys, EvalOptions: EvalOptions{NoEvals: true}}
	if len(grp.scenarios) < len(scenarioOrder) {
		opts.ScenarioTypes = grp.scenarios
	}
	rows, err := g.TestConfig(opts)
	if err != nil || !e.AppendOnly {
		return rows, err
	}
	baseRows, err := base.TestConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("append-only base matrix: %w", err)
	}
	if rows, err = appendOnlyDelta(baseRows, rows); err != nil {
		return nil, fmt.Errorf("%s: %w", e.Pos, err)
	}
	return rows, nil
}

// bucketChangelog stamps the throughput rows' fingerprints and sorts rows
// into the changelog's buckets (steps 6 and 7's output).
func bucketChangelog(o ChangelogOptions, entries []configs.ChangelogEntry, throughput, evals Matrix) *Changelog {
	out := &Changelog{Metadata: ChangelogMetadata{BaseRef: o.BaseRef, HeadRef: o.HeadRef, Entries: entries}}
	for _, r := range throughput {
		r.StampFingerprint()
		name := "agentic"
		if !r.Kind.Agentic() {
			name = SeqLenName(r.ISL, r.OSL)
		}
		if r.Kind.MultiNode() {
			out.MultiNode = addToBucket(out.MultiNode, name, r)
		} else {
			out.SingleNode = addToBucket(out.SingleNode, name, r)
		}
	}
	for _, r := range evals {
		switch r.Kind {
		case FixedSingleNode:
			out.Evals = append(out.Evals, r)
		case AgenticSingleNode:
			out.AgenticEvals = append(out.AgenticEvals, r)
		case FixedMultiNode:
			out.MultinodeEvals = append(out.MultinodeEvals, r)
		case AgenticMultiNode:
			out.MultinodeAgenticEvals = append(out.MultinodeAgenticEvals, r)
		}
	}
	return out
}

func addToBucket(bs []Bucket, name string, r *Row) []Bucket {
	for i := range bs {
		if bs[i].Name == name {
			bs[i].Rows = append(bs[i].Rows, r)
			return bs
		}
	}
	return append(bs, Bucket{Name: name, Rows: Matrix{r}})
}

// entryScenarios returns the scenarios an entry selects, in processing
// order.
func entryScenarios(e configs.ChangelogEntry) []string {
	if len(e.ScenarioType) == 0 {
		return scenarioOrder[:]
	}
	var out []string
	for _, s := range scenarioOrder {
		if slices.Contains(e.ScenarioType, s) {
			out = append(out, s)
		}
	}
	return out
}

type configGroup struct {
	scenarios []string
	keys      []string
}

// unseenGroups marks the entry's scenarios of each config as seen and
// groups the configs by the scenarios that were not seen before, in the
// order the groups first appear.
func unseenGroups(keys, scenarios []string, seen map[string][]string) []configGroup {
	var groups []configGroup
	for _, k := range keys {
		var unseen []string
		for _, s := range scenarios {
			if !slices.Contains(seen[k], s) {
				unseen = append(unseen, s)
			}
		}
		if len(unseen) == 0 {
			continue
		}
		seen[k] = append(seen[k], unseen...)
		i := slices.IndexFunc(groups, func(g configGroup) bool { return slices.Equal(g.scenarios, unseen) })
		if i < 0 {
			groups = append(groups, configGroup{scenarios: unseen})
			i = len(groups) - 1
		}
		groups[i].keys = append(groups[i].keys, k)
	}
	return groups
}

// filterByPrefillEP drops multi-node rows whose prefill ep is below min.
func filterByPrefillEP(rows Matrix, min *int) Matrix {
	if min == nil {
		return rows
	}
	out := rows[:0:0]
	for _, r := range rows {
		if r.Prefill != nil && r.Prefill.EP < *min {
			continue
		}
		out = append(out, r)
	}
	return out
}

// trimConc keeps the lowest concurrency of each configuration: single-node
// rows that differ only in conc and exp-name collapse to the first row
// with the lowest conc; multi-node rows keep only their lowest conc.
func trimConc(rows Matrix) Matrix {
	type group struct{ keep int }
	groups := map[string]*group{}
	drop := make([]bool, len(rows))
	out := make(Matrix, len(rows))
	for i, r := range rows {
		if r.Kind.MultiNode() {
			if len(r.Concs) > 1 {
				c := r.Clone()
				c.Concs = []int{slices.Min(r.Concs)}
				r = c
			}
			out[i] = r
			continue
		}
		out[i] = r
		key := string(appendRowJSON(nil, r, styleCanonical, trimSkip))
		g, ok := groups[key]
		if !ok {
			groups[key] = &group{keep: i}
			continue
		}
		if r.Conc < out[g.keep].Conc {
			drop[g.keep] = true
			g.keep = i
		} else {
			drop[i] = true
		}
	}
	kept := out[:0]
	for i, r := range out {
		if !drop[i] {
			kept = append(kept, r)
		}
	}
	return kept
}

// MarshalJSON writes the changelog byte for byte as process_changelog.py
// prints it: pydantic's model_dump_json(by_alias=True, exclude_none=True)
// of its ChangelogMatrixEntry model, so compact, UTF-8, rows in model field
// order with the models' defaults (eval-only false, additional-settings
// []) filled in.
func (c *Changelog) MarshalJSON() ([]byte, error) {
	return c.AppendJSON(nil), nil
}

// AppendJSON appends the changelog as MarshalJSON writes it.
func (c *Changelog) AppendJSON(b []byte) []byte {
	buckets := func(b []byte, bs []Bucket) []byte {
		b = append(b, '{')
		for i, bk := range bs {
			if i > 0 {
				b = append(b, ',')
			}
			b = pyjson.AppendString(b, bk.Name, false)
			b = append(b, ':')
			b = appendRows(b, bk.Rows)
		}
		return append(b, '}')
	}
	b = append(b, `{"single_node":`...)
	b = buckets(b, c.SingleNode)
	b = append(b, `,"multi_node":`...)
	b = buckets(b, c.MultiNode)
	b = append(b, `,"evals":`...)
	b = appendRows(b, c.Evals)
	b = append(b, `,"agentic_evals":`...)
	b = appendRows(b, c.AgenticEvals)
	b = append(b, `,"multinode_evals":`...)
	b = appendRows(b, c.MultinodeEvals)
	b = append(b, `,"multinode_agentic_evals":`...)
	b = appendRows(b, c.MultinodeAgenticEvals)
	b = append(b, `,"changelog_metadata":{"base_ref":`...)
	b = pyjson.AppendString(b, c.Metadata.BaseRef, false)
	b = append(b, `,"head_ref":`...)
	b = pyjson.AppendString(b, c.Metadata.HeadRef, false)
	b = append(b, `,"entries":[`...)
	for i, e := range c.Metadata.Entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendEntryJSON(b, e)
	}
	return append(b, "]}}"...)
}

func appendRows(b []byte, rows Matrix) []byte {
	b = append(b, '[')
	for i, r := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendRowJSON(b, r, stylePydantic, 0)
	}
	return append(b, ']')
}

// appendEntryJSON writes a changelog entry as InferenceX's ChangelogEntry
// model dumps it (defaults filled in, unset optional fields left out).
func appendEntryJSON(b []byte, e configs.ChangelogEntry) []byte {
	const s = stylePydantic
	b = append(b, `{"config-keys":`...)
	b = appendStringList(b, e.ConfigKeys, s)
	b = append(b, `,"description":`...)
	b = appendStringList(b, e.Description, s)
	b = append(b, `,"pr-link":`...)
	b = pyjson.AppendString(b, e.PRLink, false)
	b = append(b, `,"evals-only":`...)
	b = strconv.AppendBool(b, e.EvalsOnly)
	b = append(b, `,"all-evals":`...)
	b = strconv.AppendBool(b, e.AllEvals)
	b = append(b, `,"append-only":`...)
	b = strconv.AppendBool(b, e.AppendOnly)
	if e.EvalMinPrefillEP != nil {
		b = append(b, `,"eval-min-prefill-ep":`...)
		b = strconv.AppendInt(b, int64(*e.EvalMinPrefillEP), 10)
	}
	if e.ScenarioType != nil {
		b = append(b, `,"scenario-type":`...)
		b = appendStringList(b, e.ScenarioType, s)
	}
	return append(b, '}')
}

// AppendChangelogJSON appends r as changelog processing prints its rows
// (pydantic's dump: model defaults filled in), the form CI jobs receive.
func (r *Row) AppendChangelogJSON(b []byte) []byte {
	return appendRowJSON(b, r, stylePydantic, 0)
}
