package run

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/recipes"
)

// TestSimulatedRunKeepsTheSidecarFiles: a Mooncake row's store is sized
// in a config file its sidecar carries (global_segment_size), which the
// engine reads through MOONCAKE_CONFIG_PATH. A simulated run started no
// sidecar and so wrote no file: the simulated engine ran with no tier and
// minimaxm3-fp8-h200's Mooncake points failed at 11 % errors. The spec
// now carries the files in both modes, only inside the point's result
// directory.
func TestSimulatedRunKeepsTheSidecarFiles(t *testing.T) {
	dir := t.TempDir()
	cfg := recipes.File{Path: filepath.Join(dir, "mooncake_config.json"), Content: `{"global_segment_size": "87GB"}`}
	p := &recipes.Point{
		ResultFilename: "p",
		ResultDir:      dir,
		Engine:         recipes.Command{Argv: []string{"vllm", "serve", "m"}},
		Client:         &recipes.Command{Argv: []string{"aiperf", "profile", "--model", "m", "--output-artifact-dir", dir + "/aiperf_artifacts"}},
		Sidecars: []recipes.Sidecar{{Name: "mooncake-master", Command: recipes.Command{Argv: []string{"mooncake_master"}},
			Files: []recipes.File{cfg}}},
	}
	setup := Setup{Simulate: true, Executable: "/bin/sweep", AiperfSchema: "aiperf@" + recipes.ForkAiperfVersion}
	spec, err := FromPlan(p, setup)
	require.NoError(t, err)
	assert.Empty(t, spec.Sidecars, "no sidecar process in a simulated run")
	assert.Equal(t, []recipes.File{cfg}, spec.Files)

	p.Sidecars[0].Files[0].Path = filepath.Join(filepath.Dir(dir), "elsewhere.json")
	_, err = FromPlan(p, setup)
	assert.ErrorContains(t, err, "outside the run's directory")

	// The runner writes them before the sidecars and the engine start.
	spec2, opts := testSpec(t, "", "")
	spec2.Files = []recipes.File{{Path: filepath.Join(opts.OutDir, "store", "mooncake_config.json"), Content: cfg.Content}}
	rec, err := Run(t.Context(), spec2, opts)
	require.NoError(t, err, "stages: %+v", rec.Stages)
	got, err := os.ReadFile(spec2.Files[0].Path)
	require.NoError(t, err)
	assert.Equal(t, cfg.Content, string(got))
}
