package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestResultValidateCLI(t *testing.T) {
	tests := []struct {
		name           string
		args           []string
		code           int
		stdout, stderr string
	}{
		{"valid", []string{filepath.Join(aggCases, "vllm-tp4-mtp-conc16", "aiperf_artifacts")}, 0,
			"Validated aiperf request error rate: 0/110 = 0.000% <= 10.000%", ""},
		{"error rate", []string{filepath.Join(aggCases, "sglang-error-rate-15pct", "aiperf_artifacts")}, exitError,
			"", "30/200 = 15.000% > 10.000%"},
		{"looser threshold", []string{filepath.Join(aggCases, "sglang-error-rate-15pct", "aiperf_artifacts"), "--failed-request-threshold", "0.2"}, 0,
			"15.000% <= 20.000%", ""},
		{"no summary", []string{filepath.Join(aggCases, "vllm-zero-success", "aiperf_artifacts")}, exitError,
			"", "profile_export_aiperf.json not found"},
		{"required prefix missing csv", []string{filepath.Join(aggCases, "vllm-tp4-mtp-conc16", "aiperf_artifacts"), "--required-metric-prefix", "vllm:"}, exitError,
			"", "required AIPerf server metrics artifacts are missing or empty"},
		{"bad threshold", []string{"x", "--failed-request-threshold", "1.5"}, exitUsage, "", "--failed-request-threshold 1.5: want a fraction in [0, 1], e.g. 0.1\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"result", "validate"}, tc.args...)...)
			assert.Equal(t, tc.code, code, "stdout %s stderr %s", stdout, stderr)
			assert.Contains(t, stdout, tc.stdout)
			assert.Contains(t, stderr, tc.stderr)
		})
	}
}
