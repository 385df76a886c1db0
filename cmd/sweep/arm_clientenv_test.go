package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs/matrix"
	"sweep/recipes"
	"sweep/sweep/campaign"
	"sweep/sweep/run"
)

// clientArmJob writes the job file of one simulated arm (two points) of
// the launch key into dir/slurm with the client environment ce.
func clientArmJob(t *testing.T, dir string, ce *recipes.ClientEnv) string {
	t.Helper()
	o := &campaignOptions{Selection: campaign.Selection{TP: []int{2}, EP: []int{2}, ConcList: []int{1, 4}}, simFlags: simFlags{run.Mode{Simulate: true, TimeScale: 50}}}
	o.Inputs.ConfigFiles = nil
	g, err := o.Inputs.generator()
	require.NoError(t, err)
	rows, _, err := agenticRows(g, []string{"qwen3.5-fp8-mi325x-sglang-agentic-mtp"}, nil, matrix.EvalOptions{NoEvals: true})
	require.NoError(t, err)
	sched, err := o.schedule(o.Selection.Select(rows), g, dir)
	require.NoError(t, err)
	require.Len(t, sched.Arms, 1)
	aj := campaign.NewArmJob(campaign.Job{Arm: sched.Arms[0], Points: sched.Arms[0].Points}, nil,
		campaign.NewArmSettings(run.Setup{Simulate: true, TimeScale: 50, AiperfSchema: "aiperf@0.12.0"}, run.Options{ReadyTimeout: 60e9}))
	aj.Client = ce
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "slurm"), 0o755))
	file := filepath.Join(dir, "slurm", "arm01-t1.json")
	require.NoError(t, aj.Write(file))
	return file
}

// run-arm makes the arm's client environment once, before the engine
// starts, with the job's id in its runtime directory, and the venv's aiperf
// measures every point of the arm; a step that fails fails every point
// with the reason and starts no engine.
func TestRunArmMakesClientEnv(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	dir := t.TempDir()
	tools := t.TempDir()
	// A fake uv: venv makes the venv's bin; pip install puts an aiperf (it
	// records its run and fails) and an hf (it makes a trace snapshot).
	uv := filepath.Join(tools, "uv")
	require.NoError(t, os.WriteFile(uv, []byte(`#!/bin/sh
echo "uv $1" >> `+tools+`/uv-calls
case "$1" in
venv) mkdir -p "$4/bin" ;;
pip) b=$(dirname "$4")
  printf '#!/bin/sh\nexit 3\n' > "$b/aiperf"
  printf '#!/bin/sh\nd="$HF_HUB_CACHE/datasets--$(echo "$4" | sed s#/#--#)/snapshots/a"; mkdir -p "$d" && touch "$d/t"\n' > "$b/hf"
  chmod +x "$b/aiperf" "$b/hf" ;;
esac
`), 0o755))
	hub := t.TempDir()
	rt := filepath.Join(t.TempDir(), "inferencex-agentic-") + campaign.SlurmJobID
	ce := &recipes.ClientEnv{Checkout: "/opt/inferencex", RuntimeDir: rt, UV: uv, HubCache: hub, Loader: recipes.Loader062126256k}
	job := clientArmJob(t, dir, ce)
	events := filepath.Join(dir, "slurm", "arm01-t1.events.jsonl")

	code, _, stderr := runCLI(t, "run-arm", "--job", job, "--events", events)
	assert.Equal(t, exitError, code, "SLURM_JOB_ID is needed: %s", stderr)
	assert.Contains(t, stderr, "needs the Slurm job id, and SLURM_JOB_ID is not set")

	t.Setenv("SLURM_JOB_ID", "4242")
	code, stdout, stderr := runCLI(t, "run-arm", "--job", job, "--events", events)
	venv := strings.ReplaceAll(rt, campaign.SlurmJobID, "4242") + "/venv"
	assert.Contains(t, stderr, "client setup aiperf-venv: "+uv+" venv --python 3.11 "+venv, stdout)
	assert.Contains(t, stderr, "client setup trace-download: "+venv+"/bin/hf download --repo-type dataset semianalysisai/cc-traces-weka-062126-256k")
	calls, err := os.ReadFile(filepath.Join(tools, "uv-calls"))
	require.NoError(t, err)
	assert.Equal(t, "uv venv\nuv pip\n", string(calls), "made once for the arm's two points")
	ds, err := recipes.TraceDataset(ce.Loader)
	require.NoError(t, err)
	assert.DirExists(t, filepath.Join(recipes.HubDatasetDir(hub, ds), "snapshots", "a"))
	// The venv's aiperf is the client of both points (a real aiperf on the
	// simulated engine's virtual clock is refused, which names it).
	assert.Equal(t, 2, strings.Count(stderr, "aiperf "+venv+"/bin/aiperf on the virtual clock"), stderr)
	assert.Less(t, strings.Index(stderr, "client setup"), strings.Index(stderr, "server_start"))
	assert.Equal(t, exitOK, code)

	// A broken environment: every point fails with why; no engine starts.
	dir2 := t.TempDir()
	bad := *ce
	bad.UV, bad.RuntimeDir = filepath.Join(tools, "no-uv"), filepath.Join(t.TempDir(), "rt-"+campaign.SlurmJobID)
	job2 := clientArmJob(t, dir2, &bad)
	code, _, stderr = runCLI(t, "run-arm", "--job", job2, "--events", filepath.Join(dir2, "slurm", "arm01-t1.events.jsonl"))
	assert.Equal(t, exitError, code)
	assert.Equal(t, 2, strings.Count(stderr, "point_end"), stderr)
	assert.Contains(t, stderr, "failed client environment: client setup aiperf-venv: "+bad.UV+" is not installed in the image")
	b, err := os.ReadFile(filepath.Join(dir2, "slurm", "arm01-t1.events.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(b), `"status":"failed"`), string(b))
	entries, err := os.ReadDir(dir2)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no point directory: nothing started")
}

// discover --launch --inferencex: --dry-run prints each arm's client
// environment steps after its job step; a run checks the environment
// before anything is submitted or imported; the flag needs --launch and
// InferenceX's aiperf.
func TestDiscoverLaunchInferencex(t *testing.T) {
	out := filepath.Join(t.TempDir(), "d")
	ix := t.TempDir()
	base := []string{"discover", "--config-keys", launchKey, "--tp", "2", "--ep", "2", "--executor", "slurm", "--launch", "--inferencex", ix, "--out", out}
	code, stdout, stderr := runCLI(t, append(base, "--dry-run")...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, ","+ix+":/opt/inferencex,", "the checkout is mounted into the job's step")
	job := "/tmp/inferencex-agentic-${SLURM_JOB_ID}"
	i := strings.Index(stdout, "    env:    XDG_CACHE_HOME=")
	require.GreaterOrEqual(t, i, 0, stdout)
	assert.Contains(t, stdout[i:], "\n    setup:  aiperf-venv: UV_CACHE_DIR="+job+"/uv-cache /opt/sweep-tools/uv venv --python 3.11 "+job+"/venv (skipped when "+job+"/venv/bin/aiperf and "+job+"/venv/bin/hf exist)\n"+
		"    setup:  aiperf-install: UV_CACHE_DIR="+job+"/uv-cache /opt/sweep-tools/uv pip install --python "+job+"/venv/bin/python -r /opt/inferencex/utils/agentic-benchmark/requirements.txt -e /opt/inferencex/utils/aiperf datasets>=4.7.0 huggingface_hub[cli]>=0.25.0 urllib3 requests (skipped when "+job+"/venv/bin/aiperf and "+job+"/venv/bin/hf exist)\n"+
		"    setup:  trace-download: HF_HUB_CACHE=/mnt/hf_hub_cache/ "+job+"/venv/bin/hf download --repo-type dataset semianalysisai/cc-traces-weka-062126-256k (skipped when /mnt/hf_hub_cache/datasets--semianalysisai--cc-traces-weka-062126-256k/snapshots/*/* exist)\n"+
		"    client: "+job+"/venv/bin/aiperf for every point of the arm\n")

	// An empty checkout: stopped before any job or import.
	code, _, stderr = runCLI(t, append([]string{"discover", "--gpus", "0", "1"}, base[1:]...)...)
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, "client environment (before allocating)")
	assert.Contains(t, stderr, "InferenceX checkout "+ix+" has no utils/aiperf/pyproject.toml")
	assert.NoDirExists(t, filepath.Join(out, "slurm"))
	assert.NotContains(t, stderr, "submitted")

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"discover", "--config-keys", launchKey, "--inferencex", ix, "--dry-run", "--out", out}, "--site, --sweep-binary and --inferencex need --launch"},
		{append(base, "--builtin-client"), "--inferencex installs InferenceX's aiperf: drop --aiperf and --builtin-client"},
		{append(base, "--simulate"), "--inferencex with --simulate: a real aiperf measures wall-clock time"},
	} {
		code, _, stderr = runCLI(t, c.args...)
		assert.Equal(t, exitUsage, code, "%v", c.args)
		assert.Contains(t, stderr, c.want)
	}
}
