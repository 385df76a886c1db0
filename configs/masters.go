package configs

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"sweep/internal/inputfile"

	"gopkg.in/yaml.v3"
)

// Allowed keys per mapping of a master config, as InferenceX's schema
// (utils/matrix_logic/validation.py) defines them.
var (
	masterKeysSingle = []string{"image", "model", "model-prefix", "runner", "precision", "framework", "multinode", "disagg", "router", "scenarios"}
	masterKeysMulti  = []string{"image", "model", "model-prefix", "runner", "precision", "framework", "multinode", "disagg", "router", "kv-p2p-transfer", "scenarios"}
	scenarioKeys     = []string{ScenarioFixedSeqLen, ScenarioAgenticCoding}
	seqLenKeys       = []string{"isl", "osl", "search-space"}
	agenticKeys      = []string{"search-space", "dram-utilization"}
	concKeys         = []string{"conc-list", "conc-start", "conc-end"}
	singleFixedKeys  = append([]string{"tp", "pp", "dcp-size", "pcp-size", "ep", "dp-attn", "spec-decoding", "router"}, concKeys...)
	multiFixedKeys   = append([]string{"prefill", "decode", "spec-decoding", "router", "kv-p2p-transfer"}, concKeys...)
	singleAgentKeys  = append([]string{"tp", "pp", "dcp-size", "pcp-size", "ep", "dp-attn", "spec-decoding", "kv-offloading", "kv-offload-backend", "router"}, concKeys...)
	multiAgentKeys   = append([]string{"prefill", "decode", "spec-decoding", "kv-offloading", "kv-offload-backend", "router", "kv-p2p-transfer"}, concKeys...)
	workerKeys       = []string{"num-worker", "tp", "pp", "dcp-size", "pcp-size", "ep", "dp-attn", "hardware", "additional-settings"}
	componentKeys    = []string{"name", "version"}
	specModes        = []string{SpecMTP, SpecDraftModel, SpecNone}
)

// generatedFields are fields the matrix generator computes; writing them in
// a master config is a mistake with a specific fix.
var generatedFields = map[string]string{
	"total-cpu-dram-gb":      "it is computed from dram-utilization and the runner's hardware in runners.yaml; set dram-utilization on the agentic-coding item instead",
	"gpus-per-node":          "it is a runner fact; set it under hardware in runners.yaml",
	"duration":               "agentic runs always last 3600 s; remove the key",
	"available-cpu-dram-mib": "it is a runner fact; set it under hardware in runners.yaml",
	"max-model-len":          "it is computed as isl+osl+256; remove the key",
	"exp-name":               "it is generated; remove the key",
	"conc":                   "use conc-list or conc-start/conc-end",
	"scenario-type":          "the scenario is given by the scenarios key the entry sits under",
	"trace-source":           "the trace corpus is chosen by the recipe, not the master config; remove the key",
}

func generatedHint(key string) string {
	if h, ok := generatedFields[key]; ok {
		return fmt.Sprintf("%q is not a master config field: %s", key, h)
	}
	return ""
}

// LoadMasters reads and checks master config files and merges them. Every
// problem in every file is reported (errors.Join of *Error sorted by file
// and line); on error the returned Masters is nil.
func LoadMasters(paths ...string) (*Masters, error) {
	srcs := make([]Source, 0, len(paths))
	var errs []*Error
	for _, p := range paths {
		data, err := inputfile.Read(p, inputfile.ConfigYAML)
		if err != nil {
			errs = append(errs, &Error{File: p, Line: 1, Col: 1, Msg: fmt.Sprintf("cannot read master config: %v", err)})
			continue
		}
		srcs = append(srcs, Source{Name: p, Data: data})
	}
	m, err := ParseMasters(srcs...)
	if len(errs) > 0 {
		errs = append(errs, Errors(err)...)
		return nil, joinErrors(errs)
	}
	return m, err
}

// Source is the name and content of one config file.
type Source struct {
	Name string // shown in error positions
	Data []byte
}

// ParseMasters is LoadMasters on in-memory files.
func ParseMasters(srcs ...Source) (*Masters, error) {
	m, errs := parseMasters(srcs)
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	return m, nil
}

// parseMasters decodes srcs and returns the entries without problems, the
// keys of those with problems (Masters.broken) and every problem, so that
// Validate can go on checking what depends on the masters.
func parseMasters(srcs []Source) (*Masters, []*Error) {
	m := &Masters{byKey: map[string]*Master{}, broken: map[string]bool{}}
	var errs []*Error
	for _, src := range srcs {
		m.Files = append(m.Files, src.Name)
		d := &decoder{file: src.Name}
		entries, broken := d.masterFile(src.Data)
		for _, k := range broken {
			m.broken[k] = true
		}
		for _, e := range entries {
			if prev, dup := m.byKey[e.Key]; dup {
				if prev.File == e.File {
					// Reported by the mapping check already.
					continue
				}
				d.errAt(posNode(e.Pos), e.Key, "key is already defined in %s:%d; keys must be unique across all master config files", prev.File, prev.Pos.Line)
				continue
			}
			m.byKey[e.Key] = e
			m.Entries = append(m.Entries, e)
		}
		errs = append(errs, d.errs...)
	}
	return m, errs
}

// masterFile decodes one master file: the entries without problems, and
// the keys of the entries with problems.
func (d *decoder) masterFile(data []byte) (out []*Master, broken []string) {
	root := d.parseDocument(data)
	if root == nil {
		if len(d.errs) == 0 {
			d.errAt(nil, "", "master config is empty; it must be a mapping of config keys to entries")
		}
		return nil, nil
	}
	top, ok := d.mapping(root, "", nil, nil)
	if !ok {
		return nil, nil
	}
	for _, key := range top.order {
		kn := top.keyNode(key)
		if strings.Contains(key, "*") {
			d.errAt(kn, key, "'*' is not allowed in master config keys; it is reserved for wildcards in perf-changelog.yaml config-keys")
			continue
		}
		if strings.TrimSpace(key) == "" || strings.ContainsAny(key, " \t") {
			d.errAt(kn, key, "config key must be non-empty and contain no whitespace")
			continue
		}
		if e := d.master(key, kn, top.get(key)); e != nil {
			out = append(out, e)
		} else {
			broken = append(broken, key)
		}
	}
	return out, broken
}

// master decodes and checks one top-level entry; nil when it has errors.
func (d *decoder) master(key string, kn, n *yaml.Node) *Master {
	before := len(d.errs)
	e := &Master{Key: key, Pos: d.pos(kn), File: d.file}

	// multinode decides the schema, so read it first.
	multinode := false
	if mn := resolve(n); mn != nil && mn.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(mn.Content); i += 2 {
			if mn.Content[i].Value == "multinode" {
				if b, ok := d.boolean(mn.Content[i+1], joinPath(key, "multinode")); ok {
					multinode = b
				}
				break
			}
		}
	}
	e.Multinode = multinode
	allowed := masterKeysSingle
	if multinode {
		allowed = masterKeysMulti
	}
	f, ok := d.mapping(n, key, allowed, func(k string) string {
		if k == "kv-p2p-transfer" {
			return "kv-p2p-transfer is only valid when multinode: true"
		}
		return generatedHint(k)
	})
	if !ok {
		return nil
	}
	d.require(f, kn, key, "image", "model", "model-prefix", "runner", "precision", "framework", "multinode", "scenarios")
	for _, name := range []string{"image", "model", "model-prefix", "runner", "precision", "framework"} {
		if n := f.get(name); n != nil {
			s, _ := d.str(n, joinPath(key, name))
			switch name {
			case "image":
				e.Image = s
				if err := CheckImage(s); s != "" && err != nil {
					d.errAt(n, joinPath(key, name), "%v", err)
				}
			case "model":
				e.Model = s
			case "model-prefix":
				e.ModelPrefix = s
			case "runner":
				e.Runner = s
				e.RunnerPos = d.pos(n)
			case "precision":
				e.Precision = s
			case "framework":
				e.Framework = Engine(s)
			}
		}
	}
	e.Disagg = d.boolPtr(f, "disagg", key)
	if n := f.keyNode("disagg"); n != nil {
		e.DisaggPos = d.pos(n)
	}
	if e.Disagg != nil && *e.Disagg && !multinode {
		d.errAt(f.get("disagg"), joinPath(key, "disagg"), "disagg: true requires multinode: true; single-node configs are never disaggregated (use false or remove the key)")
	}
	if n := f.get("router"); n != nil {
		e.Router, e.RouterPos = d.component(n, joinPath(key, "router")), d.pos(resolve(n))
	}
	if n := f.get("kv-p2p-transfer"); n != nil {
		if s, ok := d.str(n, joinPath(key, "kv-p2p-transfer")); ok {
			e.KVP2PTransfer = &s
		}
	}
	if n := f.get("scenarios"); n != nil {
		e.Scenarios = d.scenarios(n, joinPath(key, "scenarios"), multinode)
	}
	d.masterRules(e, f)
	if len(d.errs) > before {
		return nil
	}
	return e
}

// masterRules checks the rules that span several parts of an entry.
func (d *decoder) masterRules(e *Master, f fields) {
	key := e.Key
	sc := e.Scenarios
	if len(sc.AgenticCoding) > 0 && e.Runner != "" && !strings.HasPrefix(e.Runner, ClusterPrefix) {
		d.errAt(f.get("runner"), joinPath(key, "runner"),
			"agentic-coding configs must use a %q runner label so every point runs on one exact hardware fleet; got %q (e.g. cluster:mi325x-amds)",
			ClusterPrefix+"<name>", e.Runner)
	}
	var entries []*SearchSpace
	for _, c := range sc.FixedSeqLen {
		entries = append(entries, c.SearchSpace...)
	}
	for _, c := range sc.AgenticCoding {
		entries = append(entries, c.SearchSpace...)
	}
	if e.Router != nil {
		for _, s := range entries {
			if s.Router != nil {
				d.errAt(posNode(s.RouterPos), key+".router",
					"router is declared at the top level (line %d) and in this search-space entry; declare it in one place only", e.RouterPos.Line)
			}
		}
	}
	if e.KVP2PTransfer != nil {
		for _, s := range entries {
			if s.KVP2PTransfer != nil {
				d.errAt(posNode(s.Pos), key+".kv-p2p-transfer",
					"kv-p2p-transfer is declared at the top level (line %d) and in this search-space entry; declare it in one place only", f.get("kv-p2p-transfer").Line)
			}
		}
	}
	if e.Multinode && e.DisaggValue() && e.KVP2PTransfer == nil {
		// The disagg key is what asks for kv-p2p-transfer; name the entries
		// that lack it.
		var lines []string
		for _, s := range entries {
			if s.KVP2PTransfer == nil {
				lines = append(lines, strconv.Itoa(s.Pos.Line))
			}
		}
		if len(lines) > 0 || len(entries) == 0 {
			msg := "disagg: true requires kv-p2p-transfer at the top level or in every search-space entry"
			switch len(lines) {
			case 0:
			case 1:
				msg += "; the search-space entry at line " + lines[0] + " has none"
			default:
				msg += "; the search-space entries at lines " + strings.Join(lines, ", ") + " have none"
			}
			msg += ": set kv-p2p-transfer (e.g. nixl) next to disagg"
			d.errAt(f.keyNode("disagg"), joinPath(key, "disagg"), "%s", msg)
		}
	}
}

// posNode makes a position-only node for errAt.
func posNode(p Pos) *yaml.Node { return &yaml.Node{Line: p.Line, Column: p.Col} }

func (d *decoder) component(n *yaml.Node, path string) *Component {
	f, ok := d.mapping(n, path, componentKeys, nil)
	if !ok {
		return nil
	}
	c := &Component{}
	d.require(f, resolve(n), path, "name", "version")
	if v := f.get("name"); v != nil {
		c.Name, _ = d.str(v, joinPath(path, "name"))
	}
	if v := f.get("version"); v != nil {
		c.Version, _ = d.version(v, joinPath(path, "version"))
	}
	return c
}

func (d *decoder) version(n *yaml.Node, path string) (string, bool) {
	s, ok := d.str(n, path)
	if ok && strings.HasPrefix(s, "image:") {
		d.errAt(n, path, "version %q is an image reference; give the component's own release, package version or source commit", s)
		return "", false
	}
	return s, ok
}

func (d *decoder) backend(n *yaml.Node, path string) *Backend {
	f, ok := d.mapping(n, path, componentKeys, nil)
	if !ok {
		return nil
	}
	b := &Backend{Pos: d.pos(resolve(n))}
	d.require(f, resolve(n), path, "name")
	if v := f.get("name"); v != nil {
		b.Name, _ = d.str(v, joinPath(path, "name"))
	}
	if v := f.get("version"); v != nil {
		if s, ok := d.version(v, joinPath(path, "version")); ok {
			b.Version = &s
		}
	}
	return b
}

func (d *decoder) scenarios(n *yaml.Node, path string, multinode bool) Scenarios {
	sc := Scenarios{Pos: d.pos(resolve(n))}
	f, ok := d.mapping(n, path, scenarioKeys, nil)
	if !ok {
		return sc
	}
	if v := f.get(ScenarioFixedSeqLen); v != nil {
		p := joinPath(path, ScenarioFixedSeqLen)
		if items, ok := d.sequence(v, p); ok {
			sc.FixedSeqLen = make([]*SeqLenConfig, 0, len(items))
			for i, it := range items {
				if c := d.seqLen(it, indexPath(p, i), multinode); c != nil {
					sc.FixedSeqLen = append(sc.FixedSeqLen, c)
				}
			}
		}
	}
	if v := f.get(ScenarioAgenticCoding); v != nil {
		p := joinPath(path, ScenarioAgenticCoding)
		if items, ok := d.sequence(v, p); ok {
			sc.AgenticCoding = make([]*AgenticConfig, 0, len(items))
			for i, it := range items {
				if c := d.agentic(it, indexPath(p, i), multinode); c != nil {
					sc.AgenticCoding = append(sc.AgenticCoding, c)
				}
			}
		}
	}
	if empty(f, ScenarioFixedSeqLen) && empty(f, ScenarioAgenticCoding) {
		d.errAt(resolve(n), path, "at least one scenario must be given: a non-empty fixed-seq-len or agentic-coding list")
	}
	return sc
}

// empty reports whether the key is absent or an empty list.
func empty(f fields, name string) bool {
	n := resolve(f.get(name))
	return n == nil || (n.Kind == yaml.SequenceNode && len(n.Content) == 0) || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

func (d *decoder) seqLen(n *yaml.Node, path string, multinode bool) *SeqLenConfig {
	f, ok := d.mapping(n, path, seqLenKeys, generatedHint)
	if !ok {
		return nil
	}
	c := &SeqLenConfig{Pos: d.pos(resolve(n))}
	d.require(f, resolve(n), path, seqLenKeys...)
	if v := f.get("isl"); v != nil {
		c.ISL, _ = d.intMin(v, joinPath(path, "isl"), 1)
	}
	if v := f.get("osl"); v != nil {
		c.OSL, _ = d.intMin(v, joinPath(path, "osl"), 1)
	}
	if v := f.get("search-space"); v != nil {
		c.SearchSpace = d.searchSpaceList(v, joinPath(path, "search-space"), multinode, false)
	}
	return c
}

func (d *decoder) agentic(n *yaml.Node, path string, multinode bool) *AgenticConfig {
	f, ok := d.mapping(n, path, agenticKeys, generatedHint)
	if !ok {
		return nil
	}
	c := &AgenticConfig{Pos: d.pos(resolve(n))}
	d.require(f, resolve(n), path, "search-space")
	if v := f.get("dram-utilization"); v != nil {
		p := joinPath(path, "dram-utilization")
		if x, ok := d.number(v, p); ok {
			if x <= 0 || x > 1 {
				d.errAt(v, p, "must be in (0, 1], got %s: the fraction of the node's available CPU DRAM given to KV offload", v.Value)
			} else {
				c.DRAMUtilization = &x
			}
		}
	}
	if v := f.get("search-space"); v != nil {
		c.SearchSpace = d.searchSpaceList(v, joinPath(path, "search-space"), multinode, true)
	}
	if !f.has("dram-utilization") {
		for _, s := range c.SearchSpace {
			if s.KVOffloadingValue() == KVOffloadDRAM {
				d.errAt(posNode(s.Pos), joinPath(path, "dram-utilization"),
					"kv-offloading: dram in this search-space entry requires dram-utilization (0, 1] on the agentic-coding item (line %d)", c.Pos.Line)
			}
		}
	}
	return c
}

func (d *decoder) searchSpaceList(n *yaml.Node, path string, multinode, agentic bool) []*SearchSpace {
	items, ok := d.sequence(n, path)
	if !ok {
		return nil
	}
	if len(items) == 0 {
		d.errAt(resolve(n), path, "must list at least one search-space entry")
	}
	out := make([]*SearchSpace, 0, len(items))
	for i, it := range items {
		if s := d.searchSpace(it, indexPath(path, i), multinode, agentic); s != nil {
			out = append(out, s)
		}
	}
	return out
}

func (d *decoder) searchSpace(n *yaml.Node, path string, multinode, agentic bool) *SearchSpace {
	var allowed []string
	switch {
	case multinode && agentic:
		allowed = multiAgentKeys
	case multinode:
		allowed = multiFixedKeys
	case agentic:
		allowed = singleAgentKeys
	default:
		allowed = singleFixedKeys
	}
	hint := func(k string) string {
		if h := generatedHint(k); h != "" {
			return h
		}
		switch {
		case k == "kv-p2p-transfer" && !multinode:
			return "kv-p2p-transfer is only valid when multinode: true"
		case (k == "prefill" || k == "decode") && !multinode:
			return fmt.Sprintf("%s workers are only valid when multinode: true; single-node entries use tp", k)
		case containsStr([]string{"tp", "pp", "dcp-size", "pcp-size", "ep", "dp-attn"}, k) && multinode:
			return fmt.Sprintf("multinode entries set %s inside the prefill and decode worker blocks", k)
		case (k == "kv-offloading" || k == "kv-offload-backend") && !agentic:
			return fmt.Sprintf("%s is only valid in agentic-coding search-space entries", k)
		}
		return ""
	}
	nn := resolve(n)
	f, ok := d.mapping(n, path, allowed, hint)
	if !ok {
		return nil
	}
	s := &SearchSpace{Pos: d.pos(nn)}
	if multinode {
		d.require(f, nn, path, "prefill", "decode")
		if v := f.get("prefill"); v != nil {
			s.Prefill = d.worker(v, joinPath(path, "prefill"))
			s.PrefillPos = d.pos(f.keyNode("prefill"))
		}
		if v := f.get("decode"); v != nil {
			s.Decode = d.worker(v, joinPath(path, "decode"))
		}
		if s.Prefill != nil && s.Decode != nil && (s.Prefill.Hardware == nil) != (s.Decode.Hardware == nil) {
			d.errAt(nn, joinPath(path, "hardware"), "hardware must be given for both prefill and decode workers, or for neither")
		}
	} else {
		d.require(f, nn, path, "tp")
		if v := f.get("tp"); v != nil {
			if tp, ok := d.intMin(v, joinPath(path, "tp"), 1); ok {
				s.TP = &tp
			}
		}
		s.PP = d.intPtr(f, "pp", path, 1)
		s.DCPSize = d.intPtr(f, "dcp-size", path, 1)
		s.PCPSize = d.intPtr(f, "pcp-size", path, 1)
		s.EP = d.intPtr(f, "ep", path, 1)
		s.DPAttn = d.boolPtr(f, "dp-attn", path)
		if s.TP != nil && s.DCPSize != nil && *s.TP%*s.DCPSize != 0 {
			d.errAt(f.get("dcp-size"), joinPath(path, "dcp-size"), "tp (%d) must be divisible by dcp-size (%d)", *s.TP, *s.DCPSize)
		}
	}
	if v := f.get("spec-decoding"); v != nil {
		p := joinPath(path, "spec-decoding")
		if x, ok := d.str(v, p); ok {
			if !containsStr(specModes, x) {
				d.errAt(v, p, "unknown spec-decoding %q; allowed: %s", x, strings.Join(specModes, ", "))
			} else {
				s.SpecDecoding = &x
			}
		}
	}
	if v := f.get("router"); v != nil {
		s.Router, s.RouterPos = d.component(v, joinPath(path, "router")), d.pos(resolve(v))
	}
	if v := f.get("kv-p2p-transfer"); v != nil {
		if x, ok := d.str(v, joinPath(path, "kv-p2p-transfer")); ok {
			s.KVP2PTransfer = &x
		}
	}
	d.conc(s, f, nn, path)
	if agentic {
		d.kvOffload(s, f, nn, path, multinode)
	}
	return s
}

// MaxConc is the largest concurrency a search space may ask for: 4x the
// largest InferenceX's configs use (16384), and as many requests in
// flight as one client has ports. Anything above is a mistake (a proposal
// from a broken result wrote 1e18).
const MaxConc = 65536

// concTooBig is the message for a concurrency above MaxConc.
func concTooBig(v int64) string {
	return fmt.Sprintf("concurrency %d is above %d (the largest InferenceX's configs use is 16384); use a real concurrency", v, MaxConc)
}

func (d *decoder) conc(s *SearchSpace, f fields, at *yaml.Node, path string) {
	listN, startN, endN := f.get("conc-list"), f.get("conc-start"), f.get("conc-end")
	if listN != nil {
		p := joinPath(path, "conc-list")
		if items, ok := d.sequence(listN, p); ok {
			if len(items) == 0 {
				d.errAt(resolve(listN), p, "must list at least one concurrency")
			}
			s.ConcList = make([]int, 0, len(items))
			for i, it := range items {
				if v, ok := d.integer(it, indexPath(p, i)); ok {
					if v <= 0 {
						d.errAt(it, indexPath(p, i), "concurrency must be > 0, got %d", v)
						continue
					}
					if v > MaxConc {
						d.errAt(it, indexPath(p, i), "%s", concTooBig(v))
						continue
					}
					if j := slices.Index(s.ConcList, int(v)); j >= 0 {
						d.errAt(it, indexPath(p, i), "concurrency %d is listed twice; each point runs once, remove the repeat", v)
						continue
					}
					s.ConcList = append(s.ConcList, int(v))
				}
			}
		}
	}
	if startN != nil {
		p := joinPath(path, "conc-start")
		if v, ok := d.integer(startN, p); ok {
			if v <= 0 {
				d.errAt(startN, p, "must be > 0, got %d", v)
			} else if v > MaxConc {
				d.errAt(startN, p, "%s", concTooBig(v))
			} else {
				x := int(v)
				s.ConcStart = &x
			}
		}
	}
	if endN != nil {
		p := joinPath(path, "conc-end")
		if v, ok := d.integer(endN, p); ok {
			if v <= 0 {
				d.errAt(endN, p, "must be > 0, got %d", v)
			} else if v > MaxConc {
				d.errAt(endN, p, "%s", concTooBig(v))
			} else {
				x := int(v)
				s.ConcEnd = &x
			}
		}
	}
	switch {
	case listN != nil && (startN != nil || endN != nil):
		other := startN
		if other == nil {
			other = endN
		}
		d.errAt(f.keyNode("conc-list"), joinPath(path, "conc-list"),
			"conc-list and conc-start/conc-end are both given (line %d); use either an explicit list or a range, not both", other.Line)
	case listN == nil && startN == nil && endN == nil:
		d.errAt(at, path, "no concurrency given; set conc-list: [..] or both conc-start and conc-end")
	case listN == nil && (startN == nil || endN == nil):
		missing, given := "conc-end", f.keyNode("conc-start")
		if startN == nil {
			missing, given = "conc-start", f.keyNode("conc-end")
		}
		d.errAt(given, joinPath(path, missing), "%s is missing; conc-start and conc-end must be given together", missing)
	case s.ConcStart != nil && s.ConcEnd != nil && *s.ConcStart > *s.ConcEnd:
		d.errAt(startN, joinPath(path, "conc-start"), "conc-start (%d) must be <= conc-end (%d)", *s.ConcStart, *s.ConcEnd)
	}
}

func (d *decoder) kvOffload(s *SearchSpace, f fields, at *yaml.Node, path string, multinode bool) {
	modeN, backN := f.get("kv-offloading"), f.get("kv-offload-backend")
	if modeN != nil {
		s.KVOffloadingPos = d.pos(f.keyNode("kv-offloading"))
		p := joinPath(path, "kv-offloading")
		if x, ok := d.str(modeN, p); ok {
			if !containsStr(KVOffloadModes(), x) {
				d.errAt(modeN, p, "unknown kv-offloading %q; allowed: %s", x, strings.Join(KVOffloadModes(), ", "))
			} else {
				s.KVOffloading = &x
			}
		}
	}
	if backN != nil {
		s.KVOffloadBackend = d.backend(backN, joinPath(path, "kv-offload-backend"))
	}
	switch {
	case modeN == nil && !multinode:
		d.errAt(at, joinPath(path, "kv-offloading"), "required key is missing: single-node agentic entries must set kv-offloading (none or dram)")
	case modeN == nil && backN != nil:
		d.errAt(f.keyNode("kv-offload-backend"), joinPath(path, "kv-offload-backend"), "kv-offload-backend requires kv-offloading: dram")
	case s.KVOffloading != nil && *s.KVOffloading == KVOffloadNone && backN != nil:
		d.errAt(f.keyNode("kv-offload-backend"), joinPath(path, "kv-offload-backend"), "kv-offload-backend can only be set when kv-offloading is dram (it is none); remove the backend or use dram")
	case s.KVOffloading != nil && *s.KVOffloading == KVOffloadDRAM && backN == nil:
		d.errAt(f.keyNode("kv-offloading"), joinPath(path, "kv-offload-backend"), "kv-offloading: dram requires kv-offload-backend: {name: ...} (e.g. hicache)")
	}
}

func (d *decoder) worker(n *yaml.Node, path string) *Worker {
	nn := resolve(n)
	f, ok := d.mapping(n, path, workerKeys, generatedHint)
	if !ok {
		return nil
	}
	w := &Worker{Pos: d.pos(nn), Keys: f.order}
	d.require(f, nn, path, "num-worker", "tp", "ep", "dp-attn")
	if v := f.get("num-worker"); v != nil {
		w.NumWorker, _ = d.intMin(v, joinPath(path, "num-worker"), 0)
	}
	if v := f.get("tp"); v != nil {
		w.TP, _ = d.intMin(v, joinPath(path, "tp"), 1)
	}
	if v := f.get("ep"); v != nil {
		w.EP, _ = d.intMin(v, joinPath(path, "ep"), 1)
	}
	if v := f.get("dp-attn"); v != nil {
		w.DPAttn, _ = d.boolean(v, joinPath(path, "dp-attn"))
	}
	w.PP = d.intPtr(f, "pp", path, 1)
	w.DCPSize = d.intPtr(f, "dcp-size", path, 1)
	w.PCPSize = d.intPtr(f, "pcp-size", path, 1)
	if w.TP > 0 && w.DCPSize != nil && w.TP%*w.DCPSize != 0 {
		d.errAt(f.get("dcp-size"), joinPath(path, "dcp-size"), "tp (%d) must be divisible by dcp-size (%d)", w.TP, *w.DCPSize)
	}
	w.Hardware = d.strPtr(f, "hardware", path)
	if v := f.get("additional-settings"); v != nil {
		p := joinPath(path, "additional-settings")
		if list, ok := d.strList(v, p); ok {
			w.AdditionalSettings = list
			if w.AdditionalSettings == nil {
				w.AdditionalSettings = []string{}
			}
		}
	}
	return w
}
