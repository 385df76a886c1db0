package matrix

import (
	"fmt"
	"slices"
	"strings"
	"sweep/configs"
	"sweep/internal/textdiff"
)

// ResolveKeys resolves config keys against the master configs, the one
// way every command does (sweep matrix test-config, sweep plan, sweep run)
// and as InferenceX's generator does: a key holding '*' or '?' is an
// fnmatch pattern (fnmatch.fnmatchcase semantics, "[seq]" sets included)
// that must match at least one key; any other key must exist. The result keeps first-seen order
// without duplicates. The error is a *KeyError naming the first key that
// failed and the closest existing keys.
func ResolveKeys(masters *configs.Masters, patterns []string) ([]*configs.Master, error) {
	out := make([]*configs.Master, 0, len(patterns))
	seen := make(map[*configs.Master]bool, len(patterns))
	add := func(m *configs.Master) {
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	for _, p := range patterns {
		if IsKeyPattern(p) {
			matched := false
			for _, m := range masters.Entries {
				if fnmatch(p, m.Key) {
					matched = true
					add(m)
				}
			}
			if !matched {
				return nil, newKeyError(p, true, masters.Keys())
			}
			continue
		}
		m, ok := masters.Lookup(p)
		if !ok {
			return nil, newKeyError(p, false, masters.Keys())
		}
		add(m)
	}
	return out, nil
}

// IsKeyPattern reports whether a config key is an fnmatch pattern.
func IsKeyPattern(key string) bool { return strings.ContainsAny(key, "*?") }

// KeyError is a config key that names no master config, or a pattern that
// matches none. Closest lists up to three existing keys nearest to it.
type KeyError struct {
	Key       string
	Pattern   bool
	Available int // keys in the master configs
	Closest   []string
}

func newKeyError(key string, pattern bool, available []string) *KeyError {
	return &KeyError{Key: key, Pattern: pattern, Available: len(available), Closest: closestKeys(key, available)}
}

func (e *KeyError) Error() string {
	hint := ""
	if len(e.Closest) > 0 {
		hint = "; closest: " + strings.Join(e.Closest, ", ")
	}
	if e.Pattern {
		return fmt.Sprintf("config key pattern %q matched no config keys (%d keys in the master configs%s)", e.Key, e.Available, hint)
	}
	return fmt.Sprintf("config key %q not found in the master configs (%d keys%s)", e.Key, e.Available, hint)
}

// changelogKeys resolves a changelog entry's config-keys as
// process_changelog.py does: '*' matches any run of characters (no other
// character is special); a pattern must match at least one key and a
// plain key must exist.
func changelogKeys(patterns, available []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, p := range patterns {
		if strings.Contains(p, "*") {
			matched := false
			for _, k := range available {
				if starMatch(p, k) {
					matched = true
					if !seen[k] {
						seen[k] = true
						out = append(out, k)
					}
				}
			}
			if !matched {
				return nil, fmt.Errorf("no config keys matched the wildcard pattern %q in the master configs%s", p, closestHint(p, available))
			}
			continue
		}
		if !slices.Contains(available, p) {
			return nil, fmt.Errorf("config key %q not found in the master configs%s", p, closestHint(p, available))
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// starMatch reports whether name matches pattern, where '*' matches any
// run of characters and everything else matches itself.
func starMatch(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(name, p)
		if i < 0 {
			return false
		}
		name = name[i+len(p):]
	}
	return len(parts) > 1 && strings.HasSuffix(name, last) || len(parts) == 1 && name == ""
}

// closestHint returns "; closest: a, b, c" naming up to three keys nearest
// to want by edit distance, or "" when none is reasonably close.
func closestHint(want string, keys []string) string {
	if names := closestKeys(want, keys); len(names) > 0 {
		return "; closest: " + strings.Join(names, ", ")
	}
	return ""
}

// closestKeys returns up to three keys nearest to want by edit distance,
// nearest first, leaving out those too far to be a typo.
func closestKeys(want string, keys []string) []string {
	return textdiff.Closest(want, keys, 3, max(3, len(want)/3))
}
