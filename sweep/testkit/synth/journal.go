package synth

import "sweep/sweep/campaign"

// WriteJournal appends recs to the sweep journal in dir (made if new), as
// a sweep records its events: a test's interrupted or partial sweep.
func WriteJournal(dir string, recs ...campaign.Record) error {
	j, _, err := campaign.OpenJournal(dir)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := j.Append(r); err != nil {
			j.Close()
			return err
		}
	}
	return j.Close()
}
