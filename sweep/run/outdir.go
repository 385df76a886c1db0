package run

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"sweep/configs"
	"sweep/internal/inputfile"
	"sweep/internal/proc"
	"sweep/metrics/aiperf"
	"sweep/metrics/result"
)

// LockFile is the lock a point holds in its output directory; TagsFile
// lists the process tags of the runs in it (see ClaimOutDir).
const (
	LockFile = ".sweep.lock"
	TagsFile = ".sweep-processes"
)

// RecordFile is the name of the run record in OutDir.
const RecordFile = result.RunRecordFile

// PanicFile, in OutDir, holds the stack of a panic inside a point.
const PanicFile = "panic.log"

// recordTag appends a process tag to dir's TagsFile, synced.
func recordTag(dir, tag string) error {
	f, err := os.OpenFile(filepath.Join(dir, TagsFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(tag + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// LeftoverGrace is how long StopLeftovers' callers give what an earlier
// run left behind between SIGTERM and SIGKILL.
const LeftoverGrace = 10 * time.Second

// StopLeftovers stops the live processes of earlier runs in dir (an engine
// whose sweep was killed with kill -9 or lost its terminal) and returns
// their pids; the caller holds dir's lock.
func StopLeftovers(dir string, grace time.Duration) ([]int, error) {
	b, err := inputfile.Read(filepath.Join(dir, TagsFile), inputfile.SmallJSON)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, tag := range strings.Fields(string(b)) {
		pids = append(pids, proc.KillTagged(tag, grace)...)
	}
	return pids, os.Remove(filepath.Join(dir, TagsFile))
}

// ErrAlreadyDone is returned by ClaimOutDir when the directory holds the
// same point, completed: running it again is a no-op.
var ErrAlreadyDone = errors.New("this point already completed in that directory")

// OutDirError is an output directory a point may not use.
type OutDirError struct {
	Dir string
	Msg string
	// Err is the failure Msg quotes, when one does (nil: none).
	Err error
	// What names the directory ("" is sweep run's "--out"; "point
	// directory", "server directory").
	What string
	// Holder names the process that holds the directory's lock
	// (LockOutDir): "process 4242", or "another process" when its lock
	// file does not name one; "" when the lock is not the matter.
	Holder string
}

func (e *OutDirError) Error() string {
	return fmt.Sprintf("%s %s: %s", cmp.Or(e.What, "--out"), e.Dir, e.Msg)
}

func (e *OutDirError) Unwrap() error { return e.Err }

// OutDirFix is the fix for an output directory sweep cannot make or
// write (a read-only disk, no permission): the one wording of sweep
// run's --out (PointClaim.Claim), a sweep's directory (campaign.Run)
// and the point and server directories under them (LockOutDir).
const OutDirFix = "give --out a directory this user can make and write"

// MakeOutDir makes dir and its parents; one it cannot make is an
// *OutDirError (What: what) quoting why, with OutDirFix.
func MakeOutDir(dir, what string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &OutDirError{Dir: dir, What: what, Msg: err.Error() + "; " + OutDirFix, Err: err}
	}
	return nil
}

// LockOutDir makes dir (if needed) and takes an exclusive lock on it
// (LockFile, holding this process's pid), held by whoever runs a point
// or a server there: sweep run (ClaimOutDir), a sweep's point
// (campaign.ClearPointDir) and server (StartServer). While it is held no
// other point runs in dir and no claim stops the processes recorded
// there (StopLeftovers), which are the holder's. A lock another process
// holds is an *OutDirError naming its pid (Holder). The returned release drops
// the lock; the kernel drops it too if the process dies.
func LockOutDir(dir string) (release func(), err error) {
	release, _, err = lockOutDir(dir)
	return release, err
}

// lockOutDir is LockOutDir, also saying whether it made the lock file
// (a refusal then removes it: it writes nothing).
func lockOutDir(dir string) (release func(), made bool, err error) {
	if err := MakeOutDir(dir, ""); err != nil {
		return nil, false, err
	}
	if _, err := os.Lstat(filepath.Join(dir, LockFile)); errors.Is(err, fs.ErrNotExist) {
		made = true
	}
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, false, &OutDirError{Dir: dir, Msg: "cannot open its lock file: " + err.Error() + "; " + OutDirFix, Err: err}
	}
	switch err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); {
	case errors.Is(err, syscall.EWOULDBLOCK):
		holder := "another process"
		if b, rerr := inputfile.Read(f.Name(), inputfile.Text); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
				holder = fmt.Sprintf("process %d", pid)
			}
		}
		f.Close()
		return nil, false, &OutDirError{Dir: dir, Holder: holder, Msg: holder + " is running a point or a sweep's server there; wait for it to end or use another directory"}
	case err != nil:
		f.Close()
		return nil, false, &OutDirError{Dir: dir, Msg: fmt.Sprintf("cannot lock it (%v): give a directory on a filesystem that supports flock", err)}
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, made, nil
}

// SweepJournal is the file that makes a directory a sweep's
// (campaign.JournalFile): sweep run refuses it as --out.
const SweepJournal = "journal.jsonl"

// ClaimOutDir is PointClaim.Claim for the point called name, its make
// not compared: a directory holding a run of it that did not complete is
// refused as any non-empty one.
func ClaimOutDir(dir, name string, force bool) (release func(), leftovers []int, err error) {
	c, err := PointClaim{Dir: dir, Name: name, Force: force}.Claim()
	return c.Release, c.Leftovers, err
}

// PointClaim asks for a point's output directory (sweep run's --out).
type PointClaim struct {
	Dir, Name string
	// Made is how this run makes the point (nil: not compared).
	Made *Made
	// Force clears a non-empty directory (--force).
	Force bool
	// LaunchPlan, for a launched point, is its launch's plan file
	// relative to Dir (launch.PlanFile): a directory holding only that
	// plan, of this point, is a launch that failed before its container's
	// run wrote anything, redone as an unfinished run is.
	LaunchPlan string
	// AllocFiles, for a point whose roles run on a Slurm allocation made
	// once Dir is claimed, reports whether an entry of Dir is a file of
	// that allocation (slurm.IsAllocFile): a directory holding only such
	// files is an allocation that ended before the point's run began
	// (still pending at its start timeout, or interrupted), redone as an
	// unfinished run is. The files do not name the point; they hold no
	// measurement either.
	AllocFiles func(entry string) bool
}

// Claimed is a claimed output directory.
type Claimed struct {
	// Release drops the directory's lock.
	Release func()
	// Leftovers are the pids of the processes an earlier run left there,
	// stopped.
	Leftovers []int
	// Redone is the record of the earlier run of the same point, made
	// the same way, that did not complete (interrupted or failed), whose
	// files the claim cleared for this run; nil when there was none.
	Redone *Record
	// RedoneLaunch says Dir held only the launch plan of an earlier
	// launch of this point that failed before its run began (LaunchPlan),
	// cleared for this run.
	RedoneLaunch bool
	// RedoneAllocation says Dir held only the files of an earlier Slurm
	// allocation that ended before its point's run began (AllocFiles),
	// cleared for this run.
	RedoneAllocation bool
	// Replaced is the record of the run (of this point or another, completed
	// or not) Force deleted from Dir for this run; nil when Dir held no
	// run record. The caller says what was deleted: a completed result is
	// never lost silently.
	Replaced *Record
}

// Claim makes c.Dir (if needed) and takes its lock (LockOutDir) for the
// point c.Name, so two runs never share one directory: a directory whose
// lock another process holds (a sweep run, a sweep's point or server) is
// refused, force or not, and nothing of it is touched. Processes an
// earlier run left behind (its lock free: the run is dead) are stopped
// first (Leftovers says which). A sweep's directory (SweepJournal) is
// refused, force or not. A non-empty directory is cleared with Force;
// else it is refused, unless it holds this same point made the same way
// (MadeDiff against c.Made, which must be given): completed, the claim
// is ErrAlreadyDone (the lock released); not completed, its files are
// cleared and the point redone (Redone), as rerunning the command that
// was interrupted asks. The same point completed otherwise (simulated
// against real, another client, other client flags such as its benchmark
// duration, other engine flags, image) is refused naming the differences.
func (c PointClaim) Claim() (Claimed, error) {
	dir, name := c.Dir, c.Name
	unlock, madeLock, err := lockOutDir(dir)
	if err != nil {
		return Claimed{}, err
	}
	// release, on a refusal, also removes the lock file this claim made:
	// a refused claim leaves the directory as it found it.
	release := func() {
		if madeLock {
			_ = os.Remove(filepath.Join(dir, LockFile))
		}
		unlock()
	}
	if _, err := os.Stat(filepath.Join(dir, SweepJournal)); err == nil {
		// Not even --force: the point's files would join the sweep's,
		// its result read as a replicate of the sweep's own.
		release()
		return Claimed{}, &OutDirError{Dir: dir, Msg: fmt.Sprintf("holds a sweep (%s): rerun the sweep's command to run its points, or give sweep run another directory", SweepJournal)}
	}
	leftovers, err := StopLeftovers(dir, LeftoverGrace)
	if err != nil {
		release()
		return Claimed{}, &OutDirError{Dir: dir, Msg: "cannot stop the processes an earlier run left: " + err.Error()}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		release()
		return Claimed{}, err
	}
	var others []string
	for _, e := range entries {
		if e.Name() != LockFile && e.Name() != TagsFile {
			others = append(others, e.Name())
		}
	}
	claimed := Claimed{Release: unlock, Leftovers: leftovers}
	if len(others) == 0 {
		return claimed, nil
	}
	if c.Force {
		replaced, _ := ReadRecordFile(dir) // read before it is deleted
		if err := clearPointDir(dir, name, others); err != nil {
			release()
			return Claimed{}, &OutDirError{Dir: dir, Msg: "--force: cannot clear it: " + err.Error()}
		}
		claimed.Replaced = replaced
		return claimed, nil
	}
	rec, err := ReadRecordFile(dir)
	if err != nil {
		release()
		return Claimed{Leftovers: leftovers}, &OutDirError{Dir: dir, Err: err, Msg: fmt.Sprintf("its %s does not read, so what point it holds and how it was made is unknown: %v; use --force to replace it, or a new directory", RecordFile, err)}
	}
	if rec != nil && rec.Name == name {
		var diffs []string
		if c.Made != nil {
			diffs = MadeDiff(rec, *c.Made)
		}
		switch {
		case len(diffs) > 0:
			release()
			what := "an unfinished run"
			if rec.OK {
				what = "completed"
			}
			return Claimed{Leftovers: leftovers}, &OutDirError{Dir: dir, Msg: fmt.Sprintf("holds point %s, %s, made otherwise than this run makes it (%s); use --force to replace it, or a new directory", name, what, strings.Join(diffs, "; "))}
		case rec.OK:
			release()
			return Claimed{Leftovers: leftovers}, ErrAlreadyDone
		case c.Made != nil && len(diffs) == 0:
			if err := clearPointDir(dir, name, others); err != nil {
				release()
				return Claimed{}, &OutDirError{Dir: dir, Msg: "cannot clear the unfinished run of this point in it: " + err.Error()}
			}
			claimed.Redone = rec
			return claimed, nil
		}
	}
	if rec != nil && rec.Name != name {
		// Another point's run (the same key's other KV offloading row,
		// another concurrency): named, so the user sees what --force
		// would delete.
		release()
		return Claimed{Leftovers: leftovers}, &OutDirError{Dir: dir, Msg: fmt.Sprintf("holds point %s (%s), not point %s this run makes: give this run another --out, or --force to delete that run and its result", rec.Name, rec.Held(), name)}
	}
	if c.LaunchPlan != "" && c.Made != nil && launchOnly(dir, others, c.LaunchPlan, name) {
		if err := os.RemoveAll(filepath.Join(dir, others[0])); err != nil {
			release()
			return Claimed{}, &OutDirError{Dir: dir, Msg: "cannot clear the failed launch of this point in it: " + err.Error()}
		}
		claimed.RedoneLaunch = true
		return claimed, nil
	}
	if c.AllocFiles != nil && c.Made != nil && !slices.ContainsFunc(others, func(e string) bool { return !c.AllocFiles(e) }) {
		for _, e := range others {
			if err := os.Remove(filepath.Join(dir, e)); err != nil {
				release()
				return Claimed{}, &OutDirError{Dir: dir, Msg: "cannot clear the Slurm allocation of an earlier run in it: " + err.Error()}
			}
		}
		claimed.RedoneAllocation = true
		return claimed, nil
	}
	release()
	shown := others
	if len(shown) > 5 {
		shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(others)-5))
	}
	return Claimed{}, &OutDirError{Dir: dir, Msg: fmt.Sprintf("not empty (%s); use --force to overwrite it, or a new directory", strings.Join(shown, ", "))}
}

// Held says what the run rec records is, for a user about to lose it:
// its layout, concurrency and KV offloading (from its facts, when it
// recorded them) and whether it completed, naming its result file.
func (rec *Record) Held() string {
	var parts []string
	if f := rec.Facts; f != nil {
		if f.Multinode {
			parts = append(parts, fmt.Sprintf("conc%d kv-offloading %s", f.Conc, f.KVOffloading))
		} else {
			parts = append(parts, fmt.Sprintf("tp%d ep%d conc%d kv-offloading %s", f.TP, f.EP, f.Conc, f.KVOffloading))
		}
	}
	switch {
	case rec.OK && rec.ResultFile != "" && filepath.Base(rec.ResultFile) == result.FileName(rec.Name):
		parts = append(parts, "completed, with its result file")
	case rec.OK && rec.ResultFile != "":
		parts = append(parts, "completed, its result "+filepath.Base(rec.ResultFile))
	case rec.OK:
		parts = append(parts, "completed")
	default:
		parts = append(parts, "a run that did not complete")
	}
	return strings.Join(parts, "; ")
}

// launchOnly says whether dir's entries others are only the directory of
// the launch plan plan (relative to dir) of the point called name.
func launchOnly(dir string, others []string, plan, name string) bool {
	top, _, _ := strings.Cut(filepath.ToSlash(plan), "/")
	if len(others) != 1 || others[0] != top {
		return false
	}
	b, err := inputfile.Read(filepath.Join(dir, plan), inputfile.SmallJSON)
	if err != nil {
		return false
	}
	var p struct {
		ResultFilename string `json:"result_filename"`
	}
	return json.Unmarshal(b, &p) == nil && p.ResultFilename == name
}

// clearPointDir empties dir for a forced rerun, so nothing of an earlier
// run (a stale aiperf_artifacts/ above all) is read as the new run's. A
// directory holding a run record is a point directory and is emptied
// whole; any other keeps what sweep never writes (its entries other than
// the result, the record, logs, command files and aiperf_artifacts/).
// Entries are removed inside dir only: a symbolic link is removed as a
// link, never followed.
func clearPointDir(dir, name string, entries []string) error {
	// A run.json that does not read is no proof of a point directory.
	rec, _ := ReadRecordFile(dir)
	isPoint := rec != nil
	var errs []error
	for _, e := range entries {
		if !isPoint && !sweepWrites(e, name) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// sweepWrites reports whether a point's run writes the entry called e
// into its output directory.
func sweepWrites(e, name string) bool {
	switch {
	case e == aiperf.ArtifactDirName, e == RecordFile, e == PanicFile, e == result.FileName(name):
		return true
	case strings.HasSuffix(e, ".log"), strings.HasSuffix(e, "_command.txt"):
		return true
	}
	return false
}

// ReadRecordFile reads the run.json in dir: nil and no error when there
// is none; one that does not parse as a record is a *configs.Error at
// its line and column (configs.DecodeRecordJSON), which each caller
// gives its own fix.
func ReadRecordFile(dir string) (*Record, error) {
	var rec Record
	_, err := configs.ReadRecordJSON(filepath.Join(dir, RecordFile), &rec, "the run.json sweep run writes")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &rec, nil
}

// ResultName is the result file name (without .json) that the run in dir
// recorded in its run.json, or "" when it recorded none (or its run.json
// does not read).
func ResultName(dir string) string {
	if rec, err := ReadRecordFile(dir); err == nil && rec != nil && rec.ResultFile != "" {
		return strings.TrimSuffix(filepath.Base(rec.ResultFile), ".json")
	}
	return ""
}
