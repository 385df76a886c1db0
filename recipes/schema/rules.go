package schema

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// isSet says whether a flag counts as given for rules: present, and for a bool, true.
func (ps *parser) isSet(name string) bool {
	v, ok := ps.p.value(name)
	if !ok {
		return false
	}
	if v.Flag.isBool() {
		return v.Bool
	}
	return true
}

// given says whether the flag appears at all (a bool set to false counts).
func (ps *parser) given(name string) bool { return ps.p.Has(name) }

func (ps *parser) anySet(names []string) (string, bool) {
	for _, n := range names {
		if ps.isSet(n) {
			return n, true
		}
	}
	return "", false
}

// checkRules evaluates the schema's cross-flag rules.
func (ps *parser) checkRules() {
	for _, r := range ps.s.Rules {
		if _, ok := ps.anySet(r.Unless); ok {
			continue
		}
		if len(r.When) > 0 {
			if _, ok := ps.anySet(r.When); !ok {
				continue
			}
		}
		sev := SevError
		if r.Severity == SevWarning {
			sev = SevWarning
		}
		fail := func(flag, format string, a ...any) {
			e := &Error{Kind: RuleBroken, Severity: sev, Flag: flag, Rule: r.ID, Msg: fmt.Sprintf(format, a...)}
			if v, ok := ps.p.value(flag); ok {
				e.Flag, e.Spelling = v.Flag.Name, v.Spelling // report the spelling the argv used
			}
			ps.probs.add(e)
		}
		switch r.Kind {
		case Required:
			if _, ok := ps.anySet(r.Flags); !ok {
				fail(r.Flags[0], "%s", r.Message)
			}
		case Requires, RequiresAll, RequiresVal, RequiresGt, RequiresContains, RequiresNotVal:
			// A flag triggers the rule when it is given at all (aiperf checks
			// model_fields_set), even a bool given as false; with NonDefault only
			// when its value differs from the default.
			for _, f := range r.Flags {
				if !ps.given(f) || r.NonDefault && !ps.nonDefault(f) {
					continue
				}
				if !ps.needsMet(r) {
					fail(f, "%s", r.Message)
				}
				break
			}
		case Conflicts:
			var set []string
			for _, f := range r.Flags {
				if ps.isSet(f) {
					set = append(set, f)
				}
			}
			if len(set) > 1 {
				fail(set[1], "%s", r.Message)
			}
		case Excludes:
			for _, f := range r.Flags {
				if ps.given(f) {
					fail(f, "%s", r.Message)
				}
			}
		case NoSweep:
			for _, f := range ps.p.Sweeps() {
				fail(f, "%s", r.Message)
			}
		case LessOrEqual:
			// The tool compares the two fields after defaults apply, so a flag left out
			// counts with its numeric default; at least one of them must be given.
			a, aset, aok := ps.numberOrDefault(r.Flags[0])
			b, bset, bok := ps.numberOrDefault(r.Flags[1])
			if !bok && !bset && r.Value != "" {
				// The second flag has no CLI default but the tool's model gives it
				// Value (a concurrency phase's concurrency is 1).
				if x, err := strconv.ParseFloat(r.Value, 64); err == nil {
					b, bok = number{x, "the default " + r.Value}, true
				}
			}
			if aok && bok && (aset || bset) && a.x > b.x {
				at := r.Flags[0]
				if !aset {
					at = r.Flags[1]
				}
				fail(at, "%s (%s > %s)", r.Message, a.text, b.text)
			}
		}
	}
}

type number struct {
	x    float64
	text string // as given, or "the default N"
}

// numberOrDefault returns a single-valued numeric flag's value, or its numeric schema default
// when it was not given; set reports whether it was given.
func (ps *parser) numberOrDefault(name string) (n number, set, ok bool) {
	if v, given := ps.p.value(name); given {
		if len(v.Floats) != 1 {
			return number{}, true, false
		}
		return number{v.Floats[0], v.Strs[0]}, true, true
	}
	switch d := ps.p.flagDefault(name).(type) {
	case int:
		return number{float64(d), fmt.Sprintf("the default %d", d)}, false, true
	case float64:
		return number{d, fmt.Sprintf("the default %g", d)}, false, true
	}
	return number{}, false, false
}

func (ps *parser) needsMet(r Rule) bool {
	switch r.Kind {
	case Requires:
		_, ok := ps.anySet(r.Needs)
		return ok
	case RequiresAll:
		for _, n := range r.Needs {
			if !ps.isSet(n) {
				return false
			}
		}
		return true
	case RequiresVal:
		got, _ := ps.p.String(r.Needs[0])
		return normChoice(got) == normChoice(r.Value)
	case RequiresGt:
		got, _ := ps.p.Float(r.Needs[0])
		lim, _ := strconv.ParseFloat(r.Value, 64)
		return got > lim
	case RequiresContains:
		got, _ := ps.p.String(r.Needs[0])
		return strings.Contains(strings.ToLower(got), strings.ToLower(r.Value))
	case RequiresNotVal:
		got, _ := ps.p.String(r.Needs[0]) // the default when absent
		return !sameValue(got, r.Value)
	}
	return true
}

// nonDefault says whether a given flag's value differs from its schema default (a flag
// without a default, or given with several values, always differs; a value that did not
// convert does not count).
func (ps *parser) nonDefault(name string) bool {
	v, ok := ps.p.value(name)
	if !ok {
		return false
	}
	d := ps.p.flagDefault(name)
	if v.Flag.isBool() {
		b, _ := d.(bool)
		return v.Bool != b
	}
	switch {
	case len(v.Strs) == 0:
		return false // a bad value, already reported
	case d == nil || len(v.Strs) > 1:
		return true
	}
	return !sameValue(v.Strs[0], fmt.Sprint(d))
}

// checkScenario applies the locks of the scenario named by the scenario flag.
func (ps *parser) checkScenario() {
	s := ps.s
	if s.ScenarioFlag == "" {
		return
	}
	name, ok := ps.p.String(s.ScenarioFlag)
	if !ok {
		return
	}
	i := slices.IndexFunc(s.Scenarios, func(sc Scenario) bool { return sc.Name == name })
	if i < 0 {
		var names []string
		for _, sc := range s.Scenarios {
			names = append(names, sc.Name)
		}
		ps.probs.add(&Error{Kind: ScenarioLock, Flag: s.ScenarioFlag, Value: name, Rule: "unknown-scenario",
			Msg: fmt.Sprintf("unknown scenario %q (valid scenarios: %s)", name, strings.Join(names, ", "))})
		return
	}
	sc := s.Scenarios[i]
	override := s.OverrideFlag != "" && ps.isSet(s.OverrideFlag)
	for _, l := range sc.Locks {
		if _, ok := ps.anySet(l.Unless); ok {
			continue
		}
		if len(l.When) > 0 {
			if _, ok := ps.anySet(l.When); !ok {
				continue
			}
		}
		bad, val := ps.lockViolated(l)
		if !bad {
			continue
		}
		flag := l.Flag
		if flag == "" {
			flag, val, _ = strings.Cut(val, " ") // a sweep lock names the swept flag
		}
		e := &Error{Kind: ScenarioLock, Flag: flag, Value: val, Rule: sc.Name, Bypassable: !l.Hard,
			Msg: fmt.Sprintf("scenario %q %s", sc.Name, l.Message)}
		if v, ok := ps.p.value(flag); ok {
			e.Spelling = v.Spelling
		}
		if !l.Hard {
			if override {
				e.Severity = SevWarning
				e.Msg += fmt.Sprintf(" (allowed by %s; the run is stamped submission_valid=false)", s.OverrideFlag)
			} else if s.OverrideFlag != "" {
				e.Msg += fmt.Sprintf(" (%s would allow it and mark the run invalid for submission)", s.OverrideFlag)
			}
		}
		ps.probs.add(e)
	}
}

// lockViolated evaluates one lock and returns the offending value.
func (ps *parser) lockViolated(l Lock) (bool, string) {
	v, given := ps.p.value(l.Flag)
	switch l.Kind {
	case LockForbid:
		if ps.isSet(l.Flag) {
			return true, strings.Join(v.Strs, ",")
		}
	case LockEqual:
		if !given {
			return false, ""
		}
		if v.Flag.isBool() {
			return strconv.FormatBool(v.Bool) != l.Value, strconv.FormatBool(v.Bool)
		}
		for _, got := range v.Strs {
			if !sameValue(got, l.Value) {
				return true, got
			}
		}
	case LockMin:
		if !given {
			return false, ""
		}
		lim, _ := strconv.ParseFloat(l.Value, 64)
		for i, x := range v.Floats {
			if x < lim {
				return true, v.Strs[i]
			}
		}
	case LockOneOf:
		if !given {
			return false, ""
		}
		for _, got := range v.Strs {
			if !slices.ContainsFunc(l.Values, func(w string) bool { return sameValue(got, w) }) {
				return true, got
			}
		}
	case LockRequired:
		return !ps.isSet(l.Flag), ""
	case LockImplies:
		got, ok := ps.p.String(l.Flag)
		if ok && sameValue(got, l.Value) {
			need, _ := ps.p.String(l.Needs)
			return need != l.NeedsValue, need
		}
	case LockKeyTrue:
		if !given {
			return false, ""
		}
		for _, kv := range v.Strs {
			k, val, ok := strings.Cut(kv, ":")
			if ok && strings.TrimSpace(k) == l.Value && isFalsy(val) {
				return true, kv
			}
		}
	case LockSingle:
		if given && len(v.Strs) > 1 {
			return true, strings.Join(v.Strs, ",")
		}
		if l.Flag == "" {
			for _, name := range ps.p.Sweeps() {
				return true, name + " " + strings.Join(ps.p.values[name].Strs, ",")
			}
		}
	}
	return false, ""
}

// sameValue compares a parsed value with a lock value: numerically when both are numbers,
// otherwise after aiperf's enum normalisation.
func sameValue(got, want string) bool {
	a, aok := parseFloatWord(got)
	b, bok := parseFloatWord(want)
	if aok && bok {
		return a == b
	}
	return normChoice(got) == normChoice(want)
}

func isFalsy(v string) bool {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(v), `"'`)) {
	case "false", "0", "no", "off", "none", "null", "":
		return true
	}
	return false
}
