package filename

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct{ name, err string }{
		{"qwen3.5_tp8_conc4", ""},
		{"sglang_command.txt", ""},
		{"..x", ""},
		{"", "result_filename is empty: want a file name"},
		{".", `result_filename "." must be a file name, not a path`},
		{"..", `result_filename ".." must be a file name, not a path`},
		{"../victim", `result_filename "../victim" must be a file name, not a path`},
		{"a/b", `result_filename "a/b" must be a file name, not a path`},
		{"/etc/passwd", `result_filename "/etc/passwd" must be a file name, not a path`},
		{`..\x`, `result_filename "..\\x" must be a file name, not a path`},
		{"a\nb", `result_filename "a\nb" contains control characters`},
	} {
		err := Check("result_filename", tc.name)
		if tc.err == "" {
			assert.NoError(t, err, tc.name)
			continue
		}
		assert.EqualError(t, err, tc.err)
		assert.True(t, errors.Is(err, ErrNotElement))
	}
}
