package power

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"sweep/metrics/aiperf"
)

// OffsetFile is where the point runner stores `date +%z` before the load.
const OffsetFile = "agentic_power_timezone_offset.txt"

// Window is the benchmark window of agentic_power_window.json: aiperf's
// profiling start and end as Unix seconds and the successful profiled
// requests' counts.
type Window struct {
	Start, End        float64
	Duration          float64
	Completed         int64
	TotalInputTokens  int64
	TotalOutputTokens int64
}

func (w *Window) value() *value {
	return object().
		set("benchmark_start_time_unix", float(w.Start)).
		set("benchmark_end_time_unix", float(w.End)).
		set("duration", float(w.Duration)).
		set("completed", integer(w.Completed)).
		set("total_input_tokens", integer(w.TotalInputTokens)).
		set("total_output_tokens", integer(w.TotalOutputTokens))
}

var utcOffsetRE = regexp.MustCompile(`^([+-])([0-9]{2}):?([0-9]{2})$`)

// capturedZone reads the offset file: a fixed zone, or the reason code.
func capturedZone(resultDir string) (*time.Location, string) {
	path := filepath.Join(resultDir, OffsetFile)
	if !isRegular(path) {
		return nil, "profile_timezone_offset_missing"
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "profile_timezone_offset_invalid"
	}
	m := utcOffsetRE.FindStringSubmatch(strings.TrimSpace(string(data)))
	if m == nil {
		return nil, "profile_timezone_offset_invalid"
	}
	hours, minutes := atoi(m[2]), atoi(m[3])
	if hours > 23 || minutes > 59 {
		return nil, "profile_timezone_offset_invalid"
	}
	off := hours*3600 + minutes*60
	if m[1] == "-" {
		off = -off
	}
	return time.FixedZone(m[0], off), ""
}

// isRegular is Path.is_file(): a regular file, following symlinks.
func isRegular(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// profileTime is _parse_profile_timestamp: a JSON number is epoch seconds;
// a string is an ISO time ("Z" read as +00:00), given zone when it has
// none (no zone at all: not a time).
func profileTime(raw json.RawMessage, fallback *time.Location) (float64, bool) {
	v, err := parseValue(raw)
	if err != nil {
		return 0, false
	}
	switch v.kind {
	case kindNumber:
		f, err := jsonNumber(v.num)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return 0, false
		}
		return f, true
	case kindString:
		s := strings.TrimSpace(v.str)
		if s == "" {
			return 0, false
		}
		c, ok := parseISO(strings.ReplaceAll(s, "Z", "+00:00"))
		if !ok {
			return 0, false
		}
		if !c.aware {
			if fallback == nil {
				return 0, false
			}
			_, off := time.Date(c.year, time.Month(c.month), c.day, c.hour, c.min, c.sec, 0, fallback).Zone()
			c.aware, c.offset = true, off
		}
		return c.awareTimestamp(), true
	}
	return 0, false
}

// naiveISO reports whether raw is a string fromisoformat parses without a
// zone (such a time needs the captured offset).
func naiveISO(raw json.RawMessage) bool {
	v, err := parseValue(raw)
	if err != nil || v.kind != kindString {
		return false
	}
	c, ok := parseISO(strings.ReplaceAll(strings.TrimSpace(v.str), "Z", "+00:00"))
	return ok && !c.aware
}

// BuildWindow is build_power_window: the window from aiperf's artifacts
// under resultDir, or nil and the one reason it could not be built.
// records, when not nil, are the records file's records as the caller
// already read them (aiperf.ReadRecords), so the file is not decoded a
// second time; nil reads them from it.
func BuildWindow(resultDir string, records []aiperf.Record) (*Window, []string) {
	dir := aiperf.ResolveArtifactDir(resultDir)
	summaryPath := filepath.Join(dir, aiperf.SummaryFile)
	recordsPath := filepath.Join(dir, aiperf.RecordsFile)
	if !isRegular(summaryPath) || !isRegular(recordsPath) {
		return nil, []string{"profile_artifacts_missing"}
	}
	summary, err := aiperf.ReadSummaryFile(summaryPath)
	if err != nil {
		return nil, []string{"profile_artifacts_invalid"}
	}
	var completed, inputs, outputs int64
	var nInputs, nOutputs int
	negative := false
	count := func(r *aiperf.Record) error {
		if r.Warmup() || r.Failed() {
			return nil
		}
		completed++
		for _, m := range []struct {
			tag string
			sum *int64
			n   *int
		}{{"input_sequence_length", &inputs, &nInputs}, {"output_sequence_length", &outputs, &nOutputs}} {
			mv := r.Metrics.Get(m.tag)
			if mv == nil {
				continue
			}
			v, ok := mv.Value.Int()
			if !ok {
				continue
			}
			if v < 0 {
				negative = true
			}
			*m.sum += v
			*m.n++
		}
		return nil
	}
	if records != nil {
		for i := range records {
			_ = count(&records[i]) // count never fails
		}
	} else {
		f, err := os.Open(recordsPath)
		if err != nil {
			return nil, []string{"profile_artifacts_invalid"}
		}
		err = aiperf.EachRecord(f, recordsPath, count)
		f.Close()
		if err != nil {
			return nil, []string{"profile_artifacts_invalid"}
		}
	}

	rawStart, okStart := summary.Raw("start_time")
	rawEnd, okEnd := summary.Raw("end_time")
	if !okStart || !okEnd || isNull(rawStart) || isNull(rawEnd) {
		return nil, []string{"profile_window_missing"}
	}
	var zone *time.Location
	if naiveISO(rawStart) || naiveISO(rawEnd) {
		var reason string
		if zone, reason = capturedZone(resultDir); reason != "" {
			return nil, []string{reason}
		}
	}
	start, ok1 := profileTime(rawStart, zone)
	end, ok2 := profileTime(rawEnd, zone)
	if !ok1 || !ok2 || end <= start {
		return nil, []string{"profile_window_invalid"}
	}
	if completed <= 0 {
		return nil, []string{"successful_request_count_invalid"}
	}
	if int64(nInputs) != completed || int64(nOutputs) != completed || negative || inputs <= 0 || outputs <= 0 {
		return nil, []string{"incomplete_token_accounting"}
	}
	return &Window{
		Start: start, End: end, Duration: end - start,
		Completed: completed, TotalInputTokens: inputs, TotalOutputTokens: outputs,
	}, nil
}

func isNull(raw json.RawMessage) bool {
	return strings.TrimSpace(string(raw)) == "null"
}

// jsonNumber is float() of a JSON number literal (beyond the float range:
// an infinity).
func jsonNumber(lit string) (float64, error) {
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, err
	}
	return f, nil
}
