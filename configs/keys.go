package configs

import (
	"slices"
	"strings"
)

// MatchWildcard reports whether key matches pattern, where '*' matches any
// run of characters (including none) and every other character matches
// itself; the whole key must match. This is how perf-changelog.yaml
// config-keys select master entries.
func MatchWildcard(pattern, key string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == key
	}
	if !strings.HasPrefix(key, parts[0]) {
		return false
	}
	rest := key[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return len(rest) >= len(last) && strings.HasSuffix(rest, last)
}

// expand returns the keys pattern selects, in file order; keys of broken
// entries (Masters.broken) come last, in no particular order.
func (m *Masters) expand(pattern string) []string {
	if !strings.Contains(pattern, "*") {
		if _, ok := m.byKey[pattern]; ok || m.broken[pattern] {
			return []string{pattern}
		}
		return nil
	}
	var keys []string
	for _, e := range m.Entries {
		if MatchWildcard(pattern, e.Key) {
			keys = append(keys, e.Key)
		}
	}
	for k := range m.broken {
		if MatchWildcard(pattern, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// CheckChangelogKeys checks that every config key of entries resolves
// against the masters (exact keys exist, wildcards match something) and
// that each entry's scenario-type filter selects at least one scenario of
// its configs. Problems are positioned at the config key in file.
func CheckChangelogKeys(file string, entries []ChangelogEntry, m *Masters) error {
	d := &decoder{file: file}
	for i, e := range entries {
		path := indexPath("entry", entryNumber(e, i))
		var resolved []*Master
		partial := false // a selected entry has problems of its own
		for j, k := range e.ConfigKeys {
			pos := e.Pos
			if j < len(e.ConfigKeyPos) {
				pos = e.ConfigKeyPos[j]
			}
			keys := m.expand(k)
			if len(keys) == 0 {
				if strings.Contains(k, "*") {
					d.errAt(posNode(pos), joinPath(path, "config-keys"), "wildcard %q matches no key in the master configs (%s)", k, strings.Join(m.Files, ", "))
				} else {
					d.errAt(posNode(pos), joinPath(path, "config-keys"), "config key %q is not defined in the master configs (%s)%s", k, strings.Join(m.Files, ", "), m.suggest(k))
				}
				continue
			}
			for _, key := range keys {
				if mc, ok := m.byKey[key]; ok {
					resolved = append(resolved, mc)
				} else {
					partial = true
				}
			}
		}
		if len(e.ScenarioType) > 0 && len(resolved) > 0 && !partial {
			any := false
			for _, mc := range resolved {
				for _, st := range e.ScenarioType {
					if (st == ScenarioFixedSeqLen && len(mc.Scenarios.FixedSeqLen) > 0) || (st == ScenarioAgenticCoding && len(mc.Scenarios.AgenticCoding) > 0) {
						any = true
					}
				}
			}
			if !any {
				d.errAt(posNode(e.Pos), joinPath(path, "scenario-type"), "scenario-type %s selects nothing: none of the entry's configs has that scenario", strings.Join(e.ScenarioType, ", "))
			}
		}
	}
	return joinErrors(d.errs)
}

// entryNumber is the 1-based entry number used in key paths.
func entryNumber(e ChangelogEntry, i int) int {
	if e.Index > 0 {
		return e.Index
	}
	return i + 1
}

// suggest names the master keys closest to k, for typos.
func (m *Masters) suggest(k string) string {
	keys := m.Keys()
	for b := range m.broken {
		keys = append(keys, b)
	}
	slices.Sort(keys[len(m.Entries):])
	return didYouMean(k, keys)
}
