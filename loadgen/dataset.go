package loadgen

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The built-in trace set, replayed when no trace source is available:
// builtinTraceCount traces of AgenticTraces (InferenceX's agentic shape,
// about 68k input tokens per request) seeded with builtinTraceSeed.
const (
	builtinTraceCount = 128
	builtinTraceSeed  = 20261203
)

// The small synthetic set checked in as testdata/traces/agentic-small.jsonl
// (SyntheticTraces, about 7k input tokens per request), for tests.
const (
	smallTraceCount = 24
	smallTraceSeed  = 20261202
)

// dataset records where the traces came from, for the summary's
// metadata.dataset.
type dataset struct {
	SourceType string // "file", "public_dataset" or "builtin"
	Loader     string
	HFName     string
	Path       string
	Traces     []Trace
}

// hfRepoFor maps an aiperf --public-dataset WEKA loader name to its
// Hugging Face dataset repo (docs/tutorials/weka-trace.md: the rolling
// with_subagents alias tracks 062126).
func hfRepoFor(loader string) (string, bool) {
	l := strings.ToLower(strings.ReplaceAll(loader, "-", "_"))
	if l == "semianalysis_cc_traces_weka" || l == "semianalysis_cc_traces_weka_no_subagents" {
		return "semianalysisai/cc-traces-weka-no-subagents-051826", true
	}
	rest, ok := strings.CutPrefix(l, "semianalysis_cc_traces_weka_")
	if !ok {
		return "", false
	}
	rest = strings.TrimPrefix(rest, "with_subagents")
	rest = strings.TrimPrefix(rest, "_")
	k256 := strings.HasSuffix(rest, "256k")
	rest = strings.TrimSuffix(strings.TrimSuffix(rest, "256k"), "_")
	if rest == "" {
		rest = "062126"
	}
	name := "semianalysisai/cc-traces-weka-" + rest
	if k256 {
		name += "-256k"
	}
	return name, true
}

// hfCacheDirs lists the Hugging Face hub caches to search, in the
// huggingface_hub order; getenv reads HF_HUB_CACHE, HF_HOME and HOME.
func hfCacheDirs(getenv func(string) string) []string {
	var dirs []string
	if d := getenv("HF_HUB_CACHE"); d != "" {
		dirs = append(dirs, d)
	}
	if d := getenv("HF_HOME"); d != "" {
		dirs = append(dirs, filepath.Join(d, "hub"))
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home != "" {
		dirs = append(dirs, filepath.Join(home, ".cache", "huggingface", "hub"))
	}
	return dirs
}

// findHFSnapshot returns the newest snapshot directory of a cached
// dataset repo in dirs, or "".
func findHFSnapshot(repo string, dirs []string) string {
	dirName := "datasets--" + strings.ReplaceAll(repo, "/", "--")
	for _, cache := range dirs {
		snaps, err := filepath.Glob(filepath.Join(cache, dirName, "snapshots", "*"))
		if err != nil || len(snaps) == 0 {
			continue
		}
		slices.Sort(snaps)
		return snaps[len(snaps)-1]
	}
	return ""
}

// TraceSetError is a trace set the client's options name that none of
// the local Hugging Face hub caches holds.
type TraceSetError struct {
	Repo string
	// Dirs are the hub caches looked in, in order.
	Dirs []string
}

func (e *TraceSetError) Error() string {
	return fmt.Sprintf("trace set %s is not in the local Hugging Face cache (looked in %s): set HF_HUB_CACHE to the hub cache that holds it, or download it there (hf download --repo-type dataset %s); the built-in load generator never downloads",
		e.Repo, strings.Join(e.Dirs, ", "), e.Repo)
}

// TraceSet finds the trace set o names (--public-dataset, --hf-weka-dataset)
// in the local Hugging Face hub caches, getenv giving HF_HUB_CACHE, HF_HOME
// and HOME (nil: os.Getenv): its repo and newest snapshot directory. The
// repo is "" when o names none or --input-file gives the traces; a named
// set that is not there is a *TraceSetError with its repo.
func TraceSet(o *Options, getenv func(string) string) (repo, snapshot string, err error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if o.TraceFile != "" {
		return "", "", nil
	}
	repo = o.HFDataset
	if repo == "" && o.PublicDataset != "" {
		r, ok := hfRepoFor(o.PublicDataset)
		if !ok {
			return "", "", fmt.Errorf("--public-dataset %s: the load generator replays WEKA agentic traces only (semianalysis_cc_traces_weka_* or weka_hf)", o.PublicDataset)
		}
		repo = r
	}
	if repo == "" {
		return "", "", nil
	}
	dirs := hfCacheDirs(getenv)
	if snap := findHFSnapshot(repo, dirs); snap != "" {
		return repo, snap, nil
	}
	return repo, "", &TraceSetError{Repo: repo, Dirs: dirs}
}

// resolveDataset picks the trace source: --input-file; else the
// --public-dataset / --hf-weka-dataset repo from the local Hugging Face
// cache (the load generator never downloads); else the built-in
// synthetic set, with a warning on warn. A named trace set that is not
// in the cache is an error with RequireTraces (a real engine's point).
func resolveDataset(o *Options, warn func(string)) (*dataset, error) {
	if o.TraceFile != "" {
		ts, err := LoadTraces(o.TraceFile)
		if err != nil {
			return nil, err
		}
		return &dataset{SourceType: "file", Loader: "weka_trace", Path: o.TraceFile, Traces: ts}, nil
	}
	repo, snap, err := TraceSet(o, nil)
	missing, isMissing := errors.AsType[*TraceSetError](err)
	switch {
	case err != nil && (!isMissing || o.RequireTraces):
		return nil, err
	case snap != "":
		ts, err := LoadTraces(snap)
		if err != nil {
			return nil, err
		}
		return &dataset{SourceType: "public_dataset", Loader: cmp.Or(o.PublicDataset, "weka_hf"), HFName: repo, Path: snap, Traces: ts}, nil
	case isMissing && uncapped(repo):
		warn(fmt.Sprintf("dataset %s is not in the local Hugging Face cache (%s); replaying the built-in long-context synthetic agentic trace set instead", repo, strings.Join(missing.Dirs, ", ")))
		return &dataset{SourceType: "builtin", Loader: "sweep_synthetic_agentic_long", Traces: LongAgenticTraces(builtinTraceSeed, builtinTraceCount)}, nil
	case isMissing:
		warn(fmt.Sprintf("dataset %s is not in the local Hugging Face cache (%s); replaying the built-in synthetic agentic trace set instead", repo, strings.Join(missing.Dirs, ", ")))
	}
	return &dataset{SourceType: "builtin", Loader: "sweep_synthetic_agentic", Traces: AgenticTraces(builtinTraceSeed, builtinTraceCount)}, nil
}

// uncapped reports whether a cc-traces corpus keeps the requests past 256k
// tokens that its -256k variant drops: the corpus InferenceX replays to
// model families with a 1M-token native context, stood in for by
// LongAgenticTraces.
func uncapped(repo string) bool {
	return strings.HasPrefix(repo, "semianalysisai/cc-traces-weka-") && !strings.HasSuffix(repo, "-256k")
}

func (ds *dataset) describe() string {
	switch ds.SourceType {
	case "builtin":
		return fmt.Sprintf("the built-in synthetic trace set (%d traces)", len(ds.Traces))
	case "public_dataset":
		return fmt.Sprintf("%s (%s, %d traces)", ds.HFName, ds.Path, len(ds.Traces))
	}
	return fmt.Sprintf("%s (%d traces)", ds.Path, len(ds.Traces))
}
