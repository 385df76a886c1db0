package schema

import (
	"fmt"
	"math"
	"strings"
)

// valueFormats are the value grammars a flag's Format can name. Each returns "" for a
// good value, else what is wrong and how to fix it.
var valueFormats = map[string]func(string) string{
	"search_space": checkSearchSpace,
}

// searchSpaceExample is a --search-space value aiperf accepts.
const searchSpaceExample = "'phases.profiling.concurrency:1,1000:int'"

// checkSearchSpace reads one aiperf --search-space value, "path:lo,hi[:kind]", the way
// aiperf 0.12.0 does (orchestrator/search_planner/parsing.py _parse_one_dim, then
// config/sweep/adaptive.py SearchSpaceDimension and config/loader/dotted_path.py
// _validate_dotted_path).
func checkSearchSpace(raw string) string {
	want := "aiperf expects 'path:lo,hi[:kind]' with kind int or real, e.g. " + searchSpaceExample
	if !strings.Contains(raw, ":") || !strings.Contains(raw, ",") {
		return fmt.Sprintf("%q: %s", raw, want)
	}
	parts := strings.Split(raw, ":")
	var path, bounds, kind string
	switch len(parts) {
	case 2:
		path, bounds, kind = parts[0], parts[1], "real"
	case 3:
		path, bounds, kind = parts[0], parts[1], parts[2]
	default:
		return fmt.Sprintf("%q has %d ':'-separated parts: %s", raw, len(parts), want)
	}
	if kind != "int" && kind != "real" {
		return fmt.Sprintf("%q: kind must be 'int' or 'real', got %q; %s", raw, kind, want)
	}
	loText, hiText, ok := strings.Cut(bounds, ",")
	if !ok {
		return fmt.Sprintf("%q: no ',' between the bounds; %s", raw, want)
	}
	lo, okLo := parseFloatWord(loText)
	hi, okHi := parseFloatWord(hiText)
	if !okLo || !okHi {
		return fmt.Sprintf("%q: bounds %q are not two numbers lo,hi; %s", raw, bounds, want)
	}
	if math.IsInf(lo, 0) || math.IsNaN(lo) || math.IsInf(hi, 0) || math.IsNaN(hi) {
		return fmt.Sprintf("%q: aiperf needs finite bounds; give numbers such as 1,1000", raw)
	}
	if hi <= lo {
		return fmt.Sprintf("%q: aiperf needs hi > lo (got lo %s, hi %s); swap or widen the bounds", raw, loText, hiText)
	}
	if msg := checkDimensionPath(path); msg != "" {
		return fmt.Sprintf("%q: %s", raw, msg)
	}
	return ""
}

// checkDimensionPath is aiperf's dotted-path check for a sweep dimension (a bare alias such
// as "concurrency" resolves to a valid phases.profiling path, so it needs no table here).
func checkDimensionPath(p string) string {
	first, _, _ := strings.Cut(p, ".")
	switch {
	case p == "":
		return "the dimension path is empty"
	case strings.HasPrefix(p, "."), strings.HasSuffix(p, "."), strings.Contains(p, ".."):
		return fmt.Sprintf("dimension path %q has an empty segment (a leading, trailing or doubled '.')", p)
	case first == "sweep" || first == "multi_run" || first == "random_seed":
		return fmt.Sprintf("dimension path %q targets the non-sweepable top-level field %q", p, first)
	case first == "benchmark":
		return fmt.Sprintf("dimension path %q must not start with the redundant 'benchmark.' (write %q)", p, strings.TrimPrefix(p, "benchmark."))
	}
	return ""
}
