package campaign

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"sweep/metrics/result"
	"sweep/sweep/knee"
	"sweep/sweep/run"
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
// load, and holds the lock it returns until the load has ended.
//
// The attempt holds the point directory's lock (run.LockOutDir, as
// sweep run does) from before anything of it is cleared until release:
// a point directory in use by another process (sweep run --out on it)
// is an error naming that process, and nothing of it is touched, and
// no sweep run --force on the directory stops the attempt's processes.
// The lock file stays in the cleared directory; a kept probe's leaves
// with it.
func ClearPointDir(dir string, p *Point) (release func(), err error) {
	pd := result.PointDir(dir, p.ID)
	// Not a directory (a symbolic link, a file): removed, never followed.
	if fi, err := os.Lstat(pd); err == nil && !fi.IsDir() {
		if err := os.Remove(pd); err != nil {
			return nil, fmt.Errorf("clear %s: %w", pd, err)
		}
	}
	release, err = lockPointDir(pd)
	if err != nil {
		return nil, err
	}
	if !p.Probe {
		if smp, ok, err := knee.ReadFile(result.PointPath(dir, p.ID)); err == nil && ok && smp.Probe {
			return keepProbe(dir, p.ID, release)
		}
	}
	entries, err := os.ReadDir(pd)
	if err != nil {
		release()
		return nil, fmt.Errorf("clear %s: %w", pd, err)
	}
	var errs []error
	for _, e := range entries {
		if e.Name() != run.LockFile {
			errs = append(errs, os.RemoveAll(filepath.Join(pd, e.Name())))
		}
	}
	if err := errors.Join(errs...); err != nil {
		release()
		return nil, fmt.Errorf("clear %s: %w", pd, err)
	}
	return release, nil
}

// lockPointDir takes the lock of the point directory pd
// (run.LockOutDir); one another process holds is an error naming it.
func lockPointDir(pd string) (func(), error) {
	release, err := run.LockOutDir(pd)
	if oe, ok := errors.AsType[*run.OutDirError](err); ok {
		oe.What = "point directory"
	}
	return release, err
}

// keepProbe renames the directory of point id, holding a completed
// probe, to the first free result.ProbeDir, and returns the lock of a
// new, empty point directory in its place; release is the lock of the
// directory renamed, which it drops with its lock file.
func keepProbe(dir, id string, release func()) (func(), error) {
	defer release()
	pd := result.PointDir(dir, id)
	_, kept, err := probeDirs(dir, id)
	if err == nil {
		err = os.Rename(pd, kept)
	}
	if err != nil {
		return nil, fmt.Errorf("keep the probe of %s: %w", id, err)
	}
	_ = os.Remove(filepath.Join(kept, run.LockFile))
	return lockPointDir(pd)
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
