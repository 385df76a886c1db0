package usage

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestError(t *testing.T) {
	err := fmt.Errorf("outer: %w", Errorf("--x %d: %w", 3, fs.ErrNotExist))
	u, ok := errors.AsType[*Error](err)
	assert.True(t, ok)
	assert.Equal(t, "--x 3: file does not exist", u.Error())
	assert.ErrorIs(t, err, fs.ErrNotExist, "the cause stays reachable")
	_, ok = errors.AsType[*Error](errors.New("plain"))
	assert.False(t, ok)
}

// TestIsRefusal: a refusal stays one however it is wrapped, also by a
// plain usage Error; a plain usage Error is none.
func TestIsRefusal(t *testing.T) {
	refusal := Refusef("--out %s: not empty: give another --out", "d")
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"refusal", refusal, true},
		{"wrapped", fmt.Errorf("point c4: %w", refusal), true},
		{"inside a usage error", Errorf("--out: %w", refusal), true},
		{"marked", Refuse(errors.New("in use: wait for it")), true},
		{"joined", errors.Join(errors.New("other"), refusal), true},
		{"usage error", Errorf("unknown flag --prot"), false},
		{"wrapping a plain error", Errorf("--out: %w", fs.ErrPermission), false},
		{"no usage error", errors.New("boom"), false},
		{"nil", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, IsRefusal(tc.err), "%v", tc.err)
		})
	}
	assert.NoError(t, Refuse(nil))
	assert.Equal(t, "--out d: not empty: give another --out", refusal.Error())
}
