package knee

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"sweep/configs"
)

// WindowColumn is the width of the window provenance that starts a key's
// WindowLine.
const WindowColumn = 10

// unlistedWindow is the provenance printed for a key without one
// (KeyVerdict.Window empty: no row in configs/window-provenance.csv).
const unlistedWindow = "unlisted"

// WindowLabel is v's window provenance as printed and counted: Window,
// or "unlisted" when it is empty.
func (v KeyVerdict) WindowLabel() string {
	if v.Window == "" {
		return unlistedWindow
	}
	return v.Window
}

// WindowLine is the key's Line after its window provenance (WindowLabel),
// padded to WindowColumn.
func (v KeyVerdict) WindowLine(key string) string {
	return fmt.Sprintf("%-*s%s", WindowColumn, v.WindowLabel(), v.Line(key))
}

// WindowTally counts the judged keys apart by where their official
// windows came from (KeyVerdict.Window): those InferenceX chose at a
// measured knee (configs.WindowAtKnee), where agreement tests the
// simulation, and the others (a hard cap, a mirrored grid, ...), where it
// says less. Its zero value counts nothing; Add keys to it.
type WindowTally struct {
	// AtKnee counts the keys whose windows were chosen at a measured
	// knee, Others the rest, and how many of each agree by each rule.
	AtKnee, Others Counts
	// kinds counts Others by provenance.
	kinds map[string]int
}

// Add counts one key's verdict; an unfinished key is not judged and not
// counted (as Tally.Add).
func (t *WindowTally) Add(v KeyVerdict) {
	if v.Unfinished {
		return
	}
	if v.Window == configs.WindowAtKnee {
		t.AtKnee.add(v)
		return
	}
	t.Others.add(v)
	if t.kinds == nil {
		t.kinds = map[string]int{}
	}
	t.kinds[v.WindowLabel()]++
}

// String is the counts line by provenance: the keys whose windows
// InferenceX chose at a measured knee and how many agree by each rule,
// then the others, by provenance in configs.WindowProvenances' order
// (then any provenance not among them, "unlisted" included).
func (t WindowTally) String() string {
	var kinds []string
	known := configs.WindowProvenances()
	for _, p := range known {
		if n := t.kinds[p]; n > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", n, p))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(t.kinds)) {
		if !slices.Contains(known, p) {
			kinds = append(kinds, fmt.Sprintf("%d %s", t.kinds[p], p))
		}
	}
	of := ""
	if len(kinds) > 0 {
		of = " (" + strings.Join(kinds, ", ") + ")"
	}
	k, o := t.AtKnee, t.Others
	return fmt.Sprintf("%d of %d keys whose windows InferenceX chose at a measured knee agree (%d by the peak, %d by the frontier); of the other %d%s, %d agree (%d by the peak, %d by the frontier)",
		k.Strict, k.Keys, k.ByPeak, k.ByFrontier, o.Keys, of, o.Strict, o.ByPeak, o.ByFrontier)
}
