package textdiff

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLines(t *testing.T) {
	a := strings.Split("a b c d e", " ")
	b := strings.Split("a c d x e y", " ")
	ops, ok := Lines(a, b, 100)
	assert.True(t, ok)
	var got []string
	for _, op := range ops {
		switch op.Kind {
		case '=':
			got = append(got, "="+a[op.A])
		case '-':
			got = append(got, "-"+a[op.A])
		case '+':
			got = append(got, "+"+b[op.B])
		}
	}
	assert.Equal(t, []string{"=a", "-b", "=c", "=d", "+x", "=e", "+y"}, got)
	_, ok = Lines(a, b, 2)
	assert.False(t, ok, "three edits are more than two")
}

func TestDistanceAndClosest(t *testing.T) {
	assert.Equal(t, 3, Distance("kitten", "sitting", 10))
	assert.Equal(t, 2, Distance("kitten", "sitting", 2), "bounded at the limit")
	assert.Equal(t, 0, Distance("", "", 1))
	keys := []string{"qwen3.5-fp8-mi325x-sglang-agentic-mtp", "qwen3.5-fp8-mi300x-sglang-agentic-mtp", "glm5.2-fp8-mi325x-sglang-agentic-mtp"}
	assert.Equal(t, []string{"qwen3.5-fp8-mi325x-sglang-agentic-mtp", "qwen3.5-fp8-mi300x-sglang-agentic-mtp"},
		Closest("qwen3.5-fp8-mi325x-sglang-agentic", keys, 2, 6)) // distances 4 and 6
	assert.Empty(t, Closest("dsr1", keys, 3, 1))
}
