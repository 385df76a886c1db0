package configs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mergeBomb is about 1 KB of YAML whose merge keys double at each of n
// levels (<<: [*prev, *prev]): expanded naively it visits 2^n mappings.
func mergeBomb(n int) string {
	var b strings.Builder
	b.WriteString("l0: &l0 {a: 1}\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "l%d: &l%d\n  <<: [*l%d, *l%d]\n  k%d: %d\n", i, i, i-1, i-1, i, i)
	}
	fmt.Fprintf(&b, "bomb-key:\n  <<: *l%d\n  image: x\n", n)
	return b.String()
}

// TestMergeKeyBombIsBounded: the bomb used to hang validate, plan and run
// for more than ten minutes; now each mapping is expanded once.
func TestMergeKeyBombIsBounded(t *testing.T) {
	_, err := ParseMasters(Source{Name: "bomb.yaml", Data: []byte(mergeBomb(30))})
	require.Error(t, err, "the bomb's keys are not master configs")
	assert.Contains(t, err.Error(), "bomb.yaml:")
}

func TestMergeKeyLimits(t *testing.T) {
	// A merge of more distinct keys than maxMergedKeys is refused, naming the anchor.
	var b strings.Builder
	b.WriteString("wide: &wide\n")
	for i := 0; i <= maxMergedKeys; i++ {
		fmt.Fprintf(&b, "  k%d: %d\n", i, i)
	}
	b.WriteString("cfg:\n  <<: *wide\n")
	_, err := ParseMasters(Source{Name: "wide.yaml", Data: []byte(b.String())})
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "wide.yaml:10004:7: cfg.<<: merging *wide gives more than 10000 keys"), "%.300s", err)

	// A merge that refers back to the mapping it is in is a cycle, not a hang.
	cycle := "a: &a\n  x: 1\n  <<: *a\n"
	_, err = ParseMasters(Source{Name: "cycle.yaml", Data: []byte(cycle)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cycle.yaml:")
}
