package result

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sweep/configs"

	"sweep/internal/inputfile"
	"sweep/metrics/aiperf"
)

// DefaultFailedRequestThreshold is InferenceX's AIPERF_FAILED_REQUEST_THRESHOLD.
const DefaultFailedRequestThreshold = 0.10

// ValidateOptions configure Validate.
type ValidateOptions struct {
	// FailedRequestThreshold is the largest accepted error fraction,
	// inclusive, in [0, 1].
	FailedRequestThreshold float64 `json:"failed_request_threshold"`
	// RequiredMetricPrefix, when set (e.g. "sglang:"), also requires
	// non-empty server_metrics_export.json and .csv with at least one
	// metric of that prefix (InferenceX's AIPERF_REQUIRED_SERVER_METRIC_PREFIX).
	RequiredMetricPrefix string `json:"required_metric_prefix,omitempty"`
}

// Verdict is the outcome of Validate. Valid is true only when every check
// passed; then Message is the success line, otherwise Reason says why.
type Verdict struct {
	Valid   bool   `json:"valid"`
	Reason  string `json:"reason"`  // why the run is invalid (InferenceX's wording)
	Message string `json:"message"` // the success line(s) InferenceX prints
	// Errors and Completed are the request counts the error rate used;
	// zero when the summary could not be read.
	Errors    float64 `json:"errors"`
	Completed float64 `json:"completed"`
}

// ErrBadThreshold is returned for a threshold outside [0, 1].
var ErrBadThreshold = errors.New("--failed-request-threshold must be between 0 and 1")

// Validate checks an aiperf artifact directory as InferenceX does after a
// replay, in the same order: the summary exists and is an object,
// request_count is present, at least one request completed, the error
// fraction is within the threshold; then, when a prefix is required, the
// server-metrics files exist and name a metric with that prefix.
func Validate(artifactDir string, opts ValidateOptions) (Verdict, error) {
	t := opts.FailedRequestThreshold
	if math.IsNaN(t) || t < 0 || t > 1 {
		return Verdict{}, ErrBadThreshold
	}
	v := validateErrorRate(artifactDir, t)
	if !v.Valid || opts.RequiredMetricPrefix == "" {
		return v, nil
	}
	msg, reason := checkMetricPrefix(artifactDir, opts.RequiredMetricPrefix)
	if reason != "" {
		v.Valid, v.Reason = false, reason
		return v, nil
	}
	v.Message += "\n" + msg
	return v, nil
}

// summaryPath finds profile_export_aiperf.json directly in dir or in its
// first subdirectory (by name) that has one.
func summaryPath(dir string) string {
	direct := filepath.Join(dir, aiperf.SummaryFile)
	if isFile(direct) {
		return direct
	}
	entries, err := os.ReadDir(dir)
	if err == nil {
		for _, e := range entries {
			c := filepath.Join(dir, e.Name(), aiperf.SummaryFile)
			if e.IsDir() && isFile(c) {
				return c
			}
		}
	}
	return direct
}

func validateErrorRate(dir string, threshold float64) Verdict {
	path := summaryPath(dir)
	if !isFile(path) {
		return Verdict{Reason: path + " not found"}
	}
	s, err := aiperf.ReadSummaryFile(path)
	if err != nil {
		if fe, ok := errors.AsType[*configs.Error](err); ok && fe.Key == "(top level)" {
			return Verdict{Reason: path + " must contain a JSON object"}
		}
		return Verdict{Reason: fmt.Sprintf("failed to read %s: %v", path, err)}
	}
	successes, err := summaryAvg(s, "request_count")
	if err != nil {
		return Verdict{Reason: fmt.Sprintf("failed to read %s: %v", path, err)}
	}
	errCount, err := summaryAvg(s, "error_request_count")
	if err != nil {
		return Verdict{Reason: fmt.Sprintf("failed to read %s: %v", path, err)}
	}
	completed, err := summaryAvg(s, "completed_request_count")
	if err != nil {
		return Verdict{Reason: fmt.Sprintf("failed to read %s: %v", path, err)}
	}
	if successes == nil {
		return Verdict{Reason: "request_count.avg is missing"}
	}
	errs := 0.0
	if errCount != nil {
		errs = *errCount
	}
	var done float64
	if completed != nil {
		done = *completed
	} else {
		done = *successes + errs
	}
	if done <= 0 {
		return Verdict{Reason: "aiperf completed zero requests", Errors: errs, Completed: done}
	}
	rate := errs / done
	line := fmt.Sprintf("%s/%s = %s", pyG(errs), pyG(done), pyPercent(rate))
	if rate > threshold {
		return Verdict{
			Reason: fmt.Sprintf("aiperf request error rate exceeded the benchmark limit: %s > %s", line, pyPercent(threshold)),
			Errors: errs, Completed: done,
		}
	}
	return Verdict{
		Valid:   true,
		Message: fmt.Sprintf("Validated aiperf request error rate: %s <= %s", line, pyPercent(threshold)),
		Errors:  errs, Completed: done,
	}
}

// summaryAvg reads <name>.avg: nil when the metric or its avg is absent;
// an error when the metric is not an object or avg is not a finite
// non-negative number.
func summaryAvg(s *aiperf.Summary, name string) (*float64, error) {
	raw, ok := s.Raw(name)
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	m, ok, err := s.Metric(name)
	if err != nil || !ok {
		return nil, fmt.Errorf("%s must be an object", name)
	}
	if !m.Avg.Present() {
		return nil, nil
	}
	v, ok := m.Avg.Number()
	if !ok {
		return nil, fmt.Errorf("%s.avg must be numeric", name)
	}
	if !finite(v) || v < 0 {
		return nil, fmt.Errorf("%s.avg must be a finite non-negative number", name)
	}
	return &v, nil
}

// checkMetricPrefix is InferenceX's required-server-metrics check.
func checkMetricPrefix(dir, prefix string) (msg, reason string) {
	jsonPath := filepath.Join(dir, aiperf.ServerMetricsFile)
	csvPath := filepath.Join(dir, aiperf.ServerMetricsCSV)
	if !nonEmptyFile(jsonPath) || !nonEmptyFile(csvPath) {
		return "", "required AIPerf server metrics artifacts are missing or empty in " + dir
	}
	found, err := inputfile.Contains(jsonPath, inputfile.AiperfServerMetrics, []byte(`"`+prefix))
	if inputfile.IsRefused(err) {
		return "", err.Error()
	}
	if err != nil || !found {
		return "", fmt.Sprintf("%s contains no metric with required prefix '%s'", jsonPath, prefix)
	}
	return fmt.Sprintf("Validated required AIPerf server metrics prefix '%s'", prefix), ""
}

func nonEmptyFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Size() > 0
}

// pyG formats like Python's "{:g}".
func pyG(x float64) string { return fmt.Sprintf("%g", x) }

// pyPercent formats like Python's "{:.3%}".
func pyPercent(x float64) string { return fmt.Sprintf("%.3f%%", x*100) }
