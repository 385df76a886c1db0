package schema

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteFlag(t *testing.T) {
	s, err := Load("aiperf", "0.12.0")
	require.NoError(t, err)
	f, ok := s.Lookup("--concurrency")
	require.True(t, ok)
	assert.Equal(t, "int or comma sweep", f.TypeText())
	var b bytes.Buffer
	s.WriteFlag(&b, f)
	assert.Contains(t, b.String(), "--concurrency  (aiperf@0.12.0)\n  type:      int or comma sweep\n")
	assert.Contains(t, b.String(), "rule prefill-le-concurrency (le)")
	m, ok := s.Lookup("-m")
	require.True(t, ok)
	assert.Equal(t, "list[string]", m.TypeText())

	b.Reset()
	require.NoError(t, s.WriteFlagTable(&b))
	assert.Regexp(t, `(?m)^FLAG\s+TYPE\s+DEFAULT\s+ALSO$`, b.String())
	assert.Regexp(t, `(?m)^--model-names\s+list\[string\]\s+\[\]\s+--model -m$`, b.String())
}
