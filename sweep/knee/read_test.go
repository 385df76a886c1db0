package knee

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// copyCase copies a conformance case's files into a new directory and
// returns it.
func copyCase(t *testing.T, id string) string {
	t.Helper()
	dir := t.TempDir()
	files, err := filepath.Glob(filepath.Join(conformanceDir, "cases", id, "*.json"))
	require.NoError(t, err)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644))
	}
	return dir
}

// Python's json.dump writes NaN, Infinity and -Infinity (InferenceX's own
// result files can hold them): such a file is still a result, read as
// Python's json.load reads it, not dropped as "not a result" (a NaN in
// qps.std once removed c32 and moved the knee).
func TestReadNonFiniteNumbers(t *testing.T) {
	const id = "v0004"
	want, err := Read(t.Context(), filepath.Join(conformanceDir, "cases", id))
	require.NoError(t, err)
	require.Len(t, want, 1)
	wantKnee := Analyze(want[0], Options{})

	dir := copyCase(t, id)
	c32, err := filepath.Glob(filepath.Join(dir, "*_conc32_*.json"))
	require.NoError(t, err)
	require.Len(t, c32, 1)
	data, err := os.ReadFile(c32[0])
	require.NoError(t, err)
	s := string(data)
	for _, edit := range [][2]string{
		{`"std":0.82353}`, `"std":NaN}`},
		{`"window_seconds":1,`, `"window_seconds":Infinity,`},
		{`"samples":979,`, `"samples":979,"extra":[-Infinity,"NaN",{"x":NaN}],`},
	} {
		require.Contains(t, s, edit[0])
		s = strings.Replace(s, edit[0], edit[1], 1)
	}
	require.NoError(t, os.WriteFile(c32[0], []byte(s), 0o644))

	got, err := Read(t.Context(), dir)
	require.NoError(t, err)
	require.Len(t, got, 1)
	var concs []int
	for _, smp := range got[0].Samples {
		concs = append(concs, smp.Conc)
	}
	var wantConcs []int
	for _, smp := range want[0].Samples {
		wantConcs = append(wantConcs, smp.Conc)
	}
	assert.Equal(t, wantConcs, concs, "the file with NaN and Infinity is still read")
	assert.Contains(t, concs, 32)
	r := Analyze(got[0], Options{})
	assert.Equal(t, wantKnee.Status, r.Status)
	assert.Equal(t, wantKnee.Knee, r.Knee)
}
