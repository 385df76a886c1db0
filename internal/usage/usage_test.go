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
