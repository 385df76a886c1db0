package configs

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParallelismGPUs(t *testing.T) {
	for _, tc := range []struct {
		p    Parallelism
		want int
	}{
		{Parallelism{TP: 8, PP: 1, DCPSize: 8, PCPSize: 1, EP: 8, DPAttn: true}, 8},
		{Parallelism{TP: 4, PP: 2, PCPSize: 2}, 16},
		{Parallelism{TP: 2}, 2}, // unset sizes count as 1
		{Parallelism{}, 1},
	} {
		assert.Equal(t, tc.want, tc.p.GPUs(), "%+v", tc.p)
	}
}
