package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// LockFile is the lock a point holds in its output directory.
const LockFile = ".sweep.lock"

// ErrAlreadyDone is returned by ClaimOutDir when the directory holds the
// same point, completed: running it again is a no-op.
var ErrAlreadyDone = errors.New("this point already completed in that directory")

// OutDirError is an output directory a point may not use.
type OutDirError struct {
	Dir string
	Msg string
}

func (e *OutDirError) Error() string { return fmt.Sprintf("--out %s: %s", e.Dir, e.Msg) }

// ClaimOutDir makes dir (if needed) and takes an exclusive lock on it for
// the point called name, so two runs never share one directory. A
// non-empty directory is refused unless force, or unless it holds this
// same point completed (then ErrAlreadyDone, with the lock released). The
// returned release drops the lock; the kernel drops it too if the process
// dies.
func ClaimOutDir(dir, name string, force bool) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, &OutDirError{Dir: dir, Msg: "cannot open its lock file: " + err.Error()}
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := "another process"
		if b, rerr := os.ReadFile(f.Name()); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
				holder = fmt.Sprintf("process %d", pid)
			}
		}
		f.Close()
		return nil, &OutDirError{Dir: dir, Msg: holder + " is running a point there; wait for it or use another directory"}
	}
	release = func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)

	entries, err := os.ReadDir(dir)
	if err != nil {
		release()
		return nil, err
	}
	var others []string
	for _, e := range entries {
		if e.Name() != LockFile {
			others = append(others, e.Name())
		}
	}
	if len(others) == 0 || force {
		return release, nil
	}
	if rec, ok := readRecordFile(dir); ok && rec.Name == name && rec.OK {
		release()
		return nil, ErrAlreadyDone
	}
	release()
	shown := others
	if len(shown) > 5 {
		shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(others)-5))
	}
	return nil, &OutDirError{Dir: dir, Msg: fmt.Sprintf("not empty (%s); use --force to overwrite it, or a new directory", strings.Join(shown, ", "))}
}

func readRecordFile(dir string) (*Record, bool) {
	b, err := os.ReadFile(filepath.Join(dir, RecordFile))
	if err != nil {
		return nil, false
	}
	var rec Record
	if json.Unmarshal(b, &rec) != nil {
		return nil, false
	}
	return &rec, true
}
