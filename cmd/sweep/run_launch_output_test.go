package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stubSlurm puts salloc, srun and scancel stand-ins first on PATH: salloc
// grants job 500, srun's container step runs the script run (with $OUT the
// point's output directory), every other srun and scancel succeed.
func stubSlurm(t *testing.T, out, run string) {
	t.Helper()
	bin := t.TempDir()
	stubs := map[string]string{
		"salloc":  "echo 'salloc: Granted job allocation 500' >&2\n",
		"scancel": "exit 0\n",
		"srun":    "case \"$*\" in *--container-image=*) OUT='" + out + "'\n" + run + "\n;; esac\n",
	}
	for name, body := range stubs {
		require.NoError(t, os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/bash\n"+body), 0o755))
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("SLURM_JOB_ID", "")
}

// A launched point whose container step exits 0 without writing its run
// record and result fails, naming what is missing, instead of reporting
// success with an empty output directory.
func TestRunLaunchChecksTheContainerOutput(t *testing.T) {
	// The result's name is in the plan the launch wrote for the container.
	writeBoth := `touch "$OUT/run.json"; name=$(grep -o '"result_filename": *"[^"]*"' "$OUT/.sweep-launch/plan.json" | sed 's/.*: *"//; s/"$//'); echo '{}' > "$OUT/$name.json"`
	for _, tc := range []struct {
		name     string
		run      string
		wantCode int
		wantErr  string
	}{
		{name: "writes nothing", run: "exit 0", wantCode: 1, wantErr: "holds no run.json and no qwen3.5_"},
		{name: "writes only run.json", run: `touch "$OUT/run.json"`, wantCode: 1, wantErr: "holds no qwen3.5_"},
		{name: "writes run.json and the result", run: writeBoth, wantCode: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "p")
			stubSlurm(t, out, tc.run)
			code, _, stderr := runCLI(t, "run", "--launch", "--runner-name", "mi325x-amds_02", "--config-key", "qwen3.5-fp8-mi325x-sglang-agentic-mtp",
				"--tp", "8", "--ep", "8", "--conc", "32", "--out", out)
			assert.Equal(t, tc.wantCode, code, stderr)
			assert.Contains(t, stderr, "allocation 500 released")
			if tc.wantErr != "" {
				assert.Contains(t, stderr, tc.wantErr)
			}
		})
	}
}

// A mounted path holding ',' or ':' (a site cache, the plan's workspace,
// run --launch's --out) is a usage error naming the flag: it would add
// container mounts of its own.
func TestLaunchMountPathsRefused(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "a,b")
	plan := []string{"plan", "--config-keys", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--conc", "32", "--runner-name", "mi325x-amds_03"}
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "hub-cache", args: append(plan, "--site", "hub-cache=/x,/etc:/host-etc"), wantErr: "--site hub-cache=/x,/etc:/host-etc: a mounted path cannot hold"},
		{name: "aiperf-cache", args: append(plan, "--site", "aiperf-cache=/a:/b"), wantErr: "--site aiperf-cache=/a:/b: a mounted path cannot hold"},
		{name: "workspace", args: append(plan, "--workspace", "/w,/etc:/e"), wantErr: "--workspace=/w,/etc:/e: a mounted path cannot hold"},
		{name: "run --launch --out", args: []string{"run", "--launch", "--runner-name", "mi325x-amds_02", "--config-key", "qwen3.5-fp8-mi325x-sglang-agentic-mtp",
			"--tp", "8", "--ep", "8", "--conc", "32", "--out", bad}, wantErr: "--out=" + bad + ": a mounted path cannot hold"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			assert.Equal(t, 2, code, stderr)
			assert.Contains(t, stderr, tc.wantErr)
			assert.NotContains(t, stdout, "container-mounts")
		})
	}
}
