package cpuprofile

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStart(t *testing.T) {
	t.Setenv(Env, "")
	var errOut bytes.Buffer
	Start([]string{"run"}, &errOut)()
	assert.Empty(t, errOut.String(), "not asked for: nothing")

	dir := t.TempDir()
	t.Setenv(Env, dir)
	Start([]string{"sim-engine", "--"}, &errOut)()
	st, err := os.Stat(filepath.Join(dir, "cpu-sim-engine-"+strconv.Itoa(os.Getpid())+".pprof"))
	require.NoError(t, err)
	assert.Positive(t, st.Size(), "a profile was written")

	t.Setenv(Env, filepath.Join(dir, "missing"))
	Start(nil, &errOut)()
	assert.Contains(t, errOut.String(), "sweep: $SWEEP_CPU_PROFILE_DIR: open "+filepath.Join(dir, "missing", "cpu-sweep-"))
}
