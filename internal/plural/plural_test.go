package plural

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{
		{0, "0 arms"},
		{1, "1 arm"},
		{2, "2 arms"},
		{-1, "-1 arms"},
	} {
		assert.Equal(t, tc.want, Count(tc.n, "arm", "arms"))
	}
	assert.Equal(t, "concurrency", Word(1, "concurrency", "concurrencies"))
	assert.Equal(t, "concurrencies", Word(3, "concurrency", "concurrencies"))
}
