package knee

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"sweep/metrics/result"
)

// resultJSON is the shape `sweep knees --format json` prints per arm.
type resultJSON struct {
	Arm      result.Identity `json:"arm"`
	Status   Status          `json:"status"`
	KneeConc *int            `json:"knee_conc"`
	PeakConc *int            `json:"peak_conc"`
	Points   []Point         `json:"points"`
	// Unfinished are the concurrencies its sweep has not finished
	// (Result.Unfinished); left out for a finished sweep.
	Unfinished []int `json:"unfinished_conc,omitempty"`
	// MadeOtherwise are the concurrencies whose every result was made
	// otherwise than the arm's (Result.MadeOtherwise); left out when none.
	MadeOtherwise []Point `json:"made_otherwise,omitempty"`
}

func optInt(v int) *int {
	if v == 0 {
		return nil
	}
	return &v
}

// MarshalJSON writes the verdict as {"arm", "status", "knee_conc",
// "peak_conc", "points"}, "unfinished_conc" when its sweep has not
// finished and "made_otherwise" when results were made otherwise; knee_conc is null for unsaturated and insufficient arms.
func (r *Result) MarshalJSON() ([]byte, error) {
	return json.Marshal(resultJSON{Arm: r.Arm.Identity, Status: r.Status, KneeConc: optInt(r.Knee),
		PeakConc: optInt(r.Peak), Points: r.Points, Unfinished: r.Unfinished, MadeOtherwise: r.MadeOtherwise})
}

// WriteJSON prints the verdicts as one indented JSON array.
func WriteJSON(w io.Writer, rs []*Result) error {
	if rs == nil {
		rs = []*Result{}
	}
	data, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// WriteTable prints one line per arm (identity, status, knee, peak,
// Kneedle's knee, cliff, the reason for the verdict), then the energy
// per token where measured. The points left out (each excluded file,
// with the failed points of a sweep's journal; the points whose power
// measurement is invalid, which the energy lines leave out) are
// campaign's to list (campaign.Knees.WriteTable), where the journal is
// read and the power lane's verdicts with their fix.
func WriteTable(w io.Writer, rs []*Result) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ARM\tSTATUS\tKNEE\tPEAK\tKNEEDLE\tCLIFF\tREASON")
	c := func(v int) string {
		if v == 0 {
			return "-"
		}
		return fmt.Sprintf("c%d", v)
	}
	for _, r := range rs {
		cliff := "-"
		if len(r.Cliff) > 0 {
			cliff = "yes"
		}
		reason := r.Reason
		if len(r.Cliff) > 0 {
			reason += "; cliff: " + strings.Join(r.Cliff, ", ")
		}
		kneedle := c(r.Kneedle)
		if r.NoBend() {
			kneedle = NoBend
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Arm.Identity.Label(), r.Status, c(r.Knee), c(r.Peak), kneedle, cliff, reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writeEnergy(w, rs)
}

// writeEnergy lists, for the arms whose results carry valid power, the
// energy per output token and output tokens per joule at each
// concurrency, the knee's marked; nothing when no arm has any. The
// points it leaves out for an invalid measurement are listed after it
// by campaign.Knees.WriteTable (campaign.EnergyLeftOut).
func writeEnergy(w io.Writer, rs []*Result) error {
	var b strings.Builder
	for _, r := range rs {
		var cells []string
		for _, p := range r.Points {
			if p.JoulesPerOutputToken == nil {
				continue
			}
			mark := ""
			if p.Conc == r.Knee {
				mark = " (knee)"
			}
			cells = append(cells, fmt.Sprintf("c%d %.3g J/tok %.3g tok/J%s", p.Conc, *p.JoulesPerOutputToken, *p.TokensPerJoule, mark))
		}
		if len(cells) > 0 {
			fmt.Fprintf(&b, "  %s: %s\n", r.Arm.Identity.Label(), strings.Join(cells, ", "))
		}
	}
	if b.Len() == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "\nenergy per output token (GPU power, valid points):\n%s", b.String())
	return err
}
