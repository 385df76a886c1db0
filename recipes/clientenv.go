package recipes

import (
	"fmt"
	"path"
	"strings"
)

// SetupStep is one command the point runs in the container before the
// engine starts, to make the client's environment: a venv, a package
// install, a download. A step whose Present paths all exist is skipped
// (nothing is downloaded twice); Creates must exist after it ran.
type SetupStep struct {
	Name string            `json:"name"`
	Argv []string          `json:"argv"`
	Env  map[string]string `json:"env,omitempty"`
	// Present are path patterns (path.Match syntax, one * per element at
	// most where needed) that, all found, mean the step's work is done.
	Present []string `json:"present,omitempty"`
	// Creates are the paths the step must leave behind.
	Creates []string `json:"creates,omitempty"`
	// Network says the step downloads (PyPI, the Hugging Face hub) when it
	// is not skipped.
	Network bool `json:"network,omitempty"`
}

// ClientEnv is InferenceX's client environment of an agentic point
// (benchmark_lib.sh at LauncherCommit: install_agentic_deps and
// resolve_trace_source): aiperf installed editable from the checkout's
// utils/aiperf into a per-job venv with uv, and the trace set downloaded
// with the venv's hf into the hub cache. A user may name an installed
// aiperf instead (Aiperf): then only the trace download runs, with the hf
// beside it.
type ClientEnv struct {
	// Checkout is the container directory of the InferenceX checkout
	// (utils/aiperf, utils/agentic-benchmark/requirements.txt).
	Checkout string `json:"checkout,omitempty"`
	// RuntimeDir is the per-job directory of the venv and uv's cache
	// (AIPERF_RUNTIME_DIR: ${TMPDIR:-/tmp}/inferencex-agentic-${SLURM_JOB_ID}).
	RuntimeDir string `json:"runtime_dir,omitempty"`
	// UV is the uv program in the container (default "uv").
	UV string `json:"uv,omitempty"`
	// Python is the venv's interpreter version (AIPERF_PYTHON_VERSION,
	// default 3.11).
	Python string `json:"python,omitempty"`
	// HubCache is the container's HF_HUB_CACHE the traces go into.
	HubCache string `json:"hub_cache"`
	// Loader is aiperf's --public-dataset loader of the point.
	Loader string `json:"loader"`
	// Aiperf, when set, is an installed aiperf: no venv is made.
	Aiperf string `json:"aiperf,omitempty"`
}

// traceDatasets are resolve_trace_source's Hugging Face datasets of the
// aiperf public-dataset loaders.
var traceDatasets = map[string]string{
	"semianalysis_cc_traces_weka_with_subagents":             "semianalysisai/cc-traces-weka-061526",
	"semianalysis_cc_traces_weka_with_subagents_256k":        "semianalysisai/cc-traces-weka-061526-256k",
	"semianalysis_cc_traces_weka_with_subagents_060226":      "semianalysisai/cc-traces-weka-with-subagents-060226",
	"semianalysis_cc_traces_weka_with_subagents_060226_256k": "semianalysisai/cc-traces-weka-with-subagents-060226-256k",
	"semianalysis_cc_traces_weka_with_subagents_060526":      "semianalysisai/cc-traces-weka-with-subagents-060526",
	"semianalysis_cc_traces_weka_with_subagents_060526_256k": "semianalysisai/cc-traces-weka-with-subagents-060526-256k",
	"semianalysis_cc_traces_weka_with_subagents_060826":      "semianalysisai/cc-traces-weka-with-subagents-060826",
	"semianalysis_cc_traces_weka_with_subagents_060826_256k": "semianalysisai/cc-traces-weka-with-subagents-060826-256k",
	"semianalysis_cc_traces_weka_061326":                     "semianalysisai/cc-traces-weka-061326",
	"semianalysis_cc_traces_weka_061326_256k":                "semianalysisai/cc-traces-weka-061326-256k",
	"semianalysis_cc_traces_weka_061526":                     "semianalysisai/cc-traces-weka-061526",
	"semianalysis_cc_traces_weka_061526_256k":                "semianalysisai/cc-traces-weka-061526-256k",
	Loader062126:     "semianalysisai/cc-traces-weka-062126",
	Loader062126256k: "semianalysisai/cc-traces-weka-062126-256k",
}

// TraceDataset is the Hugging Face dataset of an aiperf public-dataset
// loader (resolve_trace_source).
func TraceDataset(loader string) (string, error) {
	d, ok := traceDatasets[loader]
	if !ok {
		return "", fmt.Errorf("trace loader %q has no dataset (InferenceX's resolve_trace_source knows %d loaders)", loader, len(traceDatasets))
	}
	return d, nil
}

// HubDatasetDir is where the Hugging Face hub cache keeps a dataset
// ("org/name" under HUB/datasets--org--name).
func HubDatasetDir(hub, dataset string) string {
	return path.Join(hub, "datasets--"+strings.ReplaceAll(dataset, "/", "--"))
}

// Venv is the client environment's venv directory ("" with an installed
// aiperf).
func (c ClientEnv) Venv() string {
	if c.Aiperf != "" {
		return ""
	}
	return path.Join(c.RuntimeDir, "venv")
}

// AiperfProgram is the aiperf the point's client runs.
func (c ClientEnv) AiperfProgram() string {
	if c.Aiperf != "" {
		return c.Aiperf
	}
	return path.Join(c.Venv(), "bin", "aiperf")
}

// HF is the hf program of the trace download: the venv's, or the one
// beside an installed aiperf (a venv's bin directory holds both).
func (c ClientEnv) HF() string {
	return path.Join(path.Dir(c.AiperfProgram()), "hf")
}

// Steps are the client environment's commands in order: uv venv, uv pip
// install (skipped when the venv's aiperf and hf exist), hf download of
// the trace set (skipped when the hub cache holds a snapshot of it).
func (c ClientEnv) Steps() ([]SetupStep, error) {
	dataset, err := TraceDataset(c.Loader)
	if err != nil {
		return nil, err
	}
	if c.HubCache == "" {
		return nil, fmt.Errorf("client environment: no hub cache for the trace set %s", dataset)
	}
	var steps []SetupStep
	if c.Aiperf == "" {
		if c.Checkout == "" || c.RuntimeDir == "" {
			return nil, fmt.Errorf("client environment: InferenceX's aiperf needs the checkout (utils/aiperf) and a per-job runtime directory; name an installed aiperf otherwise")
		}
		uv := c.UV
		if uv == "" {
			uv = "uv"
		}
		py := c.Python
		if py == "" {
			py = "3.11"
		}
		venv := c.Venv()
		done := []string{path.Join(venv, "bin", "aiperf"), path.Join(venv, "bin", "hf")}
		env := map[string]string{"UV_CACHE_DIR": path.Join(c.RuntimeDir, "uv-cache")}
		steps = append(steps,
			SetupStep{Name: "aiperf-venv", Argv: []string{uv, "venv", "--python", py, venv}, Env: env, Present: done, Network: true},
			SetupStep{Name: "aiperf-install", Argv: []string{uv, "pip", "install", "--python", path.Join(venv, "bin", "python"),
				"-r", path.Join(c.Checkout, "utils", "agentic-benchmark", "requirements.txt"),
				"-e", path.Join(c.Checkout, "utils", "aiperf"),
				"datasets>=4.7.0", "huggingface_hub[cli]>=0.25.0", "urllib3", "requests"},
				Env: env, Present: done, Creates: done, Network: true})
	}
	steps = append(steps, SetupStep{Name: "trace-download", Argv: []string{c.HF(), "download", "--repo-type", "dataset", dataset},
		Env: map[string]string{"HF_HUB_CACHE": c.HubCache}, Present: []string{path.Join(HubDatasetDir(c.HubCache, dataset), "snapshots", "*", "*")}, Network: true})
	return steps, nil
}

// Trace loaders (aiperf --public-dataset): InferenceX picks the first two by
// model prefix; the H200 Qwen3.5 recipe pins the older 061526 corpus.
const (
	Loader062126            = "semianalysis_cc_traces_weka_062126"
	Loader062126256k        = "semianalysis_cc_traces_weka_062126_256k"
	LoaderWithSubagents256k = "semianalysis_cc_traces_weka_with_subagents_256k"
)
