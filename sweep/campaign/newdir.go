package campaign

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"sweep/internal/usage"
	"sweep/sweep/run"
)

// lockFile is the sweep directory's lock (lockDir).
const lockFile = ".lock"

// checkNewDir refuses the sweep directory dir for a new sweep: one whose
// journal holds no record (none, or an empty one: a sweep killed before
// its first record) while dir holds anything else than that journal and
// the lock (lockFile). A sweep reads every result file below its
// directory as its own (the knees, the report, the adaptive search), so
// whatever is there, a point of sweep run, another sweep in a
// subdirectory, would join its readings. The refusal is a *usage.Error
// (a refusal: usage.Refusef) naming what dir holds and the fix: an empty or new directory, or the
// directory of the sweep to resume. A directory that does not exist, or
// does not read, or whose journal holds records (a resume, or another
// sweep's, which Identity.Diff refuses) or does not read, is left to the
// caller. It writes nothing.
func checkNewDir(dir string) error {
	recs, err := ReadJournal(dir)
	if len(recs) > 0 || err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // made, or refused, by the caller
	}
	// What tells what dir is comes first: the sweeps below it, a point
	// of sweep run; then its other entries, hidden ones last.
	var held, sweeps, first, hidden []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == lockFile || name == JournalFile:
		case name == run.RecordFile:
			first = append(first, name+" (a point of sweep run)")
		case e.IsDir() && exists(filepath.Join(dir, name, JournalFile)):
			sweeps = append(sweeps, filepath.Join(dir, name))
			first = append(first, name+"/ (a sweep: its "+JournalFile+")")
		case strings.HasPrefix(name, "."):
			hidden = append(hidden, entryName(e))
		default:
			held = append(held, entryName(e))
		}
	}
	held = append(append(first, held...), hidden...)
	if len(held) == 0 {
		return nil
	}
	if len(held) > 5 {
		held = append(held[:5:5], fmt.Sprintf("and %d more", len(held)-5))
	}
	fix := "give --out an empty or new directory (or, to resume a sweep, the directory holding its " + JournalFile + ")"
	if len(sweeps) > 0 {
		fix = "give --out an empty or new directory, or, to resume a sweep it holds, that sweep's directory (" + strings.Join(sweeps, ", ") + ") with the command that started it"
	}
	return usage.Refusef("sweep directory %s is not empty and holds no sweep (no %s): %s; a new sweep reads every result below its directory as its own: %s",
		dir, JournalFile, strings.Join(held, ", "), fix)
}

// entryName is a directory entry's name, a directory's with a slash.
func entryName(e fs.DirEntry) string {
	if e.IsDir() {
		return e.Name() + "/"
	}
	return e.Name()
}

// exists reports whether path names anything (a file, a directory, a
// link), but for a name that cannot be looked up.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
