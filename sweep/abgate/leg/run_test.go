package leg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/internal/proc"
	"sweep/sweep/abgate"
)

func TestRunProcessTimeout(t *testing.T) {
	dir := t.TempDir()
	st, err := runProcess(t.Context(), proc.Spec{Name: "sleep", Argv: []string{"sleep", "30"}, LogPath: filepath.Join(dir, "log")}, 200*time.Millisecond, time.Second)
	require.ErrorIs(t, err, errRunTimeout)
	assert.True(t, st.Stopped)
	st, err = runProcess(t.Context(), proc.Spec{Name: "true", Argv: []string{"true"}}, time.Minute, time.Second)
	require.NoError(t, err)
	assert.True(t, st.Success())
}

// TestRunReplicateFailures: a failed generate is a run-failed problem,
// evaluate still runs (and its failure is one too); bfcl gets the
// checklist's argv and environment in the fresh root.
func TestRunReplicateFailures(t *testing.T) {
	dir := t.TempDir()
	l := &configs.ABLeg{Model: "Org/M-FC", Replicates: 1, Sampling: configs.ABSampling{NumThreads: 4}}
	cats, err := abgate.ExpandCategories([]string{"multiple"})
	require.NoError(t, err)
	p := &Plan{Leg: l, Categories: cats}
	arm := &Arm{Label: "b", BaseURL: "http://127.0.0.1:1/v1"}
	// The fake bfcl records its argv and environment, then fails generate with 3, evaluate with 5.
	script := `echo "$@" >> ../argv; echo "$BFCL_PROJECT_ROOT $OPENAI_BASE_URL $OPENAI_API_KEY" >> ../env; case "$1" in generate) exit 3;; *) exit 5;; esac`
	o := Options{Dir: dir, BFCL: []string{"sh", "-c", script, "bfcl"}, StopGrace: time.Second, Progress: func(string) {}}
	root := RootDir(dir, "b", 1)
	probs, err := runReplicate(t.Context(), p, arm, o, 1, root)
	require.NoError(t, err)
	require.Len(t, probs, 2)
	for i, want := range []string{"bfcl generate: exit code 3", "bfcl evaluate: exit code 5"} {
		assert.Equal(t, abgate.ReasonRunFailed, probs[i].Reason)
		assert.Equal(t, "b", probs[i].Arm)
		assert.Equal(t, root, probs[i].Root)
		assert.Contains(t, probs[i].Detail, want)
	}
	argv, err := os.ReadFile(filepath.Join(dir, "b", "argv"))
	require.NoError(t, err)
	assert.Equal(t, "generate --model Org/M-FC --test-category multiple --temperature 0 --num-threads 4 --allow-overwrite\nevaluate --model Org/M-FC --test-category multiple\n", string(argv))
	env, err := os.ReadFile(filepath.Join(dir, "b", "env"))
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat(root+" http://127.0.0.1:1/v1 EMPTY\n", 2), string(env))

	// A reused root is refused, never written into.
	probs, err = runReplicate(t.Context(), p, arm, o, 1, filepath.Join(dir, "b"))
	require.NoError(t, err)
	require.Len(t, probs, 1)
	assert.Contains(t, probs[0].Detail, "fresh root")
}

func TestVerifyModel(t *testing.T) {
	dir := t.TempDir()
	arm := &Arm{Label: "a"}
	list := func(out string) Options {
		return Options{Dir: dir, BFCL: []string{"sh", "-c", "printf '" + out + "'", "bfcl"}, StopGrace: time.Second}
	}
	assert.Empty(t, verifyModel(t.Context(), "Org/M-FC", arm, list(`gorilla-openfunctions-v2\nOrg/M-FC\n`)))
	assert.Contains(t, verifyModel(t.Context(), "Org/M-FC", arm, list(`Org/M-FC-v2\n`)), "bfcl models does not list Org/M-FC: register it")
	missing := Options{Dir: dir, BFCL: []string{filepath.Join(dir, "no-bfcl")}, StopGrace: time.Second}
	assert.Contains(t, verifyModel(t.Context(), "Org/M-FC", arm, missing), "is bfcl-eval installed?")
}
