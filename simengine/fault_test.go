package simengine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFaultForms: FaultForms names every fault kind as ParseFaults reads
// it (the help texts and errors that list the faults come from it), and
// an unknown kind is refused with that list.
func TestFaultForms(t *testing.T) {
	fill := strings.NewReplacer(":N", ":3", ":DURATION", ":2s", ":PERCENT", ":10")
	forms := strings.Split(FaultForms(), ", ")
	require.Len(t, forms, len(faultKinds))
	for i, k := range faultKinds {
		assert.Equal(t, k.Form(), forms[i])
		got, err := ParseFaults(fill.Replace(k.Form()))
		require.NoError(t, err, k.Form())
		require.Len(t, got, 1)
		assert.Equal(t, k, got[0].Kind)
		if k.Form() == string(k) {
			_, err = ParseFaults(string(k) + ":1")
		} else {
			_, err = ParseFaults(string(k))
		}
		assert.Error(t, err, "%s: a form without its argument, or one with an argument it does not take", k.Form())
	}
	_, err := ParseFaults("bogus")
	assert.EqualError(t, err, `fault "bogus": unknown kind, want one of never-ready, crash:N, hang:N, slow-metrics:DURATION, malformed-metrics, ignore-sigterm, slow-steps:PERCENT, late-steps:DURATION`)
}
