package leg

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/internal/usage"
	"sweep/recipes"
	"sweep/sweep/run"
)

// TestPrepare: a shipped leg by name, its categories replaced (positioned
// at --categories), the default output directory named for the leg and
// the suffix, real engines on the default port with the given bfcl, and
// the stop grace for bfcl capped at 30 s.
func TestPrepare(t *testing.T) {
	t.Chdir(t.TempDir())
	var stderr bytes.Buffer
	r := &Request{Leg: "minimaxm3-mi325x-smg", Suffix: "-aa", Categories: []string{"simple_python", "irrelevance"}, BFCL: "/opt/bfcl",
		Server: run.Options{StopGrace: time.Minute}, Stderr: &stderr,
		Generator: func() (*matrix.Generator, error) { return generator(t), nil }}
	p, err := Prepare(r)
	require.NoError(t, err)
	assert.Equal(t, []string{"simple_python", "irrelevance"}, p.Leg.Categories)
	assert.Equal(t, configs.Pos{File: "--categories", Line: 1, Col: 2}, p.Leg.CategoriesPos[1])
	assert.True(t, strings.HasPrefix(filepath.Base(p.Out), "minimaxm3-mi325x-smg-aa-"), p.Out)
	assert.True(t, filepath.IsAbs(p.Out))
	assert.Equal(t, "real engines, /opt/bfcl", p.Mode)
	assert.Equal(t, []string{"/opt/bfcl"}, p.Options.BFCL)
	assert.Equal(t, 30*time.Second, p.Options.StopGrace)
	assert.Equal(t, recipes.DefaultPort, p.Plan.Arms[0].Point.Port)
	assert.True(t, p.Options.Setup.WallClock, "a leg runs on the wall clock")
}

// TestPrepareUsageErrors: an unknown leg and a leg that does not plan are
// usage errors.
func TestPrepareUsageErrors(t *testing.T) {
	gen := func() (*matrix.Generator, error) { return generator(t), nil }
	_, err := Prepare(&Request{Leg: "no-such-leg", Generator: gen, Stderr: &bytes.Buffer{}})
	_, ok := errors.AsType[*usage.Error](err)
	assert.True(t, ok, "%v", err)
	_, err = Prepare(&Request{Leg: "minimaxm3-mi325x-smg", Categories: []string{"simple"}, Generator: gen, Stderr: &bytes.Buffer{}})
	_, ok = errors.AsType[*usage.Error](err)
	assert.True(t, ok, "%v", err)
	assert.ErrorContains(t, err, `--categories:1:1`)
}
