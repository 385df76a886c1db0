package leg

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/internal/proc"
	"sweep/sweep/abgate"
	"sweep/sweep/run"
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

// fakeModels is the "models" branch of a fake bfcl: like bfcl_eval, it
// lists the leg's key only when the registration file is first on
// PYTHONPATH.
const fakeModels = `models) echo gorilla-openfunctions-v2; if [ -f "${PYTHONPATH%%:*}/sitecustomize.py" ]; then echo "$SWEEP_BFCL_REGISTRY_NAME"; fi; exit 0;; `

// TestRunReplicateFailures: a failed generate is a run-failed problem,
// evaluate still runs (and its failure is one too); bfcl gets the
// checklist's argv and environment in the fresh root, after the registry
// entry is written and listed by bfcl models.
func TestRunReplicateFailures(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PYTHONPATH", "/opt/site")
	l := &configs.ABLeg{Model: "Org/M-FC", Replicates: 1, Sampling: configs.ABSampling{NumThreads: 4}}
	cats, err := abgate.ExpandCategories([]string{"multiple"})
	require.NoError(t, err)
	p := &Plan{Leg: l, Categories: cats}
	arm := &Arm{Label: "b", BaseURL: "http://127.0.0.1:1/v1"}
	arm.Point.Engine.Argv = []string{"vllm", "serve", "/models/m", "--served-model-name", "Org/M", "--port", "1"}
	// The fake bfcl records its argv and environment, then fails generate with 3, evaluate with 5.
	script := `echo "$@" >> ../argv; echo "$BFCL_PROJECT_ROOT $OPENAI_BASE_URL $OPENAI_API_KEY $PYTHONPATH $SWEEP_BFCL_REGISTRY_NAME $SWEEP_BFCL_API_MODEL" >> ../env; case "$1" in ` + fakeModels + `generate) exit 3;; *) exit 5;; esac`
	o := Options{Dir: dir, BFCL: []string{"sh", "-c", script, "bfcl"}, StopGrace: time.Second, Progress: func(string) {}}
	root := RootDir(dir, "b", 1)
	probs, err := runReplicate(t.Context(), p, arm, o, replicateState{rep: 1, fresh: root, attempt: 1}, Made{}, nil)
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
	assert.Equal(t, "models\ngenerate --model Org/M-FC --test-category multiple --temperature 0 --num-threads 4 --allow-overwrite\nevaluate --model Org/M-FC --test-category multiple\n", string(argv))
	env, err := os.ReadFile(filepath.Join(dir, "b", "env"))
	require.NoError(t, err)
	py := PythonDir(root)
	assert.Equal(t, strings.Repeat(root+" http://127.0.0.1:1/v1 EMPTY "+py+":/opt/site Org/M-FC Org/M\n", 3), string(env))
	site, err := os.ReadFile(filepath.Join(py, abgate.SitecustomizeFile))
	require.NoError(t, err)
	assert.Equal(t, abgate.Sitecustomize(), site, "the static registration file")

	// A reused root is refused, never written into.
	probs, err = runReplicate(t.Context(), p, arm, o, replicateState{rep: 1, fresh: filepath.Join(dir, "b"), attempt: 1}, Made{}, nil)
	require.NoError(t, err)
	require.Len(t, probs, 1)
	assert.Contains(t, probs[0].Detail, "fresh root")
}

// TestRunReplicateRegistration: a registry entry that cannot be written,
// or that bfcl models does not list, stops the replicate before generate
// with a run-failed problem saying so; never silence.
func TestRunReplicateRegistration(t *testing.T) {
	cats, err := abgate.ExpandCategories([]string{"multiple"})
	require.NoError(t, err)
	arm := &Arm{Label: "a", BaseURL: "http://127.0.0.1:1/v1"}
	for _, tc := range []struct {
		name, model, script string
		block               bool // a file where the python directory goes
		want                string
	}{
		{name: "ignored by bfcl", model: "Org/M-FC", script: `case "$1" in models) echo gorilla-openfunctions-v2;; *) echo ran >> ../ran;; esac`,
			want: "bfcl models does not list Org/M-FC although the registry entry was written"},
		{name: "not writable", model: "Org/M-FC", block: true, script: `case "$1" in ` + fakeModels + `*) echo ran >> ../ran;; esac`,
			want: "the bfcl registry entry was not written"},
		{name: "name with underscore", model: "Org/M_FC", script: `case "$1" in ` + fakeModels + `*) echo ran >> ../ran;; esac`,
			want: `the bfcl registry entry was not written: bfcl registry name "Org/M_FC" contains "_"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := &Plan{Leg: &configs.ABLeg{Model: tc.model, Replicates: 1}, Categories: cats}
			o := Options{Dir: dir, BFCL: []string{"sh", "-c", tc.script, "bfcl"}, StopGrace: time.Second, Progress: func(string) {}}
			if tc.block {
				require.NoError(t, os.MkdirAll(filepath.Join(dir, "a"), 0o755))
				require.NoError(t, os.WriteFile(PythonDir(RootDir(dir, "a", 1)), nil, 0o644))
			}
			root := RootDir(dir, "a", 1)
			probs, err := runReplicate(t.Context(), p, arm, o, replicateState{rep: 1, fresh: root, attempt: 1}, Made{}, nil)
			require.NoError(t, err)
			require.Len(t, probs, 1)
			assert.Equal(t, abgate.ReasonRunFailed, probs[0].Reason)
			assert.Equal(t, root, probs[0].Root)
			assert.Contains(t, probs[0].Detail, tc.want)
			assert.NoFileExists(t, filepath.Join(dir, "a", "ran"), "neither generate nor evaluate ran")
		})
	}
}

func TestVerifyModel(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "a", "bfcl-r1-models.log")
	list := func(out string) Options {
		return Options{Dir: dir, BFCL: []string{"sh", "-c", "printf '" + out + "'", "bfcl"}, StopGrace: time.Second}
	}
	env := map[string]string{"PYTHONPATH": "/x/py"}
	assert.Empty(t, verifyModel(t.Context(), "Org/M-FC", env, dir, log, list(`gorilla-openfunctions-v2\nOrg/M-FC   \n`)))
	assert.Contains(t, verifyModel(t.Context(), "Org/M-FC", env, dir, log, list(`Org/M-FC-v2\n`)), "bfcl models does not list Org/M-FC although the registry entry was written (/x/py first on PYTHONPATH)")
	// A message that names the model is not a listing.
	assert.Contains(t, verifyModel(t.Context(), "Org/M-FC", env, dir, log, list(`sweep sitecustomize: not registered: Org/M-FC\n`)), "does not list")
	missing := Options{Dir: dir, BFCL: []string{filepath.Join(dir, "no-bfcl")}, StopGrace: time.Second}
	assert.Contains(t, verifyModel(t.Context(), "Org/M-FC", env, dir, log, missing), "is bfcl-eval installed?")
}

// TestCalibrateRunsBounded: --runs 1000000000 allocated 16 GB of run
// roots before anything ran; the runs are bounded first.
func TestCalibrateRunsBounded(t *testing.T) {
	p := &Plan{Leg: &configs.ABLeg{Model: "Org/M-FC", Replicates: 1}}
	_, err := Calibrate(t.Context(), p, Options{Dir: t.TempDir()}, 1000)
	assert.EqualError(t, err, "calibrate: 1000 runs: at most 200 (twice the most replicates a leg may have)")
}

// TestLockHost: a second leg waits for the host lock and gives up at its
// timeout naming the lock; once released the lock is had at once, and a
// symlink is never followed.
func TestLockHost(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bfcl-host.lock")
	unlock, err := lockHost(t.Context(), path, time.Second)
	require.NoError(t, err)
	_, err = lockHost(t.Context(), path, 100*time.Millisecond)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "still held by another leg")
	unlock()
	unlock2, err := lockHost(t.Context(), path, 100*time.Millisecond)
	require.NoError(t, err)
	unlock2()

	link := filepath.Join(t.TempDir(), "link.lock")
	require.NoError(t, os.Symlink(path, link))
	_, err = lockHost(t.Context(), link, 100*time.Millisecond)
	assert.Error(t, err, "a symlinked lock file is refused")
}

// fillingDisk is a disk that fills while the output file named full is
// written: half of what is written reaches the file, then the write fails
// with ENOSPC, as *os.File's does.
func fillingDisk(full string) func(io.Writer) io.Writer {
	return func(w io.Writer) io.Writer {
		f := w.(*os.File)
		if !strings.HasPrefix(filepath.Base(f.Name()), "."+full+".") {
			return w
		}
		return writerFunc(func(p []byte) (int, error) {
			n, err := f.Write(p[:len(p)/2])
			if err != nil {
				return n, err
			}
			return n, &fs.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
		})
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestWriteOutputsDiskFull: a disk that filled while a leg wrote its
// report lost the report (nothing printed it) and said only "no space
// left on device". The output is held whole in memory for stdout, the
// error names the file not written and the full disk, and says which
// file was; a file written before stays whole (its earlier content, never
// a torn one) and no temporary file is left.
func TestWriteOutputsDiskFull(t *testing.T) {
	for _, tc := range []struct {
		name, full string // the file the disk fills on ("": none)
		written    []string
	}{
		{"none", "", []string{ReportTable, ReportJSON}},
		{"table", ReportTable, nil},
		{"json", ReportJSON, []string{ReportTable}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			earlier := []byte("{\"verdict\": \"PASS\"}\n")
			for _, f := range []string{ReportTable, ReportJSON} {
				require.NoError(t, os.WriteFile(filepath.Join(dir, f), earlier, 0o644))
			}
			o := &Options{Dir: dir, fileWriter: fillingDisk(tc.full)}
			out, err := o.writeOutputs(ReportTable, "## heading\n\n", func(w io.Writer) error {
				_, err := io.WriteString(w, "| table |\n")
				return err
			}, ReportJSON, func(w io.Writer) error {
				_, err := io.WriteString(w, "{\"verdict\": \"REGRESSION\"}\n")
				return err
			})
			require.NotNil(t, out, "the output is held for stdout: %v", err)
			assert.Equal(t, "## heading\n\n| table |\n", string(out.TableText))
			assert.Equal(t, "{\"verdict\": \"REGRESSION\"}\n", string(out.JSONText))
			assert.Equal(t, filepath.Join(dir, ReportTable), out.Table)
			assert.Equal(t, filepath.Join(dir, ReportJSON), out.JSON)
			for _, f := range []string{ReportTable, ReportJSON} {
				got, rerr := os.ReadFile(filepath.Join(dir, f))
				require.NoError(t, rerr)
				want := earlier
				if slices.Contains(tc.written, f) {
					want = out.TableText
					if f == ReportJSON {
						want = out.JSONText
					}
				}
				assert.Equal(t, string(want), string(got), "%s: written whole, or its earlier content kept", f)
			}
			entries, rerr := os.ReadDir(dir)
			require.NoError(t, rerr)
			assert.Len(t, entries, 2, "no temporary file is left")
			if tc.full == "" {
				require.NoError(t, err)
				return
			}
			nw, ok := errors.AsType[*NotWrittenError](err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, filepath.Join(dir, tc.full), nw.File)
			assert.ErrorIs(t, err, syscall.ENOSPC)
			df, ok := errors.AsType[*run.DiskFullError](err)
			require.True(t, ok, "the full disk is named: %v", err)
			assert.Equal(t, dir, df.Dir)
			path := filepath.Join(dir, tc.full)
			assert.True(t, strings.HasPrefix(err.Error(), tc.full+" not written: write "+path+": write "+filepath.Join(dir, "."+tc.full)), err.Error())
			assert.Contains(t, err.Error(), ": no space left on device: the disk holding "+dir+" is full (")
			if len(tc.written) > 0 {
				assert.True(t, strings.HasSuffix(err.Error(), "; "+strings.Join(tc.written, ", ")+" written"), err.Error())
			}
		})
	}
}
