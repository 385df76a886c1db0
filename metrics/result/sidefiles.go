package result

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"sweep/internal/inputfile"
	"sweep/internal/pyjson"
	"sweep/metrics/aiperf"
)

func trimPy(s string) string { return strings.TrimFunc(s, unicode.IsSpace) }

// maxLogHead is how much of an engine log is read for the KV pool size.
const maxLogHead = 64 << 20

// ServerLogPaths lists the engine logs InferenceX reads the KV pool size
// from: RESULT_DIR/server.log, then watchtower-*.out in RESULT_DIR and its
// first three parents (sorted per directory), without duplicates.
func ServerLogPaths(resultDir string) []string {
	var paths []string
	if p := filepath.Join(resultDir, "server.log"); isFile(p) {
		paths = append(paths, p)
	}
	// Lexical parents, as Python's Path.parents: "results" has only ".".
	roots := []string{resultDir}
	for d, i := filepath.Clean(resultDir), 0; i < 3; i++ {
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		roots = append(roots, parent)
		d = parent
	}
	for _, root := range roots {
		if !isDir(root) {
			continue
		}
		m, _ := filepath.Glob(filepath.Join(root, "watchtower-*.out")) // only ErrBadPattern, impossible here
		sort.Strings(m)
		paths = append(paths, m...)
	}
	seen := map[string]bool{}
	out := paths[:0]
	for _, p := range paths {
		key, err := filepath.EvalSymlinks(p)
		if err != nil {
			key = p
		}
		if key, err = filepath.Abs(key); err != nil {
			key = p
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, p)
	}
	return out
}

// readLogHead reads the first 64 MiB of a log as text (NULs dropped,
// invalid UTF-8 replaced).
func readLogHead(path string) (string, error) {
	f, err := inputfile.Open(path, inputfile.Log)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxLogHead))
	if err != nil {
		return "", err
	}
	return strings.ReplaceAll(strings.ToValidUTF8(string(data), "\uFFFD"), "\x00", ""), nil
}

var (
	sglangRankRe      = regexp.MustCompile(`\b(DP\d+\s+TP\d+\s+EP\d+)\b`)
	sglangMaxTokensRe = regexp.MustCompile(`\bmax_total_num_tokens=(\d+)\b`)
	sglangDPSizeRe    = regexp.MustCompile(`\bdp_size=(\d+)\b`)
	vllmEngineTagRe   = regexp.MustCompile(`\((EngineCore(?:_DP\d+)?)\s+pid=\d+\)`)
	vllmKVSizeRe      = regexp.MustCompile(`GPU KV cache size:\s*([\d,]+)\s*tokens`)
)

// SGLangKVPoolFromLog reads the GPU KV pool size from an SGLang log: the
// last max_total_num_tokens per "DPn TPn EPn" rank tag, summed; a single
// tagged (or untagged) line is multiplied by dp_size when the log shows a
// dp_size above 1. ok is false when the log has no such line.
func SGLangKVPoolFromLog(log string) (tokens int64, ok bool) {
	if log == "" {
		return 0, false
	}
	var order []string
	perRank := map[string]int64{}
	var bare int64
	bareCount := 0
	dpSize := int64(0)
	if m := sglangDPSizeRe.FindStringSubmatch(log); m != nil {
		dpSize, _ = strconv.ParseInt(m[1], 10, 64)
	}
	for _, line := range pyjson.SplitLines(log) {
		if !strings.Contains(line, "max_total_num_tokens") {
			continue
		}
		m := sglangMaxTokensRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil || n <= 0 {
			continue
		}
		if tag := sglangRankRe.FindStringSubmatch(line); tag != nil {
			if _, seen := perRank[tag[1]]; !seen {
				order = append(order, tag[1])
			}
			perRank[tag[1]] = n
		} else {
			bare += n
			bareCount++
		}
	}
	if len(perRank) > 0 {
		if dpSize > 1 && len(perRank) == 1 {
			return perRank[order[0]] * dpSize, true
		}
		var sum int64
		for _, v := range perRank {
			sum += v
		}
		return sum, true
	}
	if bareCount == 1 && dpSize > 1 {
		return bare * dpSize, true
	}
	return bare, bareCount > 0
}

// VLLMKVPoolFromLog reads "GPU KV cache size: N tokens" from a vLLM log:
// the last value per EngineCore tag, summed, else the sum of untagged lines.
func VLLMKVPoolFromLog(log string) (tokens int64, ok bool) {
	if log == "" {
		return 0, false
	}
	perEngine := map[string]int64{}
	var bare int64
	bareFound := false
	for _, line := range pyjson.SplitLines(log) {
		if !strings.Contains(line, "GPU KV cache size") {
			continue
		}
		m := vllmKVSizeRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, err := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
		if err != nil || n <= 0 {
			continue
		}
		if tag := vllmEngineTagRe.FindStringSubmatch(line); tag != nil {
			perEngine[tag[1]] = n
		} else {
			bare += n
			bareFound = true
		}
	}
	if len(perEngine) > 0 {
		var sum int64
		for _, v := range perEngine {
			sum += v
		}
		return sum, true
	}
	return bare, bareFound
}

// sumLogCapacities adds a parser's result over several logs.
func sumLogCapacities(logs []string, parse func(string) (int64, bool)) (int64, bool) {
	var total int64
	found := false
	for _, l := range logs {
		if v, ok := parse(l); ok {
			total += v
			found = true
		}
	}
	return total, found
}

// TraceLengths maps a WEKA trace id to the expected output length of each
// of its top-level turns.
type TraceLengths map[string][]int64

// LoadTraceLengths finds the newest snapshot of a
// datasets--semianalysisai--cc-traces-weka* dataset under hubCache that
// holds .jsonl or .json files and reads every trace's turns of type "n" or
// "s" (output_length, else out). A missing cache gives nil, no error.
func LoadTraceLengths(hubCache string) (TraceLengths, error) {
	if !isDir(hubCache) {
		return nil, nil
	}
	dsDirs, _ := filepath.Glob(filepath.Join(hubCache, "datasets--semianalysisai--cc-traces-weka*"))
	type snap struct {
		path  string
		mtime int64
	}
	var snaps []snap
	for _, d := range dsDirs {
		entries, err := os.ReadDir(filepath.Join(d, "snapshots"))
		if err != nil {
			continue
		}
		for _, e := range entries {
			p := filepath.Join(d, "snapshots", e.Name())
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				snaps = append(snaps, snap{p, st.ModTime().UnixNano()})
			}
		}
	}
	sort.SliceStable(snaps, func(i, j int) bool { return snaps[i].mtime > snaps[j].mtime })
	for _, s := range snaps {
		jsonl, _ := filepath.Glob(filepath.Join(s.path, "*.jsonl"))
		js, _ := filepath.Glob(filepath.Join(s.path, "*.json"))
		if len(jsonl) == 0 && len(js) == 0 {
			continue
		}
		sort.Strings(jsonl)
		sort.Strings(js)
		out := TraceLengths{}
		for _, p := range jsonl {
			if err := readTraceJSONL(p, out); err != nil {
				return nil, err
			}
		}
		for _, p := range js {
			data, err := inputfile.Read(p, inputfile.Dataset)
			if err != nil {
				continue // unreadable files are skipped, as InferenceX does
			}
			out.addBlob(data)
		}
		return out, nil
	}
	return nil, nil
}

func readTraceJSONL(path string, out TraceLengths) error {
	f, err := inputfile.Open(path, inputfile.Dataset)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	for sc.Scan() {
		if b := bytes.TrimSpace(sc.Bytes()); len(b) > 0 {
			out.addBlob(b)
		}
	}
	return nil // a read error ends the file, as OSError does there
}

// addBlob adds one trace object; anything else is ignored.
func (t TraceLengths) addBlob(b []byte) {
	var blob struct {
		ID       json.RawMessage `json:"id"`
		Requests []struct {
			Type         json.RawMessage `json:"type"`
			OutputLength json.RawMessage `json:"output_length"`
			Out          json.RawMessage `json:"out"`
		} `json:"requests"`
	}
	if json.Unmarshal(b, &blob) != nil || !aiperf.Truthy(blob.ID) {
		return
	}
	var turns []int64
	for _, r := range blob.Requests {
		typ := aiperf.ParseScalar(r.Type)
		if str, ok := typ.Text(); !ok || (str != "n" && str != "s") {
			continue
		}
		v := aiperf.ParseScalar(r.OutputLength)
		if !v.Present() {
			v = aiperf.ParseScalar(r.Out)
		}
		n := int64(0)
		if v.Truthy() {
			n, _ = v.Int()
		}
		turns = append(turns, n)
	}
	if len(turns) > 0 {
		t[aiperf.PyStr(blob.ID)] = turns
	}
}

// expected returns the expected output length of each record whose
// conversation (with any "::" sub-agent suffix stripped) and turn index are
// in the dataset.
func (t TraceLengths) expected(recs []*aiperf.Record) []int64 {
	if len(t) == 0 {
		return nil
	}
	var out []int64
	for _, r := range recs {
		conv := r.Metadata.ConversationID
		if conv == "" || r.Metadata.TurnIndex == nil {
			continue
		}
		id, _, _ := strings.Cut(conv, "::")
		turns := t[id]
		idx := *r.Metadata.TurnIndex
		if len(turns) == 0 || idx >= float64(len(turns)) {
			continue
		}
		i := int(idx)
		if i < 0 {
			i += len(turns) // Python's negative indexing
			if i < 0 {
				continue
			}
		}
		out = append(out, turns[i])
	}
	return out
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
