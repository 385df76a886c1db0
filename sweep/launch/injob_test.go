package launch

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/recipes"
)

// TestInJobImport: an arm job's image import, per Slurm runner, is
// testdata/injob-import.golden (-update rewrites it): an srun step of the
// job (no --jobid, the launcher's host variables kept as an env prefix)
// for the launchers that import with srun --jobid, bash on this host for
// B300's. MI300X's, which has no stage step before it in the job, makes
// the node directories that step makes (XDG_RUNTIME_DIR, enroot's TMPDIR),
// given as the script's arguments.
func TestInJobImport(t *testing.T) {
	row := agenticRow("lmsysorg/sglang:v0.5.16-rocm720-mi30x", "Qwen/Qwen3.5-397B-A17B-FP8", "qwen3.5", "fp8", "sglang", 2)
	var b strings.Builder
	for _, runner := range []string{"mi325x-amds_00", "mi300x-amds_00", "mi355x-amds_0", "b300-nv_0", "b200-dgxc_0", "h200-dgxc-slurm_0", "h100-dgxc-slurm_0"} {
		prof, err := recipes.ProfileFor(runner)
		require.NoError(t, err)
		js, err := InJob(prof, row, Options{RunnerName: runner}, "/shared/d")
		require.NoError(t, err)
		require.Len(t, js.Import.Commands, 1)
		c := js.Import.Commands[0]
		where := "in the job"
		if js.ImportOnHost {
			where = "on this host"
		}
		fmt.Fprintf(&b, "== %s: %s\n", runner, where)
		for _, a := range c.Argv {
			if strings.Contains(a, "\n") {
				a = "<<script" + strings.TrimRight(a, "\n ") + "\n    script"
			}
			fmt.Fprintf(&b, "  %s\n", a)
		}
		if js.ImportOnHost {
			// On this host the import runs with the launcher's host
			// variables (in a job they are its env prefix).
			for _, k := range slices.Sorted(maps.Keys(c.Env)) {
				fmt.Fprintf(&b, "  env %s=%s\n", k, c.Env[k])
			}
		}
	}
	golden := filepath.Join("testdata", "injob-import.golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), b.String())
}

// TestInJobImportOnAFreshNode runs MI300X's in-job import (its srun the
// step's own command, as on the node) on a node that has neither the
// launcher's XDG_RUNTIME_DIR nor its enroot TMPDIR: the import makes both
// (mode 700), as launch_mi300x-amds.sh's stage step does before its
// import, and enroot runs with them. Without them enroot's mktemp in
// TMPDIR failed and so did the import.
func TestInJobImportOnAFreshNode(t *testing.T) {
	node := t.TempDir()
	squash := filepath.Join(node, "raid", "squash")
	prof, err := recipes.SiteProfile("mi300x-amds_00", []string{"squash-dir=" + squash})
	require.NoError(t, err)
	row := agenticRow("lmsysorg/sglang:v0.5.16-rocm720-mi30x", "Qwen/Qwen3.5-397B-A17B-FP8", "qwen3.5", "fp8", "sglang", 2)
	js, err := InJob(prof, row, Options{RunnerName: "mi300x-amds_00"}, "/shared/d")
	require.NoError(t, err)
	argv := js.Import.Bind(map[string]string{"UID": "4242"}).Commands[0].Argv
	// The launcher's XDG_RUNTIME_DIR (/tmp/enroot-runtime-UID) on this
	// test's node.
	runtime := filepath.Join(node, "run", "enroot-runtime-4242")
	for i, a := range argv {
		argv[i] = strings.ReplaceAll(a, "/tmp/enroot-runtime-4242", runtime)
	}
	tmp := filepath.Join(squash, "tmp-4242")

	bin := t.TempDir()
	tools := map[string]string{
		// srun runs the step's command on the node.
		"srun": "#!/bin/sh\nwhile [ \"${1#--}\" != \"$1\" ]; do shift; done\nexec \"$@\"\n",
		// No valid squash file yet.
		"unsquashfs": "#!/bin/sh\nexit 1\n",
		// enroot import: its temporary directory in TMPDIR, its runtime
		// state under XDG_RUNTIME_DIR, then the squash file (-o FILE).
		"enroot": "#!/bin/sh\nset -e\nd=$(mktemp -d -p \"$TMPDIR\")\nmkdir -p \"$XDG_RUNTIME_DIR/enroot\"\n" +
			"echo \"TMPDIR=$TMPDIR XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR\" >\"$3.env\"\nrmdir \"$d\"\ntouch \"$3\"\n",
	}
	for name, script := range tools {
		require.NoError(t, os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755))
	}
	cmd := exec.CommandContext(t.Context(), argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%q\n%s", argv, out)

	squashFile := filepath.Join(squash, SquashName(row.Image))
	assert.FileExists(t, squashFile)
	env, err := os.ReadFile(squashFile + ".env")
	require.NoError(t, err)
	assert.Equal(t, "TMPDIR="+tmp+" XDG_RUNTIME_DIR="+runtime+"\n", string(env))
	for _, d := range []string{runtime, tmp} {
		fi, err := os.Stat(d)
		require.NoError(t, err)
		assert.True(t, fi.IsDir(), d)
		assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), d)
	}
}
