package campaign

import (
	"errors"
	"fmt"
	"os"

	"sweep/metrics/result"
	"sweep/sweep/knee"
)

// ClearPointDir readies the directory of point p in the sweep directory
// dir (result.PointDir) for an attempt of p: what an earlier attempt left
// there is removed, so nothing of it is read as this attempt's, but for a
// completed probe of p that this full-length attempt replaces (an
// adaptive search's probe asked for again at the full length): that
// directory, result file and aiperf artifacts, is kept whole by renaming
// it to the first free result.ProbeDir (DIR/ID.probe/). A sweep never
// loses a completed result, and the probe is what its GPU-hours bought,
// how far it read from the full run, and what an audit needs.
//
// The kept probe lies beside the point's directory, not inside it: one
// rename, atomic, in dir; clearing a failed full-length attempt (this
// function again, or sweep run --force on the point's directory) removes
// only the point's own directory and leaves the probe; and the point's
// result path stays the full-length run's alone, so a resumed sweep never
// reads the probe as the full run (Adaptive reads a kept probe only for a
// point still to run, as the search's probe reading of it). Readers of
// the sweep directory see the kept probe (result.ReadDir walks it) and
// leave it out of every reading where the full-length run left a result
// (knee.Sample.Superseded). A failed earlier attempt of a full-length
// run, or a probe attempt that left no result, is removed as before.
// Every Backend that writes into a sweep directory calls it before a
// load.
func ClearPointDir(dir string, p *Point) error {
	pd := result.PointDir(dir, p.ID)
	if !p.Probe {
		if smp, ok, err := knee.ReadFile(result.PointPath(dir, p.ID)); err == nil && ok && smp.Probe {
			_, kept, err := probeDirs(dir, p.ID)
			if err != nil {
				return fmt.Errorf("keep the probe of %s: %w", p.ID, err)
			}
			if err := os.Rename(pd, kept); err != nil {
				return fmt.Errorf("keep the probe of %s: %w", p.ID, err)
			}
			return nil
		}
	}
	if err := os.RemoveAll(pd); err != nil {
		return fmt.Errorf("clear %s: %w", pd, err)
	}
	return nil
}

// probeDirs returns the last result.ProbeDir of point id kept ("" when
// none) and the first free one. A name that cannot be looked up is an
// error, not a name taken.
func probeDirs(dir, id string) (last, free string, err error) {
	for n := 1; ; n++ {
		d := result.ProbeDir(dir, id, n)
		_, err := os.Lstat(d)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return last, d, nil
		case err != nil:
			return last, "", err
		}
		last = d
	}
}

// keptProbe reads the last probe of point id that ClearPointDir kept in
// the sweep directory dir (the newest: the one the search last read); ok
// is false when none was kept or it is not a probe's result.
func keptProbe(dir, id string) (smp knee.Sample, ok bool) {
	last, _, _ := probeDirs(dir, id)
	if last == "" {
		return knee.Sample{}, false
	}
	smp, ok, err := knee.ReadFile(result.Path(last, id))
	if err != nil || !ok || !smp.Probe {
		return knee.Sample{}, false
	}
	return smp, true
}
