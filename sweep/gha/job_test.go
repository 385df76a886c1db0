package gha

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseJob(t *testing.T) {
	_, _, err := ParseJob("j.json", []byte(`[1]`))
	assert.EqualError(t, err, `j.json:1:1: a JSON array where an object belongs: want one job of "sweep ci matrix" (an element of its jobs.<family> lists)`)
	_, _, err = ParseJob("j.json", []byte(`{"config-key": "k", "points": []}`))
	assert.EqualError(t, err, "a job needs config-key, config and points")
	_, _, err = ParseJob("j.json", []byte(`{"config-key": "k", "config": {"tp": "x"}, "points": [{"conc": 1}]}`))
	assert.ErrorContains(t, err, "config: ")
}

func TestAppendOutput(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out")
	require.NoError(t, AppendOutput(p, "a", "1"))
	require.NoError(t, AppendOutput(p, "b", "2"))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "a=1\nb=2\n", string(b))
	assert.ErrorContains(t, AppendOutput(p, "a", "x\ny"), "must be one line")
}

func TestReadJob(t *testing.T) {
	dir := t.TempDir()
	_, _, err := ReadJob(filepath.Join(dir, "missing.json"))
	assert.ErrorContains(t, err, "--job: ")
	p := filepath.Join(dir, "job.json")
	require.NoError(t, os.WriteFile(p, []byte(`{"config-key": "k", "points": []}`), 0o644))
	_, _, err = ReadJob(p)
	assert.EqualError(t, err, "--job "+p+": a job needs config-key, config and points")
	require.NoError(t, os.WriteFile(p, []byte("{\"config-key\": \"k\",\n  \"points\": [{\"conc\": 1"), 0o644))
	_, _, err = ReadJob(p)
	assert.EqualError(t, err, "--job: "+p+`:2:24: the JSON ends early: want one job of "sweep ci matrix" (an element of its jobs.<family> lists)`, "a truncated job names its end")
}
