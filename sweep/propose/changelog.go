package propose

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Entry is the perf-changelog.yaml entry recording the proposal for key:
// the per-arm conc-lists and the dropped arms, with the placeholder
// pr-link XXX (sweep validate accepts it for new entries). An entry from
// simulated results says so, and one proposed from a discovery that had
// not finished (Request.AllowUnfinished), or did not plan every official
// point (ArmPlan.NotPlanned), names the arms it left unchanged for it.
func Entry(key string, plans []ArmPlan) string {
	var kept, dropped, unfinished, notPlanned []string
	n := 0
	for _, p := range plans {
		label := strings.ToUpper(strings.ReplaceAll(p.Result.Arm.Identity.Parallelism(), " ", "/"))
		switch {
		case len(p.Result.Unfinished) > 0:
			unfinished = append(unfinished, label+" ("+concs(p.Result.Unfinished)+")")
		case len(p.NotPlanned) > 0:
			notPlanned = append(notPlanned, label+" ("+concs(p.NotPlanned)+")")
		case p.Dropped != "":
			dropped = append(dropped, label)
		case p.Conc != nil:
			cs := make([]string, len(p.Conc))
			for i, c := range p.Conc {
				cs[i] = "c" + strconv.Itoa(c)
			}
			kept = append(kept, label+" "+strings.Join(cs, ","))
			n += len(p.Conc)
		}
	}
	from := "the fast discovery sweep"
	if simulated(plans) {
		from = "a SIMULATED fast discovery sweep (sweep's simulated engine, not measured on hardware)"
	}
	desc := fmt.Sprintf("Select a %d-point official matrix from %s (latency floor, knee, first post-knee point, Pareto frontier): %s",
		n, from, strings.Join(kept, "; "))
	if len(kept) == 0 {
		desc = fmt.Sprintf("Propose from %s (latency floor, knee, first post-knee point, Pareto frontier): no conc-list changed", from)
	}
	if len(dropped) > 0 {
		desc += "; dropped as dominated: " + strings.Join(dropped, ", ")
	}
	if len(unfinished) > 0 {
		desc += "; left unchanged, the discovery had not finished them (the other arms' frontier was read without those points): " + strings.Join(unfinished, ", ")
	}
	if len(notPlanned) > 0 {
		desc += "; left unchanged, the discovery did not run these official points (the other arms' frontier was read without them): " + strings.Join(notPlanned, ", ")
	}
	return fmt.Sprintf("- config-keys:\n    - %s\n  scenario-type:\n    - agentic-coding\n  description:\n    - %s\n  pr-link: XXX\n",
		key, strconv.Quote(desc))
}

// AppendChangelog appends entry at the end of the changelog with exactly
// one blank line before it (the append-only rule) and returns the new
// bytes and the change for a diff.
func AppendChangelog(data []byte, file, entry string) ([]byte, Change) {
	out := append([]byte{}, data...)
	switch {
	case len(out) == 0:
	case bytes.HasSuffix(out, []byte("\n\n")):
	case bytes.HasSuffix(out, []byte("\n")):
		out = append(out, '\n')
	default:
		out = append(out, "\n\n"...)
	}
	added := strings.Split(strings.TrimSuffix(string(out[len(data):])+entry, "\n"), "\n")
	out = append(out, entry...)
	line := strings.Count(string(data), "\n") + 1
	return out, Change{File: file, Line: line, New: added}
}
