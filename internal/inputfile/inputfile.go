// Package inputfile opens the files sweep reads (configs, plans, aiperf
// artifacts, results, logs) so that a hostile or mistaken path cannot
// hang or exhaust the process: only regular files are read (a FIFO or a
// device in place of an artifact is refused without blocking on it), and
// a file over its kind's size limit is refused before any of it is read.
//
//	data, err := inputfile.Read(path, inputfile.ConfigYAML)
//	f, err := inputfile.Open(path, inputfile.AiperfRecords) // streamed
//	defer f.Close()
//
// Errors are *NotRegularError and *TooLargeError (test with errors.AsType);
// both name the file, and a TooLargeError names the limit and its size.
package inputfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Limit is the largest accepted size of one kind of input file; a negative
// Bytes means no size limit (the file must still be regular). What names
// the kind in errors ("config file", "profile_export.jsonl").
type Limit struct {
	What  string
	Bytes int64
}

// The limits of the files sweep reads. Each is far above what a real run
// writes (in brackets: the largest seen), so only a runaway or hostile file
// reaches it, and parsing a file at the limit stays within a few hundred MB
// (files read as streams may be larger: their memory is bounded otherwise).
var (
	// ConfigYAML: master configs, runners.yaml, perf-changelog.yaml
	// (InferenceX's largest, perf-changelog.yaml: 0.4 MB).
	ConfigYAML = Limit{What: "config file", Bytes: 8 << 20}
	// SmallJSON: env files, plans, run.json and other records sweep
	// writes (tens of KB).
	SmallJSON = Limit{What: "JSON file", Bytes: 64 << 20}
	// Result: an aggregate result JSON (6 KB).
	Result = Limit{What: "result file", Bytes: 64 << 20}
	// Text: help texts and name lists.
	Text = Limit{What: "text file", Bytes: 16 << 20}
	// AiperfSummary: profile_export_aiperf.json (17 KB).
	AiperfSummary = Limit{What: "profile_export_aiperf.json", Bytes: 64 << 20}
	// AiperfServerMetrics: server_metrics_export.json (299 MiB for a
	// simulated hour at c512; aiperf on real hardware writes GiBs for long,
	// high-concurrency points). Its readers stream it (memory: the export
	// without its timeslices, a few MB; see aiperf.ReadServerMetricsFile),
	// so this guards only against absurd inputs: reading 64 GiB takes
	// about two minutes.
	AiperfServerMetrics = Limit{What: "server_metrics_export.json", Bytes: 64 << 30}
	// AiperfRecords: profile_export.jsonl, read as a stream but its
	// records kept (18 MB for 9,400 requests; aggregating 180 MB took
	// 200 MB of RSS).
	AiperfRecords = Limit{What: "profile_export.jsonl", Bytes: 1 << 30}
	// MetricsPage: a saved Prometheus /metrics page (the scrape limit).
	MetricsPage = Limit{What: "metrics page", Bytes: 32 << 20}
	// Dataset: trace dataset files in the Hugging Face cache.
	Dataset = Limit{What: "dataset file", Bytes: 1 << 30}
	// Journal: a sweep directory's journal.jsonl, read whole on resume
	// and by --cost-from (about 2 KB per point and attempt: 20 MB for
	// 10,000 points).
	Journal = Limit{What: "journal", Bytes: 256 << 20}
	// BFCL: a BFCL result or score file (JSON Lines, one case a line;
	// the largest category's results are a few MB).
	BFCL = Limit{What: "BFCL file", Bytes: 256 << 20}
	// Log: engine logs, of which only the head is read; any size.
	Log = Limit{What: "log", Bytes: -1}
)

// String names the limit: "config file limit of 8 MiB".
func (l Limit) String() string { return fmt.Sprintf("%s limit of %s", l.What, byteSize(l.Bytes)) }

// NotRegularError is a path that is not a regular file (a FIFO, socket,
// device or directory).
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	kind := "not a regular file"
	switch t := e.Mode.Type(); {
	case t&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case t&fs.ModeSocket != 0:
		kind = "a socket"
	case t&fs.ModeDevice != 0:
		kind = "a device"
	case t&fs.ModeDir != 0:
		kind = "a directory"
	}
	return fmt.Sprintf("%s is %s, not a regular file: sweep reads only regular files", e.Path, kind)
}

// TooLargeError is a file over its Limit.
type TooLargeError struct {
	Path  string
	Size  int64 // the file's size; with Read, the bytes read when the limit was passed
	Limit Limit
	Read  bool // the limit was passed while reading (a growing file, a stream)
}

func (e *TooLargeError) Error() string {
	if e.Read { // the whole size is unknown
		return fmt.Sprintf("%s is over sweep's %s: refusing to read it", e.Path, e.Limit)
	}
	return fmt.Sprintf("%s is %s, over sweep's %s: refusing to read it", e.Path, byteSize(e.Size), e.Limit)
}

// File is an open regular input file whose reads fail with a
// *TooLargeError once more than its limit has been read (a file that grows
// while it is read is not silently cut).
type File struct {
	f     *os.File
	limit Limit
	read  int64
	size  int64 // at Open
}

// Open opens path for reading if it is a regular file within limit. It
// never blocks on a FIFO: the file is opened non-blocking and checked
// before anything is read.
func Open(path string, limit Limit) (*File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	in, err := Wrap(f, limit)
	if err != nil {
		f.Close()
		return nil, err
	}
	return in, nil
}

// Wrap checks a file the caller opened (for writing too, as a journal is;
// with O_NONBLOCK, so a FIFO did not block the open) as Open checks its
// own: a regular file within limit. Reads from the returned File are
// bounded by limit; its Close closes f. On error f is left open.
func Wrap(f *os.File, limit Limit) (*File, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &NotRegularError{Path: f.Name(), Mode: st.Mode()}
	}
	if limit.Bytes >= 0 && st.Size() > limit.Bytes {
		return nil, &TooLargeError{Path: f.Name(), Size: st.Size(), Limit: limit}
	}
	return &File{f: f, limit: limit, size: st.Size()}, nil
}

// maxPresize bounds Read's first allocation when a file is allowed to be
// larger (no limit): a sparse file's size is no promise of its contents.
const maxPresize = 256 << 20

// Read reads a whole regular file within limit.
func Read(path string, limit Limit) ([]byte, error) {
	f, err := Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadAll()
}

// Contains reports whether the regular file at path, within limit,
// contains needle, reading it as a stream (memory: a 256 KiB window).
func Contains(path string, limit Limit, needle []byte) (bool, error) {
	f, err := Open(path, limit)
	if err != nil {
		return false, err
	}
	defer f.Close()
	return contains(f, needle, 256<<10)
}

// contains is Contains over r, read window bytes at a time.
func contains(r io.Reader, needle []byte, window int) (bool, error) {
	if len(needle) == 0 {
		return true, nil
	}
	buf := make([]byte, 0, max(window, 2*len(needle)))
	for {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if bytes.Contains(buf, needle) {
			return true, nil
		}
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		// Keep what could be the start of a match the next read completes.
		keep := min(len(buf), len(needle)-1)
		buf = buf[:copy(buf, buf[len(buf)-keep:])]
	}
}

// ReadAll reads the rest of the file within its limit.
func (f *File) ReadAll() ([]byte, error) {
	// One allocation of the size Open saw (and room to find the end), not
	// io.ReadAll's doubling: exports run to 100 MB.
	buf := bytes.NewBuffer(make([]byte, 0, min(f.size, maxPresize)+bytes.MinRead))
	_, err := buf.ReadFrom(f)
	return buf.Bytes(), err
}

// Read implements io.Reader.
func (f *File) Read(p []byte) (int, error) {
	if f.limit.Bytes >= 0 {
		if f.read > f.limit.Bytes {
			return 0, &TooLargeError{Path: f.f.Name(), Size: f.read, Limit: f.limit, Read: true}
		}
		if room := f.limit.Bytes + 1 - f.read; int64(len(p)) > room {
			p = p[:room]
		}
	}
	n, err := f.f.Read(p)
	f.read += int64(n)
	if f.limit.Bytes >= 0 && f.read > f.limit.Bytes {
		return n, &TooLargeError{Path: f.f.Name(), Size: f.read, Limit: f.limit, Read: true}
	}
	return n, err
}

// Seek sets the offset of the next Read (io.Seeker). The limit still
// bounds the bytes read since Open.
func (f *File) Seek(offset int64, whence int) (int64, error) { return f.f.Seek(offset, whence) }

// Stat returns the file's FileInfo.
func (f *File) Stat() (fs.FileInfo, error) { return f.f.Stat() }

// Name returns the path the file was opened with.
func (f *File) Name() string { return f.f.Name() }

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// IsRefused reports whether err is one of this package's refusals.
func IsRefused(err error) bool {
	_, notRegular := errors.AsType[*NotRegularError](err)
	_, tooLarge := errors.AsType[*TooLargeError](err)
	return notRegular || tooLarge
}

func byteSize(n int64) string {
	switch {
	case n < 0:
		return "no limit"
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB (%d bytes)", float64(n)/(1<<20), n)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}

// ReadFrom reads r, a stream named name in errors (stdin), within limit:
// a stream longer than the limit is a *TooLargeError.
func ReadFrom(r io.Reader, name string, limit Limit) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(r, limit.Bytes+1)); err != nil {
		return nil, err
	}
	if int64(buf.Len()) > limit.Bytes {
		return nil, &TooLargeError{Path: name, Size: int64(buf.Len()), Limit: limit, Read: true}
	}
	return buf.Bytes(), nil
}
