package recipes

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"sweep/configs/matrix"
)

// Status says whether a config key plans.
type Status string

// Coverage statuses.
const (
	// Planned: every point of the key plans and validates.
	Planned Status = "planned"
	// NotSupported: the key's rows are of a kind or engine sweep does not
	// plan yet (ErrNotSupported).
	NotSupported Status = "unsupported"
	// Failing: the key should plan but some point does not (no recipe, a
	// flag the schema rejects).
	Failing Status = "failing"
)

// KeyCoverage is the plan outcome of one config key.
type KeyCoverage struct {
	Key    string `json:"key"`
	Status Status `json:"status"`
	// Points is the number of planned points (Planned) or of rows.
	Points int `json:"points"`
	// Reason is the first problem of an unsupported or failing key.
	Reason string `json:"reason,omitempty"`
}

// Coverage plans the rows of each key on its own and reports per key
// whether it plans. keys fixes the order and may name keys without rows
// (a key whose rows were all filtered out, e.g. one without agentic
// scenarios); those are reported with noRows as their reason.
func Coverage(rows matrix.Matrix, keys []string, noRows string, opts PlanOptions) ([]KeyCoverage, error) {
	if _, err := opts.withDefaults(); err != nil {
		return nil, err
	}
	byKey := map[string]matrix.Matrix{}
	for _, r := range rows {
		byKey[r.ConfigKey] = append(byKey[r.ConfigKey], r)
	}
	out := make([]KeyCoverage, 0, len(keys))
	for _, k := range keys {
		rs := byKey[k]
		kc := KeyCoverage{Key: k, Points: len(rs)}
		if len(rs) == 0 {
			kc.Status, kc.Reason = NotSupported, noRows
			out = append(out, kc)
			continue
		}
		var err error
		if IsMultiNodeRow(rs[0]) {
			_, err = PlanMultiNode(rs, opts)
		} else {
			_, err = Plan(rs, opts)
		}
		pe, isPlan := errors.AsType[*PlanError](err)
		switch {
		case err == nil:
			kc.Status = Planned
		case !isPlan:
			return nil, err
		default:
			kc.Status = Failing
			if slices.ContainsFunc(pe.Problems, func(p *Problem) bool { return errors.Is(p.Err, ErrNotSupported) }) &&
				!slices.ContainsFunc(pe.Problems, func(p *Problem) bool { return !errors.Is(p.Err, ErrNotSupported) }) {
				kc.Status = NotSupported
			}
			kc.Reason = pe.Problems[0].Err.Error()
		}
		out = append(out, kc)
	}
	return out, nil
}

// WriteCoverage prints the coverage table and a summary line: keys with
// agentic rows, then the number of other keys, those without rows
// (Points 0 and reason noRows, as Coverage was given it).
func WriteCoverage(w io.Writer, cov []KeyCoverage, noRows string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tSTATUS\tPOINTS\tREASON")
	count := map[Status]int{}
	other := 0
	for _, c := range cov {
		if c.Points == 0 && c.Reason == noRows {
			other++
			continue
		}
		count[c.Status]++
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", c.Key, c.Status, c.Points, c.Reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%d agentic keys: %d %s, %d %s, %d %s; %d other keys without agentic-coding rows (%s)\n",
		len(cov)-other, count[Planned], Planned, count[NotSupported], NotSupported,
		count[Failing], Failing, other, noRows)
	return err
}
