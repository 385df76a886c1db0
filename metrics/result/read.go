package result

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"sweep/configs"
	"sweep/internal/inputfile"
	"sweep/internal/usage"
	"sweep/metrics/aiperf"
)

// PointDir is the directory of point id in a sweep directory: DIR/ID. A
// point's artifacts and its result file are there.
func PointDir(dir, id string) string { return filepath.Join(dir, id) }

// ProbeDir is where a sweep directory keeps the n-th (from 1) completed
// adaptive-search probe of point id that a full-length run of the point
// superseded: DIR/ID.probe, then DIR/ID.probe-2 and so on (a probe run
// again after one was kept). The kept directory is the probe's point
// directory renamed whole (result file and artifacts), beside the point's
// own directory rather than inside it, so that clearing a failed attempt
// of the point (or run --force on it) never touches it.
func ProbeDir(dir, id string, n int) string {
	if n <= 1 {
		return filepath.Join(dir, id+".probe")
	}
	return filepath.Join(dir, fmt.Sprintf("%s.probe-%d", id, n))
}

// FileName is the file name of the result named name (InferenceX's
// RESULT_FILENAME, no extension): NAME.json.
func FileName(name string) string { return name + ".json" }

// Path is the result file named name in directory dir: DIR/NAME.json.
func Path(dir, name string) string { return filepath.Join(dir, FileName(name)) }

// PointPath is the result file of point id in a sweep directory:
// DIR/ID/ID.json.
func PointPath(dir, id string) string { return Path(PointDir(dir, id), id) }

// File is one result file as read: the result, the identity of its arm,
// and what the reader had to make of it.
type File struct {
	// Path is the file's path as found (under the directory read).
	Path string
	Result
	// Identity is the file's arm, from its IdentityKeys values as written.
	Identity Identity
	// ValidStated is true when the file says whether it is valid (sweep
	// writes "valid"; InferenceX's own results do not, and Valid is
	// then false but means nothing).
	ValidStated bool
	// NonFinite lists the NaN and infinite numbers the file holds (Python
	// writes them); each was read as null (not measured).
	NonFinite []NonFinite
	// BenchmarkSeconds is the benchmark duration the point's client was
	// configured with (--benchmark-duration; not the measured span,
	// request_metrics.throughput.duration_seconds, which reaches past it
	// by the requests' latency: knee.SpanTolerance),
	// as the aiperf summary of the file's point directory records it
	// (aiperf.Summary.BenchmarkDuration). ReadDir reads it for a result
	// that is its directory's only one (a point's directory: sweep's
	// DIR/ID/ and DIR/ID.probe/, sweep run's --out, InferenceX's result
	// directory), whose aiperf artifacts are its own; 0 when unknown (no
	// artifacts, a directory of several results, a client stopped by
	// request count, or a file read alone by ReadFile).
	BenchmarkSeconds float64

	present map[string]bool // the top-level keys the file has (not null)
}

func (f *File) has(key string) bool { return f.present[key] }

// ErrNotResult is returned (wrapped) by ReadFile for a file that is not
// an aggregate result: not a JSON object with "conc" and
// "request_metrics", or larger than any result.
var ErrNotResult = errors.New("not an aggregate result")

// ReadFile reads one aggregate result file: a JSON object with "conc" and
// "request_metrics", as sweep and InferenceX write it (NaN and Infinity,
// which Python writes, are read as null and listed in File.NonFinite).
// Anything else is ErrNotResult, except a file that is not valid JSON
// but is taken for a result all the same (a result cut short or
// damaged): its top level has "conc" or "request_metrics", or it is
// named as a sweep names a point's result (ID/ID.json, ID.probe/ID.json).
// That file, and a result whose values have the wrong types or whose
// conc is not a positive integer, is a *configs.Error naming the file,
// the line and column (of the first byte that is not JSON, or of the
// key), the key and what was expected or how to fix it; a file that
// cannot be read is its own error.
func ReadFile(path string) (*File, error) {
	data, err := inputfile.Read(path, inputfile.Result)
	if _, tooLarge := errors.AsType[*inputfile.TooLargeError](err); tooLarge {
		return nil, fmt.Errorf("%s: %w (%w)", path, ErrNotResult, err)
	}
	if err != nil {
		return nil, err
	}
	return parse(path, data)
}

// parse reads the bytes of a result file as ReadFile does; path names it
// in errors.
func parse(path string, data []byte) (*File, error) {
	raw0 := data
	data, nonFinite := replaceNonFinite(data)
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		if json.Valid(data) {
			return nil, fmt.Errorf("%s: %w (not a JSON object)", path, ErrNotResult)
		}
		if why := resultLike(path, raw0); why != "" {
			return nil, brokenResult(path, raw0, why)
		}
		return nil, fmt.Errorf("%s: %w (not valid JSON)", path, ErrNotResult)
	}
	for _, k := range []string{"conc", "request_metrics"} {
		if _, ok := top[k]; !ok {
			return nil, fmt.Errorf("%s: %w (no %q)", path, ErrNotResult, k)
		}
	}
	f := &File{Path: path, Identity: identityOf(top), NonFinite: nonFinite, present: map[string]bool{}}
	if raw, ok := top["dp_attention"]; ok && (string(raw) == "true" || string(raw) == "false") {
		// InferenceX writes dp_attention as the text of a boolean; a
		// boolean is read as that text.
		top["dp_attention"] = json.RawMessage(`"` + string(raw) + `"`)
	}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		raw := top[k]
		if string(raw) == "null" {
			continue
		}
		f.present[k] = true
		name, _ := json.Marshal(k) // a string always encodes
		if err := json.Unmarshal(slices.Concat([]byte("{"), name, []byte(":"), raw, []byte("}")), &f.Result); err != nil {
			return nil, keyError(path, raw0, k, fmt.Sprintf("not an InferenceX aggregate result value (%v)", err))
		}
	}
	if f.Conc < 1 {
		return nil, keyError(path, raw0, "conc", "want a positive integer concurrency")
	}
	f.ValidStated = f.has("valid")
	return f, nil
}

// resultLike says why a file that is not valid JSON is taken for a
// result all the same, "" when it is not: its top level has "conc" or
// "request_metrics" (as far as it goes), or it is where a sweep writes a
// point's result (PointPath: DIR/ID/ID.json) or keeps a probe's
// (ProbeDir: DIR/ID.probe/ID.json).
func resultLike(path string, data []byte) string {
	var keys []string
	for _, k := range []string{"conc", "request_metrics"} {
		if topLevelKey(data, k) >= 0 {
			keys = append(keys, strconv.Quote(k))
		}
	}
	if len(keys) > 0 {
		return "its top level has " + strings.Join(keys, " and ")
	}
	id := strings.TrimSuffix(filepath.Base(path), ".json")
	if dir := filepath.Base(filepath.Dir(path)); dir == id || strings.HasPrefix(dir, id+".probe") {
		return "it is named as a sweep names a point's result (ID/ID.json)"
	}
	return ""
}

// brokenResult is the error of a file taken for a result (resultLike
// says why) that is not valid JSON: at the first byte that is not, or at
// the end of a file cut short.
func brokenResult(path string, data []byte, why string) *configs.Error {
	// The same bytes with Python's NaN and Infinity as numbers of their
	// length, so the decoder's offsets are the file's.
	dec := json.NewDecoder(bytes.NewReader(padNonFinite(data)))
	var v any
	err := dec.Decode(&v)
	off, what := int64(len(data)), "the JSON ends early (the file is cut short)"
	var se *json.SyntaxError
	switch {
	case err == nil:
		off, what = nextNonSpace(data, dec.InputOffset()), "more after the end of the JSON object"
	case errors.Is(err, io.EOF):
		off, what = 0, "the file is empty"
	case errors.As(err, &se):
		off, what = se.Offset-1, "not valid JSON: "+se.Error()
	}
	line, col := lineCol(data, int(min(max(off, 0), int64(len(data)))))
	return &configs.Error{File: path, Line: line, Col: col, Err: err,
		Msg: what + "; " + why + ", so it is a result that cannot be read: restore it, aggregate it again (sweep result aggregate on its point directory) or run its point again, or move it out of the results directory"}
}

// nextNonSpace is the offset of the first byte at or after at that is
// not JSON white space (len(data) when there is none).
func nextNonSpace(data []byte, at int64) int64 {
	for at < int64(len(data)) && bytes.IndexByte([]byte(" \t\r\n"), data[at]) >= 0 {
		at++
	}
	return at
}

// ReadDir finds every aggregate result under dir, recursively: every
// *.json that ReadFile reads as a result; other JSON, temp files and logs
// are left out, and aiperf's own JSON artifacts (aiperf.IsArtifactJSON:
// never results, and tens of MB each at high concurrency) are not read at
// all. Links to directories are followed (replicates gathered as links to
// their runs), each directory once: a link to one already read, or a
// cycle, adds nothing. Files come in path order, those found through a
// link after the others, named under the link. A file taken for a result
// that cannot be read (ReadFile's *configs.Error, or the read error
// naming the file) is a problem; the other files are still returned. err
// is set only when dir itself cannot be walked (or ctx ends).
func ReadDir(ctx context.Context, dir string) (files []*File, problems []error, err error) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, fmt.Errorf("%s does not exist (give the directory holding the result files)", dir)
	case err != nil:
		return nil, nil, err
	case !st.IsDir():
		return nil, nil, fmt.Errorf("%s is not a directory (give the directory holding the result files)", dir)
	}
	w := &dirWalk{ctx: ctx, read: map[string]bool{}, links: []string{dir}}
	for i := 0; i < len(w.links); i++ {
		if err := w.walk(w.links[i]); err != nil {
			return nil, nil, err
		}
	}
	readBenchmarkSeconds(w.files)
	return w.files, append(w.problems, readRunRecords(w.files)...), nil
}

// RunRecordFile is the run record a point's run writes beside its result
// (sweep/run's RecordFile): what the run was, as the run itself saw it.
const RunRecordFile = "run.json"

// readRunRecords holds each file that is the only result of its
// directory against the run record beside it (RunRecordFile), when the
// record names the file (its result_file, by base name): a result whose
// "simulated" key is missing is read as simulated when the record
// records a simulation (its "simulation" block), so a key removed by
// hand never passes a simulated point for a real one; a result that
// says otherwise than its record is a problem naming both files (a
// usage error). A record that is missing or does not read says nothing.
func readRunRecords(files []*File) []error {
	in := map[string]int{}
	for _, f := range files {
		in[filepath.Dir(f.Path)]++
	}
	var problems []error
	for _, f := range files {
		dir := filepath.Dir(f.Path)
		if in[dir] != 1 {
			continue
		}
		path := filepath.Join(dir, RunRecordFile)
		data, err := inputfile.Read(path, inputfile.SmallJSON)
		if err != nil {
			continue
		}
		var rec struct {
			ResultFile string          `json:"result_file"`
			Simulation json.RawMessage `json:"simulation"`
		}
		if json.Unmarshal(data, &rec) != nil || filepath.Base(rec.ResultFile) != filepath.Base(f.Path) {
			continue
		}
		simulated := len(rec.Simulation) > 0 && string(rec.Simulation) != "null"
		switch {
		case !f.has("simulated"):
			f.Simulated = simulated
		case f.Simulated != simulated:
			problems = append(problems, usage.Refusef("%s says \"simulated\": %t, but its run record %s %s: the result and its run disagree on what was measured; aggregate the point again (sweep result aggregate %s) or move the result out of the results directory",
				f.Path, f.Simulated, path, map[bool]string{true: "records a simulation", false: "records a real run"}[simulated], dir))
		}
	}
	return problems
}

// readBenchmarkSeconds sets File.BenchmarkSeconds of each file that is
// the only result of its directory from the directory's aiperf summary
// (aiperf.ResolveArtifactDir); a summary that is missing or does not
// read leaves it unknown.
func readBenchmarkSeconds(files []*File) {
	in := map[string]int{}
	for _, f := range files {
		in[filepath.Dir(f.Path)]++
	}
	for _, f := range files {
		dir := filepath.Dir(f.Path)
		if in[dir] != 1 {
			continue
		}
		s, err := aiperf.ReadSummaryFile(filepath.Join(aiperf.ResolveArtifactDir(dir), aiperf.SummaryFile))
		if err != nil {
			continue
		}
		if d, ok := s.BenchmarkDuration(); ok {
			f.BenchmarkSeconds = d
		}
	}
}

// dirWalk is ReadDir's walk: the directories read (by their real path),
// the links to directories still to read, and what was found.
type dirWalk struct {
	ctx      context.Context
	read     map[string]bool
	links    []string
	files    []*File
	problems []error
}

// walk reads the tree at root (dir, or a link to a directory met on the
// way), leaving the directories already read and the links it meets to
// their own walk.
func (w *dirWalk) walk(root string) error {
	if lst, err := os.Lstat(root); err == nil && lst.Mode()&fs.ModeSymlink != 0 {
		// WalkDir does not follow a link, also at its root (the
		// directory read as empty), but a trailing separator makes the
		// root the directory itself, and the paths keep the name given.
		root += string(filepath.Separator)
	}
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if cerr := w.ctx.Err(); cerr != nil {
			return cerr
		}
		if d.IsDir() {
			real, err := filepath.EvalSymlinks(path)
			if err != nil {
				return err
			}
			if w.read[real] {
				return fs.SkipDir
			}
			w.read[real] = true
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(path); err == nil && st.IsDir() {
				w.links = append(w.links, path)
				return nil
			}
		}
		if !strings.HasSuffix(d.Name(), ".json") || aiperf.IsArtifactJSON(d.Name()) {
			return nil
		}
		f, err := ReadFile(path)
		switch {
		case errors.Is(err, ErrNotResult):
		case err != nil:
			w.problems = append(w.problems, err)
		default:
			w.files = append(w.files, f)
		}
		return nil
	})
}

// Excluded says why a result does not count as a measurement (marked
// invalid, no successful request, an error rate above InferenceX's
// threshold, no per-GPU throughput); "" when it counts. Readers of
// results (sweeps, knees, reports) leave excluded points out.
func (f *File) Excluded() string {
	r := &f.Result
	profiled, errs := r.RequestAccounting.RecordsProfiled, r.RequestAccounting.RecordsErrorDropped
	switch {
	case f.ValidStated && !r.Valid:
		why := "marked invalid"
		if len(r.InvalidReasons) > 0 {
			why += ": " + strings.Join(r.InvalidReasons, "; ")
		}
		return why
	case r.NumRequestsSuccessful == 0 && f.has("num_requests_successful"):
		return ExcludedNoSuccess
	case f.ErrorRate() > DefaultFailedRequestThreshold:
		return fmt.Sprintf("error rate %.1f%% > %.0f%% (%d of %d requests failed)", 100*f.ErrorRate(),
			100*DefaultFailedRequestThreshold, errs, profiled+errs)
	case r.RequestMetrics.Throughput.PerGPU == nil || r.RequestMetrics.Throughput.PerGPU.TotalTputTPS == nil:
		const key = "request_metrics.throughput.per_gpu.total_tput_tps"
		for _, n := range f.NonFinite {
			if n.Path == key {
				return fmt.Sprintf("no per-GPU throughput (%s is %s)", key, n.Token)
			}
		}
		return "no per-GPU throughput (request_metrics.throughput.per_gpu is empty)"
	}
	return ""
}

// ExcludedNoSuccess is File.Excluded's reason for a point without one
// successful request.
const ExcludedNoSuccess = "no successful request"

// ErrorRate is records_error_dropped / (records_profiled +
// records_error_dropped); 0 without request_accounting.
func (f *File) ErrorRate() float64 {
	a := f.RequestAccounting
	if d := a.RecordsProfiled + a.RecordsErrorDropped; d > 0 {
		return float64(a.RecordsErrorDropped) / float64(d)
	}
	return 0
}

// keyError is the positioned error of a top-level key of the result file
// data (as read, before non-finite numbers were replaced): the key's line
// and column, 0 when the key cannot be found.
func keyError(path string, data []byte, key, msg string) *configs.Error {
	e := &configs.Error{File: path, Key: key, Msg: msg}
	off := topLevelKey(data, key)
	if off < 0 {
		return e
	}
	e.Line, e.Col = lineCol(data, off)
	return e
}

// lineCol is the 1-based line and column (in bytes) of offset off in
// data.
func lineCol(data []byte, off int) (line, col int) {
	return 1 + bytes.Count(data[:off], []byte("\n")), off - bytes.LastIndexByte(data[:off], '\n')
}

// topLevelKey is the byte offset of the opening quote of key in the
// top-level object of data, or -1.
func topLevelKey(data []byte, key string) int {
	depth := 0
	for i := 0; i < len(data); {
		switch data[i] {
		case '"':
			end := stringEnd(data, i)
			if depth == 1 {
				rest := bytes.TrimLeft(data[end:], " \t\r\n")
				var k string
				if len(rest) > 0 && rest[0] == ':' && json.Unmarshal(data[i:end], &k) == nil && k == key {
					return i
				}
			}
			i = end
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
		i++
	}
	return -1
}

// IsFile reports whether data is an aggregate result file (what ReadFile
// reads): the test atomicfile.CheckReplace makes of a file an --out that
// writes a result may replace.
func IsFile(data []byte) bool {
	_, err := parse("", data)
	return err == nil
}
