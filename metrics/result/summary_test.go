package result

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRequestAccountingString: `sweep run` printed "841 ok of 842
// recorded (warm-up included)", which read as one failed request where
// the other was the warm-up. The line counts failures always and says
// what the others are.
func TestRequestAccountingString(t *testing.T) {
	tests := []struct {
		name string
		acct string // request_accounting as a result file holds it
		want string
	}{
		{"1 warm-up, none failed",
			`{"records_total": 842, "records_profiled": 841, "records_dropped_total": 1, "records_warmup_dropped": 1, "records_error_dropped": 0, "error_categories": {}}`,
			"842 recorded: 841 ok and measured, 1 warm-up (not measured), 0 failed"},
		{"a request cancelled at the end",
			`{"records_total": 846, "records_profiled": 841, "records_dropped_total": 5, "records_warmup_dropped": 4, "records_error_dropped": 1, "error_categories": {"RequestCancellationError": 1}}`,
			"846 recorded: 841 ok and measured, 4 warm-up (not measured), 1 failed (RequestCancellationError 1)"},
		{"a failed warm-up counts as both",
			`{"records_total": 100, "records_profiled": 93, "records_dropped_total": 7, "records_warmup_dropped": 4, "records_error_dropped": 4, "error_categories": {"TimeoutError": 3, "RequestCancellationError": 1}}`,
			"100 recorded: 93 ok and measured, 4 warm-up (not measured), 4 failed (1 of them in the warm-up; TimeoutError 3, RequestCancellationError 1)"},
		{"no warm-up",
			`{"records_total": 10, "records_profiled": 10, "records_dropped_total": 0, "records_warmup_dropped": 0, "records_error_dropped": 0, "error_categories": {}}`,
			"10 recorded: 10 ok and measured, 0 warm-up (not measured), 0 failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var a RequestAccounting
			require.NoError(t, json.Unmarshal([]byte(tc.acct), &a))
			assert.Equal(t, tc.want, a.String(), "accounting %s", tc.acct)
		})
	}
}
