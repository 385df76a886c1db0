package campaign

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Identity is what makes two invocations the same sweep: the command, its
// settings that change what is measured (flags, and variables of the
// environment: EnvSetting), and the points in order. Settings that only
// change how it runs (--retries, --max-parallel, --fail-fast) are not
// part of it. Two settings are compared by what they mean, not how they
// are spelled (IntSet, Paths, Unused).
type Identity struct {
	Command  string    `json:"command"`
	Settings []Setting `json:"settings"`
	Points   []string  `json:"points"`
}

// Setting is one named setting of an Identity ("--tp", "8"). A flag's
// is named as the flag; a variable of the environment's as EnvSetting
// names it ("$SWEEP_SIM_SEED").
type Setting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	// Hint, on a setting of the invocation (not recorded), says what to
	// do when it differs from the directory's (Identity.Diff).
	Hint string `json:"-"`
	// same, on a setting of the invocation (not recorded), reports
	// whether a value the directory recorded under Name means what
	// Value means (nil: only Value itself does): the same set spelled
	// in another order, the same file by another path, or any value of
	// a setting this sweep does not use (Unused).
	same func(recorded string) bool
}

// IntSet is the setting of a set of integers, such as --conc-list's
// concurrencies or --tp's sizes: its value lists them in increasing
// order, each once ("4 16"), and a recorded value listing the same
// integers in any order or with repeats ("16 4") is the same.
func IntSet(name string, xs []int) Setting {
	return Setting{Name: name, Value: intSet(xs), same: func(recorded string) bool {
		var ys []int
		for _, f := range strings.Fields(recorded) {
			y, err := strconv.Atoi(f)
			if err != nil {
				return false
			}
			ys = append(ys, y)
		}
		return intSet(ys) == intSet(xs)
	}}
}

// intSet is xs in increasing order, each once, separated by spaces.
func intSet(xs []int) string {
	xs = slices.Compact(slices.Sorted(slices.Values(xs)))
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}

// Paths is the setting of files given in order, such as --config-files:
// its value is each path made absolute and cleaned, separated by spaces,
// so "cfg.yaml", "./cfg.yaml" and "$PWD/cfg.yaml" are the same. A value
// a directory recorded as given (before sweep recorded them absolute)
// is read so too, a relative path against the working directory: the
// same as this invocation's when the sweep is resumed from where it
// started.
func Paths(name string, paths []string) Setting {
	abs := func(paths []string) string {
		out := make([]string, len(paths))
		for i, p := range paths {
			out[i] = filepath.Clean(p)
			if a, err := filepath.Abs(p); err == nil {
				out[i] = a
			}
		}
		return strings.Join(out, " ")
	}
	value := abs(paths)
	return Setting{Name: name, Value: value, same: func(recorded string) bool {
		return abs(strings.Fields(recorded)) == value
	}}
}

// Unused marks s as a setting the sweep does not use (the simulated
// engine's virtual clock ignores --time-scale): it is recorded, and a
// directory that recorded any other value of it holds the same sweep.
func (s Setting) Unused() Setting {
	s.same = func(string) bool { return true }
	return s
}

// EnvPrefix begins the name of a setting that is a variable of the
// environment (EnvSetting).
const EnvPrefix = "$"

// EnvSetting is the setting of a variable of the environment that
// changes what the sweep's points measure (such as SWEEP_SIM_SEED),
// named EnvPrefix+name; value is the variable's effective value, "" when
// it is unset or at its default (the caller records it only when it is
// not: a directory that recorded no value of it ran with the default, or
// before sweep recorded the variable).
func EnvSetting(name, value string) Setting {
	return Setting{Name: EnvPrefix + name, Value: value}
}

// SimulateSetting is the Identity setting that records whether the sweep
// runs on the simulated engine (Identity.Simulated reads it back).
func SimulateSetting(on bool) Setting {
	return Setting{Name: "--simulate", Value: strconv.FormatBool(on)}
}

// Simulated reports whether the sweep ran on the simulated engine (its
// SimulateSetting; false for a nil Identity).
func (id *Identity) Simulated() bool {
	return id != nil && id.has(SimulateSetting(true))
}

// has reports whether id records setting s with its value.
func (id *Identity) has(s Setting) bool {
	return slices.ContainsFunc(id.Settings, func(t Setting) bool { return t.Name == s.Name && t.Value == s.Value })
}

// AdaptiveSetting is the Identity setting that records whether the sweep
// is an adaptive discovery (ReadCoverage reads it back).
func AdaptiveSetting(on bool) Setting {
	return Setting{Name: "--adaptive", Value: strconv.FormatBool(on)}
}

// DifferenceError is returned when a sweep directory holds a different
// sweep; Diffs names each difference.
type DifferenceError struct {
	Dir   string
	Diffs []string
}

func (e *DifferenceError) Error() string {
	return fmt.Sprintf("%s holds a different sweep; this command differs in:\n  %s\nuse another --out, or the command that started it to resume", e.Dir, strings.Join(e.Diffs, "\n  "))
}

// Diff names the differences between the identity a directory was started
// with (was) and now.
func (was *Identity) Diff(now *Identity) []string {
	var out []string
	if was.Command != now.Command {
		out = append(out, fmt.Sprintf("command: was sweep %s, now sweep %s", was.Command, now.Command))
	}
	wm, nm, hints := map[string]string{}, map[string]string{}, map[string]string{}
	same := map[string]func(string) bool{}
	var names []string
	for _, s := range was.Settings {
		wm[s.Name] = s.Value
		names = append(names, s.Name)
	}
	for _, s := range now.Settings {
		nm[s.Name], hints[s.Name], same[s.Name] = s.Value, s.Hint, s.same
		if !slices.Contains(names, s.Name) {
			names = append(names, s.Name)
		}
	}
	for _, n := range names {
		if wm[n] == nm[n] || same[n] != nil && same[n](wm[n]) {
			continue
		}
		d := fmt.Sprintf("%s: was %q, now %q", n, wm[n], nm[n])
		h := hints[n]
		if v, ok := strings.CutPrefix(n, EnvPrefix); ok && h == "" {
			h = envHint(v, wm[n])
		}
		if h != "" {
			d += " (" + h + ")"
		}
		out = append(out, d)
	}
	var added, removed []string
	for _, p := range now.Points {
		if !slices.Contains(was.Points, p) {
			added = append(added, p)
		}
	}
	for _, p := range was.Points {
		if !slices.Contains(now.Points, p) {
			removed = append(removed, p)
		}
	}
	if len(added) > 0 {
		out = append(out, fmt.Sprintf("points: %d not in the directory's sweep (%s)", len(added), short(added)))
	}
	if len(removed) > 0 {
		out = append(out, fmt.Sprintf("points: %d of the directory's sweep not selected (%s)", len(removed), short(removed)))
	}
	return out
}

// envHint says how to resume a sweep whose environment variable name
// had the value was ("": unset or its default) when it started.
func envHint(name, was string) string {
	if was == "" {
		return fmt.Sprintf("the variable changes what the points measure: the directory's sweep ran with %s unset, or began before sweep recorded it; unset it, or use another --out", name)
	}
	return fmt.Sprintf("the variable changes what the points measure: the directory's sweep ran with %s=%s; set it so, or use another --out", name, was)
}

func short(ids []string) string {
	if len(ids) > 3 {
		return strings.Join(ids[:3], ", ") + ", ..."
	}
	return strings.Join(ids, ", ")
}
