package launch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/recipes"
)

// fakeTool writes an executable shell script into dir.
func fakeTool(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755))
	return p
}

// countingSteps is the real runner, counting the programs it ran.
type countingSteps struct {
	ExecSteps
	ran []string
}

func (c *countingSteps) Run(ctx context.Context, argv []string, env map[string]string) error {
	c.ran = append(c.ran, filepath.Base(argv[0])+" "+argv[1])
	return c.ExecSteps.Run(ctx, argv, env)
}

// RunSetup with a fake uv (it makes the venv's aiperf and hf) and the hf it
// installs (it makes a snapshot in HF_HUB_CACHE): the first run runs every
// step, the second skips them all; the steps get their environment.
func TestRunSetupMakesThenSkips(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	hfBody := `echo "hf $* cache=$HF_HUB_CACHE" >> ` + log + "\n" +
		`d="$HF_HUB_CACHE/datasets--$(echo "$4" | sed 's#/#--#')/snapshots/abc"; mkdir -p "$d" && echo x > "$d/traces.jsonl"` + "\n"
	uv := fakeTool(t, dir, "uv", `echo "uv $1 $2 cache=$UV_CACHE_DIR" >> `+log+`
case "$1" in
venv) mkdir -p "$4/bin" ;;
pip) v=$(dirname "$(dirname "$4")"); printf '#!/bin/sh\n' > "$v/bin/aiperf"; printf '#!/bin/sh\n%s' '`+strings.ReplaceAll(hfBody, "'", `'\''`)+`' > "$v/bin/hf"; chmod +x "$v/bin/aiperf" "$v/bin/hf" ;;
esac
`)
	ce := recipes.ClientEnv{Checkout: filepath.Join(dir, "ix"), RuntimeDir: filepath.Join(dir, "job-5"), UV: uv, HubCache: filepath.Join(dir, "hub"), Loader: recipes.Loader062126256k}
	steps, err := ce.Steps()
	require.NoError(t, err)
	r := &countingSteps{}
	var lines []string
	require.NoError(t, RunSetup(t.Context(), steps, r, func(l string) { lines = append(lines, l) }))
	assert.Equal(t, []string{"uv venv", "uv pip", "hf download"}, r.ran)
	calls, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Contains(t, string(calls), "uv venv --python cache="+filepath.Join(dir, "job-5", "uv-cache"))
	assert.Contains(t, string(calls), "hf download --repo-type dataset semianalysisai/cc-traces-weka-062126-256k cache="+filepath.Join(dir, "hub"))
	assert.FileExists(t, ce.AiperfProgram())

	r.ran, lines = nil, nil
	require.NoError(t, RunSetup(t.Context(), steps, r, func(l string) { lines = append(lines, l) }))
	assert.Empty(t, r.ran, "nothing runs twice")
	assert.Equal(t, []string{"client setup aiperf-venv: already there, skipped", "client setup aiperf-install: already there, skipped",
		"client setup trace-download: already there, skipped"}, lines)
}

// A step's program that is missing, or a step that leaves its environment
// incomplete, is an error naming the step.
func TestRunSetupErrors(t *testing.T) {
	dir := t.TempDir()
	ce := recipes.ClientEnv{Checkout: "/ix", RuntimeDir: filepath.Join(dir, "rt"), UV: filepath.Join(dir, "no-uv"), HubCache: dir, Loader: recipes.Loader062126}
	steps, err := ce.Steps()
	require.NoError(t, err)
	err = RunSetup(t.Context(), steps, ExecSteps{}, nil)
	assert.ErrorContains(t, err, "client setup aiperf-venv: "+filepath.Join(dir, "no-uv")+" is not installed in the image")

	ce.UV = fakeTool(t, dir, "uv", "exit 0\n") // makes nothing
	steps, err = ce.Steps()
	require.NoError(t, err)
	err = RunSetup(t.Context(), steps, ExecSteps{}, nil)
	assert.ErrorContains(t, err, "client setup aiperf-install ran but left no "+filepath.Join(dir, "rt", "venv", "bin", "aiperf"))

	ce.UV = fakeTool(t, dir, "uv", "echo no index >&2; exit 2\n")
	steps, err = ce.Steps()
	require.NoError(t, err)
	err = RunSetup(t.Context(), steps, ExecSteps{}, nil)
	assert.ErrorContains(t, err, "client setup aiperf-venv ("+ce.UV+" venv --python): exit status 2")
}

// fakeNet answers for the hosts it lists.
type fakeNet struct {
	up      map[string]bool
	reached []string
}

func (f *fakeNet) Reach(_ context.Context, hostport string) error {
	f.reached = append(f.reached, hostport)
	if f.up[hostport] {
		return nil
	}
	return errors.New("connect: network is unreachable")
}

// The preflight names every missing part before anything is allocated: the
// checkout's files, uv, PyPI and the hub; traces already in the host's hub
// cache need no hub, an installed aiperf no PyPI.
func TestClientPreflight(t *testing.T) {
	checkout := t.TempDir()
	hub := t.TempDir()
	noUV := func(string) (string, error) { return "", errors.New(`exec: "uv": executable file not found in $PATH`) }
	haveUV := func(string) (string, error) { return "/usr/local/bin/uv", nil }
	ce := recipes.ClientEnv{Checkout: CheckoutDir, RuntimeDir: RuntimeDir(JobID), HubCache: DefaultHubCache, Loader: recipes.Loader062126256k}

	net := &fakeNet{}
	err := ClientPreflight{Setup: ClientSetup{Checkout: checkout}, Env: ce, HostHubCache: hub, LookPath: noUV, Net: net}.Check(t.Context())
	require.Error(t, err)
	for _, want := range []string{
		"has no utils/aiperf/pyproject.toml", "has no utils/agentic-benchmark/requirements.txt",
		"uv is not installed here", "no network to PyPI (pypi.org:443: connect: network is unreachable)",
		"no network to the Hugging Face hub (huggingface.co:443: connect: network is unreachable) and " + hub + " does not hold the trace set semianalysisai/cc-traces-weka-062126-256k",
	} {
		assert.ErrorContains(t, err, want)
	}
	assert.Contains(t, err.Error(), "before allocating")

	for _, f := range []string{"utils/aiperf/pyproject.toml", "utils/agentic-benchmark/requirements.txt"} {
		require.NoError(t, os.MkdirAll(filepath.Join(checkout, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(checkout, f), nil, 0o644))
	}
	snap := filepath.Join(recipes.HubDatasetDir(hub, "semianalysisai/cc-traces-weka-062126-256k"), "snapshots", "r1")
	require.NoError(t, os.MkdirAll(snap, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(snap, "a.jsonl"), nil, 0o644))
	net = &fakeNet{up: map[string]bool{PyPIHost: true}}
	require.NoError(t, ClientPreflight{Setup: ClientSetup{Checkout: checkout}, Env: ce, HostHubCache: hub, LookPath: haveUV, Net: net}.Check(t.Context()))
	assert.Equal(t, []string{PyPIHost}, net.reached, "traces present: the hub is not asked")

	// An installed aiperf and the traces present: no network at all.
	net = &fakeNet{}
	inst := recipes.ClientEnv{Aiperf: "/venv/bin/aiperf", HubCache: DefaultHubCache, Loader: recipes.Loader062126256k}
	require.NoError(t, ClientPreflight{Setup: ClientSetup{Aiperf: inst.Aiperf}, Env: inst, HostHubCache: hub, LookPath: noUV, Net: net}.Check(t.Context()))
	assert.Empty(t, net.reached)
}

// ClientSetup.Env: the loader comes from the point's client, the checkout
// and the host's uv are mounted, the venv is per job.
func TestClientSetupEnv(t *testing.T) {
	bin := t.TempDir()
	uv := fakeTool(t, bin, "uv", "exit 0\n")
	t.Setenv("PATH", bin)
	prof, err := recipes.ProfileFor("mi325x-amds_00")
	require.NoError(t, err)
	row := agenticRow("img:1", "Qwen/Qwen3.5-397B-A17B-FP8", "qwen3.5", "fp8", "sglang", 2)
	client := &recipes.Command{Argv: []string{"aiperf", "profile", "--public-dataset", recipes.Loader062126}}
	ce, mounts, err := ClientSetup{Checkout: "/src/ix"}.Env(prof, row, client, "4242")
	require.NoError(t, err)
	assert.Equal(t, recipes.ClientEnv{Checkout: CheckoutDir, RuntimeDir: "/tmp/inferencex-agentic-4242", UV: ToolsDir + "/uv", HubCache: DefaultHubCache, Loader: recipes.Loader062126}, ce)
	assert.Equal(t, []string{"/src/ix:" + CheckoutDir, uv + ":" + ToolsDir + "/uv:ro"}, mounts)
	_, host := HubCache(prof, row)
	assert.Equal(t, "/raid/hf-hub-cache/", host)

	_, _, err = ClientSetup{Checkout: "/src/ix", Aiperf: "aiperf"}.Env(prof, row, client, "1")
	assert.ErrorContains(t, err, "one of them")
	_, _, err = ClientSetup{Aiperf: "aiperf"}.Env(prof, row, &recipes.Command{Argv: []string{"aiperf"}}, "1")
	assert.ErrorContains(t, err, "no --public-dataset")
}

// makerSteps is a fake StepRunner: uv venv makes the venv's bin, uv pip
// install its aiperf and hf, hf download a snapshot of the trace set.
type makerSteps struct {
	t   *testing.T
	ran []string
}

func (m *makerSteps) Run(_ context.Context, argv []string, env map[string]string) error {
	m.ran = append(m.ran, filepath.Base(argv[0])+" "+argv[1])
	switch {
	case argv[1] == "venv":
		return os.MkdirAll(filepath.Join(argv[len(argv)-1], "bin"), 0o755)
	case argv[1] == "pip":
		bin := filepath.Dir(argv[4]) // --python VENV/bin/python
		fakeTool(m.t, bin, "aiperf", "")
		fakeTool(m.t, bin, "hf", "")
		return nil
	case argv[1] == "download":
		d := filepath.Join(recipes.HubDatasetDir(env["HF_HUB_CACHE"], argv[4]), "snapshots", "abc")
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(d, "traces.jsonl"), []byte("x\n"), 0o644)
	}
	return errors.New("unexpected step " + strings.Join(argv, " "))
}

// MakeClient makes an arm's client environment once per job and names the
// venv's aiperf for every point; a job that finds it there runs nothing,
// and a broken environment is an error before any engine starts.
func TestMakeClient(t *testing.T) {
	dir := t.TempDir()
	ce := recipes.ClientEnv{Checkout: "/opt/inferencex", RuntimeDir: filepath.Join(dir, "inferencex-agentic-77"), UV: fakeTool(t, dir, "uv", ""),
		HubCache: filepath.Join(dir, "hub"), Loader: recipes.Loader062126}
	r := &makerSteps{t: t}
	var lines []string
	aiperf, err := MakeClient(t.Context(), ce, r, func(l string) { lines = append(lines, l) })
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "inferencex-agentic-77", "venv", "bin", "aiperf"), aiperf)
	assert.Equal(t, []string{"uv venv", "uv pip", "hf download"}, r.ran)
	require.Len(t, lines, 3)
	assert.Equal(t, "client setup trace-download: "+filepath.Join(dir, "inferencex-agentic-77", "venv", "bin", "hf")+" download --repo-type dataset semianalysisai/cc-traces-weka-062126", lines[2])

	r.ran = nil
	aiperf2, err := MakeClient(t.Context(), ce, r, nil)
	require.NoError(t, err)
	assert.Equal(t, aiperf, aiperf2)
	assert.Empty(t, r.ran, "a second arm of the job downloads nothing")

	ce.Loader = "weka_999"
	_, err = MakeClient(t.Context(), ce, r, nil)
	assert.ErrorContains(t, err, `trace loader "weka_999" has no dataset`)
	ce.Loader, ce.RuntimeDir = recipes.Loader062126, filepath.Join(dir, "job-78")
	ce.UV = filepath.Join(dir, "no-uv")
	_, err = MakeClient(t.Context(), ce, r, nil)
	assert.ErrorContains(t, err, "client setup aiperf-venv: "+ce.UV+" is not installed in the image")
}

// TestClientSetupEnvReadsAnAttachedLoader: the client's trace loader
// given as --public-dataset=LOADER is its loader. Before, only the token
// after --public-dataset was read: "no --public-dataset trace loader".
func TestClientSetupEnvReadsAnAttachedLoader(t *testing.T) {
	prof, err := recipes.ProfileFor("mi325x-amds_00")
	require.NoError(t, err)
	row := agenticRow("img:1", "Qwen/Qwen3.5-397B-A17B-FP8", "qwen3.5", "fp8", "sglang", 2)
	client := &recipes.Command{Argv: []string{"aiperf", "profile", "--public-dataset=" + recipes.Loader062126}}
	ce, _, err := ClientSetup{Aiperf: "aiperf"}.Env(prof, row, client, "1")
	require.NoError(t, err)
	assert.Equal(t, recipes.Loader062126, ce.Loader)
}
