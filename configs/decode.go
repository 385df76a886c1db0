package configs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sweep/internal/textdiff"

	"gopkg.in/yaml.v3"
)

// decoder walks yaml.v3 nodes of one file and collects every problem it
// finds instead of stopping at the first.
type decoder struct {
	file string
	errs []*Error
	// merges memoises mergedPairs per mapping node, so a mapping merged
	// from many places (a merge-key bomb: <<: [*a, *a] nested) is
	// expanded once.
	merges map[*yaml.Node][]*yaml.Node
	// inMerge marks mappings being expanded, to refuse merge cycles.
	inMerge map[*yaml.Node]bool
}

// maxMergedKeys bounds the keys one mapping may gain through merge keys;
// past it the file is refused instead of expanded.
const maxMergedKeys = 10000

// errAt records a problem at node n (nil n means the top of the file).
func (d *decoder) errAt(n *yaml.Node, key, format string, args ...any) {
	line, col := 1, 1
	if n != nil {
		line, col = n.Line, n.Column
	}
	d.errs = append(d.errs, &Error{File: d.file, Line: line, Col: col, Key: key, Msg: fmt.Sprintf(format, args...)})
}

func (d *decoder) pos(n *yaml.Node) Pos {
	if n == nil {
		return Pos{File: d.file, Line: 1, Col: 1}
	}
	return Pos{File: d.file, Line: n.Line, Col: n.Column}
}

// parseDocument parses data into its root content node. A syntax error is
// recorded with the line yaml.v3 reports; an empty document gives nil.
func (d *decoder) parseDocument(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		d.syntaxErr(data, err)
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		d.errAt(&extra, "", "a second YAML document starts here; the file must hold exactly one document")
	} else if !errors.Is(err, io.EOF) {
		d.syntaxErr(data, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil
	}
	return doc.Content[0]
}

// syntaxErr records err, a syntax error yaml.v3 returned for data, at the
// line and column of the token the parser stopped at, and names the
// construct it was inside when that starts elsewhere.
func (d *decoder) syntaxErr(data []byte, err error) {
	msg := err.Error()
	reported := 0 // yaml.v3's line, 0 when it gave none
	if m := yamlErrLine.FindStringSubmatch(msg); m != nil {
		reported, _ = strconv.Atoi(m[1])
		msg = m[2]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	construct, isParser := parserConstructs[msg]
	ctxLine := reported // 1-based line of the construct yaml.v3 names
	if isParser && reported > 0 {
		ctxLine = reported + 1
	}
	line, col := syntaxPos(data, err.Error())
	if line == 0 {
		line, col = max(ctxLine, 1), 1
	}
	text := "invalid YAML: " + msg
	if ctxLine > 0 && ctxLine < line {
		switch construct {
		case "block mapping", "block sequence":
			c := blockColumn(data, ctxLine, construct == "block mapping")
			what := "keys"
			if construct == "block sequence" {
				what = "'-' items"
			}
			text += fmt.Sprintf("; this line (column %d) does not continue the %s that starts at line %d (%s at column %d): indent it like its siblings, or fix the earlier line that opened a deeper block",
				col, construct, ctxLine, what, c)
		case "flow sequence", "flow mapping":
			text += fmt.Sprintf("; the cause is the %s opened at line %d: it is not closed before here (a missing ',' or closing bracket)", construct, ctxLine)
		case "node":
			text += fmt.Sprintf("; the value that starts at line %d has no content", ctxLine)
		default:
			text += fmt.Sprintf("; the cause is the token that starts at line %d (an unclosed quote or key)", ctxLine)
		}
	}
	d.errs = append(d.errs, &Error{File: d.file, Line: line, Col: col, Msg: text})
}

// resolve follows aliases.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "null"
		case "!!bool":
			return "a boolean"
		case "!!int":
			return "an integer"
		case "!!float":
			return "a number"
		}
		return "a string"
	}
	return "a YAML node"
}

// field is one key/value pair of a mapping.
type field struct {
	name     string
	key, val *yaml.Node // val is nil for keys that were rejected
}

// fields is the checked content of a mapping node. Mappings are small, so
// lookups scan a slice.
type fields struct {
	list  []field
	order []string // accepted keys in file order
	// typoFor holds allowed keys that an unknown key probably misspells;
	// require does not report them missing a second time.
	typoFor map[string]bool
}

func (f fields) find(name string) *field {
	for i := range f.list {
		if f.list[i].name == name {
			return &f.list[i]
		}
	}
	return nil
}

func (f fields) has(name string) bool { return f.get(name) != nil }

// get returns the value node of name, nil when absent or rejected.
func (f fields) get(name string) *yaml.Node {
	if fl := f.find(name); fl != nil {
		return fl.val
	}
	return nil
}

// keyNode returns the key node of name, nil when absent or rejected.
func (f fields) keyNode(name string) *yaml.Node {
	if fl := f.find(name); fl != nil && fl.val != nil {
		return fl.key
	}
	return nil
}

// mapping checks that n is a mapping whose keys are plain strings, appear
// once and are in allowed (nil allowed means any key). Unknown and
// duplicate keys are reported at the key's line; the returned fields hold
// the keys that passed. ok is false when n is not a mapping at all.
func (d *decoder) mapping(n *yaml.Node, path string, allowed []string, hint func(key string) string) (fields, bool) {
	n = resolve(n)
	var f fields
	if n == nil || n.Kind != yaml.MappingNode {
		if n == nil {
			d.errAt(n, path, "must be a mapping")
		} else {
			d.errAt(n, path, "must be a mapping, got %s", kindName(n))
		}
		return f, false
	}
	pairs := d.mergedPairs(n, path)
	size := len(pairs) / 2
	f.list = make([]field, 0, size)
	f.order = make([]string, 0, size)
	var index map[string]int // for large mappings only
	if size > 16 {
		index = make(map[string]int, size)
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		k, v := resolve(pairs[i]), pairs[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errAt(k, path, "key %s is not allowed: keys must be plain strings", quoteNodeValue(k))
			continue
		}
		if k.ShortTag() != "!!str" {
			d.errAt(k, joinPath(path, k.Value), "key %q is read as %s, not a string; quote it", k.Value, kindName(k))
			continue
		}
		name := k.Value
		p := joinPath(path, name)
		var prev *field
		if index != nil {
			if j, ok := index[name]; ok {
				prev = &f.list[j]
			}
		} else {
			prev = f.find(name)
		}
		if prev != nil {
			d.errAt(k, p, "duplicate key (first defined at line %d); a key may appear only once in a mapping", prev.key.Line)
			continue
		}
		if index != nil {
			index[name] = len(f.list)
		}
		if allowed != nil && !containsStr(allowed, name) {
			msg := fmt.Sprintf("unknown key %q; allowed keys here: %s", name, strings.Join(allowed, ", "))
			if close := closest(name, allowed); close != "" {
				if f.typoFor == nil {
					f.typoFor = map[string]bool{}
				}
				f.typoFor[close] = true
				msg = fmt.Sprintf("unknown key %q (did you mean %q?); allowed keys here: %s", name, close, strings.Join(allowed, ", "))
			}
			if hint != nil {
				if h := hint(name); h != "" {
					msg = fmt.Sprintf("unknown key %q; %s", name, h)
				}
			}
			d.errAt(k, p, "%s", msg)
			// Remember the key (without value) so a repeat is a duplicate.
			f.list = append(f.list, field{name: name, key: k})
			continue
		}
		f.list = append(f.list, field{name: name, key: k, val: v})
		f.order = append(f.order, name)
	}
	return f, true
}

// mergedPairs returns the key/value nodes of mapping n with YAML merge keys
// ("<<: *anchor", as PyYAML and so InferenceX honour them) expanded: keys
// written in n come first and win over merged ones; among several merged
// mappings the first one wins.
func (d *decoder) mergedPairs(n *yaml.Node, path string) []*yaml.Node {
	hasMerge := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		if isMergeKey(n.Content[i]) {
			hasMerge = true
			break
		}
	}
	if !hasMerge {
		return n.Content
	}
	if out, ok := d.merges[n]; ok {
		return out
	}
	if d.inMerge[n] {
		d.errAt(n, joinPath(path, "<<"), "merge keys form a cycle through this mapping; remove the merge that refers back to it")
		return nil
	}
	if d.inMerge == nil {
		d.inMerge, d.merges = map[*yaml.Node]bool{}, map[*yaml.Node][]*yaml.Node{}
	}
	d.inMerge[n] = true
	defer delete(d.inMerge, n)
	var own, merged []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !isMergeKey(k) {
			own = append(own, k, v)
			continue
		}
		var sources []*yaml.Node
		switch rv := resolve(v); rv.Kind {
		case yaml.MappingNode:
			sources = []*yaml.Node{v} // v keeps the alias name for messages
		case yaml.SequenceNode:
			sources = rv.Content
		default:
			d.errAt(rv, joinPath(path, "<<"), "a merge key needs a mapping or a list of mappings, got %s", kindName(rv))
		}
		for _, src := range sources {
			anchor := src
			src = resolve(src)
			if src.Kind != yaml.MappingNode {
				d.errAt(src, joinPath(path, "<<"), "a merge key needs a mapping or a list of mappings, got %s", kindName(src))
				continue
			}
			merged = append(merged, d.mergedPairs(src, path)...)
			if len(merged)/2 > maxMergedKeys {
				name := "a mapping"
				if anchor.Kind == yaml.AliasNode {
					name = "*" + anchor.Value
				}
				d.errAt(anchor, joinPath(path, "<<"), "merging %s gives more than %d keys (a merge-key bomb?); merge fewer or smaller mappings", name, maxMergedKeys)
				d.merges[n] = own
				return own
			}
		}
	}
	out := own
	seen := map[string]bool{}
	for i := 0; i+1 < len(own); i += 2 {
		seen[resolve(own[i]).Value] = true
	}
	for i := 0; i+1 < len(merged); i += 2 {
		name := resolve(merged[i]).Value
		if !seen[name] {
			seen[name] = true
			out = append(out, merged[i], merged[i+1])
		}
	}
	d.merges[n] = out
	return out
}

func isMergeKey(k *yaml.Node) bool {
	k = resolve(k)
	return k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge"
}

func quoteNodeValue(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return strconv.Quote(n.Value)
	}
	return kindName(n)
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// joinPath appends a key to a dotted path.
func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// indexPath appends a list index to a path.
func indexPath(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// require reports a missing required key at the mapping's key node.
func (d *decoder) require(f fields, at *yaml.Node, path string, names ...string) bool {
	ok := true
	for _, name := range names {
		if !f.has(name) && !f.typoFor[name] {
			d.errAt(at, joinPath(path, name), "required key is missing")
			ok = false
		}
	}
	return ok
}

// yaml11Bool lists the plain scalars PyYAML (YAML 1.1), which InferenceX
// uses, reads as booleans while yaml.v3 reads them as strings.
var yaml11Bool = map[string]bool{
	"yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"no": false, "No": false, "NO": false, "off": false, "Off": false, "OFF": false,
}

// str decodes a string scalar. Empty strings are rejected unless allowEmpty.
func (d *decoder) str(n *yaml.Node, path string) (string, bool) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		d.errAt(n, path, "must be a string, got %s; quote the value if it is meant as text", kindName(n))
		return "", false
	}
	if n.Style == 0 {
		if _, ok := yaml11Bool[n.Value]; ok {
			d.errAt(n, path, "%q is read as a boolean by YAML 1.1 parsers (InferenceX's); quote it if it is meant as text", n.Value)
			return "", false
		}
	}
	if n.Value == "" {
		d.errAt(n, path, "must not be empty")
		return "", false
	}
	return n.Value, true
}

// strPtr is str for optional keys: nil when the key is absent.
func (d *decoder) strPtr(f fields, name, path string) *string {
	n := f.get(name)
	if n == nil {
		return nil
	}
	s, ok := d.str(n, joinPath(path, name))
	if !ok {
		return nil
	}
	return &s
}

// integer decodes an integer scalar.
func (d *decoder) integer(n *yaml.Node, path string) (int64, bool) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		d.errAt(n, path, "must be an integer, got %s %s", kindName(n), quoteNodeValue(n))
		return 0, false
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
	if err != nil {
		d.errAt(n, path, "integer %q out of range", n.Value)
		return 0, false
	}
	return v, true
}

// intMin decodes an integer that must be at least min.
func (d *decoder) intMin(n *yaml.Node, path string, min int64) (int, bool) {
	v, ok := d.integer(n, path)
	if !ok {
		return 0, false
	}
	if v < min {
		d.errAt(n, path, "must be >= %d, got %d", min, v)
		return 0, false
	}
	if v > math.MaxInt32 {
		d.errAt(n, path, "%d is too large (max %d)", v, math.MaxInt32)
		return 0, false
	}
	return int(v), true
}

// intPtr decodes an optional integer key (>= min); nil when absent or bad.
func (d *decoder) intPtr(f fields, name, path string, min int64) *int {
	n := f.get(name)
	if n == nil {
		return nil
	}
	v, ok := d.intMin(n, joinPath(path, name), min)
	if !ok {
		return nil
	}
	return &v
}

// boolean decodes a boolean scalar (true/false, or YAML 1.1 yes/no/on/off
// as InferenceX's parser reads them).
func (d *decoder) boolean(n *yaml.Node, path string) (bool, bool) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool" {
		switch n.Value {
		case "true", "True", "TRUE":
			return true, true
		case "false", "False", "FALSE":
			return false, true
		}
	}
	if n.Kind == yaml.ScalarNode && n.Style == 0 {
		if b, ok := yaml11Bool[n.Value]; ok {
			return b, true
		}
	}
	d.errAt(n, path, "must be true or false, got %s %s", kindName(n), quoteNodeValue(n))
	return false, false
}

// boolPtr decodes an optional boolean key; nil when absent or bad.
func (d *decoder) boolPtr(f fields, name, path string) *bool {
	n := f.get(name)
	if n == nil {
		return nil
	}
	b, ok := d.boolean(n, joinPath(path, name))
	if !ok {
		return nil
	}
	return &b
}

// number decodes an integer or float scalar.
func (d *decoder) number(n *yaml.Node, path string) (float64, bool) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!float" && n.ShortTag() != "!!int") {
		d.errAt(n, path, "must be a number, got %s %s", kindName(n), quoteNodeValue(n))
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
	if n.ShortTag() == "!!int" {
		var iv int64
		iv, err = strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
		v = float64(iv)
	}
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		d.errAt(n, path, "must be a finite number, got %q", n.Value)
		return 0, false
	}
	return v, true
}

// sequence checks that n is a list and returns its items.
func (d *decoder) sequence(n *yaml.Node, path string) ([]*yaml.Node, bool) {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		d.errAt(n, path, "must be a list, got %s", kindName(n))
		return nil, false
	}
	return n.Content, true
}

// strList decodes a list of non-empty strings.
func (d *decoder) strList(n *yaml.Node, path string) ([]string, bool) {
	items, ok := d.sequence(n, path)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		s, ok2 := d.str(it, indexPath(path, i))
		if !ok2 {
			ok = false
			continue
		}
		out = append(out, s)
	}
	return out, ok
}

// closest returns the element of candidates nearest to s by edit distance,
// when it is close enough to be a likely typo.
func closest(s string, candidates []string) string {
	if c := textdiff.Closest(s, candidates, 1, len(s)/3); len(c) > 0 {
		return c[0]
	}
	return ""
}

// didYouMean suggests up to three candidates nearest to s (a mistyped
// config key), or "" when none is close.
func didYouMean(s string, candidates []string) string {
	c := textdiff.Closest(s, candidates, 3, max(2, len(s)/3))
	switch len(c) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("; did you mean %q?", c[0])
	}
	q := make([]string, len(c))
	for i, k := range c {
		q[i] = strconv.Quote(k)
	}
	return "; did you mean one of " + strings.Join(q, ", ") + "?"
}
