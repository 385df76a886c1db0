package run

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// DiskFullError is a failure for want of space on the filesystem that
// holds an output directory (ENOSPC, or a quota's EDQUOT), or on
// another one a stage's log names that is still nearly full (an
// engine's cache, /dev/shm: Elsewhere): another attempt fails the same
// way until space is freed. Run, StartServer and Server.RunLoad return
// it, wrapped in their *StageError, for a stage that failed so
// (diskFull says how it is told), and CheckDiskFull makes it of an
// error of a caller's own write.
type DiskFullError struct {
	// Dir is the output directory whose filesystem is full, or with
	// Elsewhere the mount point of the other full filesystem.
	Dir string
	// Elsewhere says the full filesystem is not the output directory's
	// but one its log line names (/dev/shm, a cache): a larger disk for
	// the output does not help.
	Elsewhere bool
	// Free is the space left on that filesystem as the failure was
	// found, in bytes; -1 when it could not be read.
	Free int64
	// Line is the log line that says so, "" when Err does.
	Line string
	// Err is the failure.
	Err error
}

func (e *DiskFullError) Error() string {
	msg := fmt.Sprintf("%v: %s", e.Err, e.Disk())
	if e.Line != "" && !strings.Contains(e.Err.Error(), e.Line) {
		msg += "; from its log: " + e.Line
	}
	return msg
}

// Disk is "the disk holding DIR is full (4.1 MB free)".
func (e *DiskFullError) Disk() string {
	free := "free space unknown"
	if e.Free >= 0 {
		free = formatBytes(e.Free) + " free"
	}
	return fmt.Sprintf("the disk holding %s is full (%s)", e.Dir, free)
}

func (e *DiskFullError) Unwrap() error { return e.Err }

// formatBytes is "4.1 MB", "730 kB", "12 B" (SI units, as df -H).
func formatBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/unit, 0
	for ; v >= unit && i < 4; i++ {
		v /= unit
	}
	return fmt.Sprintf("%.1f %cB", v, "kMGTP"[i])
}

// lowSpace is the free space under which a filesystem is taken as the
// full one when a log line says no space was left without naming where
// (Python's OSError from a write names no file): a point writes tens to
// hundreds of MB of artifacts.
const lowSpace = 1 << 30

// disk is what diskFull asks of the filesystems: the device a path is
// on (its nearest existing ancestor's, a file written and removed
// leaving its directory) and the space left on the filesystem of a
// directory. osDisk asks the kernel; tests fake it.
type disk interface {
	Dev(path string) (uint64, error)
	Free(dir string) (int64, error)
}

// osDisk is the disk of this machine.
type osDisk struct{}

func (osDisk) Dev(path string) (uint64, error) {
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		var st syscall.Stat_t
		err := syscall.Stat(p, &st)
		if err == nil {
			return uint64(st.Dev), nil
		}
		if filepath.Dir(p) == p {
			return 0, err
		}
	}
}

func (osDisk) Free(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// noSpace reports whether err is a write refused for want of space.
func noSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// CheckDiskFull returns err as a *DiskFullError when it is a write
// refused for want of space (ENOSPC, EDQUOT) on the filesystem of dir:
// the path it names is on it, or it names none. Any other err, and one
// that holds a *DiskFullError already, is returned as it is.
func CheckDiskFull(dir string, err error) error {
	if _, ok := errors.AsType[*DiskFullError](err); ok {
		return err
	}
	if df := diskFull(osDisk{}, dir, err, nil); df != nil {
		return df
	}
	return err
}

// diskFull returns the *DiskFullError of a stage that failed with err
// and tail, its log's last lines, when it failed for want of space on
// the filesystem of dir, or on another one that stays full; nil
// otherwise. It did when err is such a write (noSpace) of a path on that
// filesystem or of no path (sweep writes into dir), or when a line of
// tail says no space was left (noSpaceWords, outside paths) and names a
// path on that filesystem, or names none while less than lowSpace is
// free there. A line that names only paths elsewhere (/dev/shm, an
// engine's cache on another disk) is that disk's when less than
// lowSpace is still free on it (Elsewhere, Dir its mount point): every
// later attempt needs it too. One with more free (the failed process's
// own files, freed as it exited) is not: the stage's failure quotes
// the line (Stage.Cause), and another attempt may pass.
func diskFull(d disk, dir string, err error, tail []string) *DiskFullError {
	if err == nil {
		return nil
	}
	df := &DiskFullError{Dir: dir, Free: -1, Err: err}
	if f, ferr := d.Free(dir); ferr == nil {
		df.Free = f
	}
	if noSpace(err) {
		if pe, ok := errors.AsType[*fs.PathError](err); !ok || onDisk(d, dir, pe.Path) {
			return df
		}
		return nil
	}
	var other *DiskFullError // the last line's full disk elsewhere
	for i := len(tail) - 1; i >= 0; i-- {
		paths, ok := noSpaceLine(tail[i])
		if !ok {
			continue
		}
		if len(paths) == 0 && df.Free >= 0 && df.Free < lowSpace ||
			slices.ContainsFunc(paths, func(p string) bool { return onDisk(d, dir, p) }) {
			df.Line = quoteLine(tail[i])
			return df
		}
		if other == nil {
			other = fullElsewhere(d, paths, err, tail[i])
		}
	}
	return other
}

// quoteLine is a log line as a DiskFullError quotes it: trimmed, at
// most maxCause bytes.
func quoteLine(line string) string {
	line = strings.TrimSpace(line)
	if len(line) > maxCause {
		line = strings.ToValidUTF8(line[:maxCause], "") + "…"
	}
	return line
}

// fullElsewhere is the *DiskFullError of a stage that failed with err
// whose log line says no space was left on the paths it names, none on
// the output directory's filesystem: the first of them whose filesystem
// has less than lowSpace free, named by its mount point (Elsewhere);
// nil when each has more, or its space cannot be read.
func fullElsewhere(d disk, paths []string, err error, line string) *DiskFullError {
	for _, p := range paths {
		mount, ok := mountOf(d, p)
		if !ok {
			continue
		}
		if free, ferr := d.Free(mount); ferr == nil && free < lowSpace {
			return &DiskFullError{Dir: mount, Elsewhere: true, Free: free, Line: quoteLine(line), Err: err}
		}
	}
	return nil
}

// mountOf is the mount point of the filesystem path is on (disk.Dev:
// its nearest existing ancestor's): its highest ancestor on the same
// device.
func mountOf(d disk, path string) (string, bool) {
	p := filepath.Clean(path)
	dev, err := d.Dev(p)
	if err != nil {
		return "", false
	}
	for {
		up := filepath.Dir(p)
		if up == p {
			return p, true
		}
		if udev, err := d.Dev(up); err != nil || udev != dev {
			return p, true
		}
		p = up
	}
}

// noSpaceLine reports whether a log line says a write found no space
// left, and the absolute paths it names.
func noSpaceLine(line string) (paths []string, ok bool) {
	var words []string
	for _, w := range strings.Fields(line) {
		if strings.Contains(w, "/") {
			if p := strings.Trim(w, `'"(),:;[]`); strings.HasPrefix(p, "/") {
				paths = append(paths, p)
			}
			continue
		}
		words = append(words, strings.ToLower(w))
	}
	text := strings.Join(words, " ")
	return paths, slices.ContainsFunc(noSpaceWords, func(w string) bool { return strings.Contains(text, w) })
}

// onDisk reports whether path is on the filesystem of dir (the same
// device).
func onDisk(d disk, dir, path string) bool {
	a, err := d.Dev(dir)
	if err != nil {
		return false
	}
	b, err := d.Dev(path)
	return err == nil && a == b
}
