package power

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/usage"
)

func TestParseGPUFilter(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  string // "" for none
	}{
		{"all", nil, ""},
		{"0, 1,2", []string{"0", "1", "2"}, ""},
		{"7", []string{"7"}, ""},
		{"0,,1", nil, "an empty GPU id"},
		// Before, these were taken: a name matched no sample, and a
		// GPU listed twice counted twice towards the expected count.
		{"x", nil, `"x" is not a GPU index`},
		{"0,-1", nil, `"-1" is not a GPU index`},
		{"01", nil, `"01" is not a GPU index`},
		{"0,0,1,2", nil, "GPU 0 is listed twice"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseGPUFilter(tc.in)
			if tc.err == "" {
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
				return
			}
			require.Error(t, err, "got %q", got)
			assert.Contains(t, err.Error(), tc.err)
			_, ok := errors.AsType[*usage.Error](err)
			assert.True(t, ok, "a usage error: %v", err)
		})
	}
}
