package abgate

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// BFCL describes one (arm, replicate) run of bfcl-eval against a server
// speaking the OpenAI API (OpenAICompletionsHandler), following the
// checklist of bfcl-ab.md §6:
//
//	b := abgate.BFCL{Model: "Org/M-FC", Categories: cats, Root: root, BaseURL: url + "/v1", NumThreads: 16}
//	err := abgate.PrepareRoot(b.Root)        // fresh, empty, no .env
//	gen, eval, env := b.Generate(), b.Evaluate(), b.Env()
//
// then run gen and eval as argv (never through a shell) with env, and read
// the root with ReadRoot or Compare.
type BFCL struct {
	// Binary is the bfcl executable (default "bfcl").
	Binary     string
	Model      string
	Categories []Category
	// Root is the fresh BFCL_PROJECT_ROOT of this run.
	Root string
	// BaseURL is the server's OpenAI base URL, e.g. http://127.0.0.1:8000/v1.
	BaseURL string
	// Temperature is the sampling temperature (0: greedy, the default).
	Temperature float64
	// NumThreads is always passed: bfcl's default for API handlers is 1.
	// Zero means 16.
	NumThreads int
	// PartialEval scores partial result files on their subset instead of
	// aborting the whole evaluate.
	PartialEval bool
}

// TemperatureWarning returns a warning when an engine (display name
// engine) that clamps positive temperatures below min up to min would not
// sample at the requested temperature (vLLM: min 0.01, so 0.001, bfcl's
// default, is neither greedy nor 0.001).
func (b BFCL) TemperatureWarning(engine string, min float64) string {
	if b.Temperature > 0 && b.Temperature < min {
		return fmt.Sprintf("temperature %g: %s clamps positive temperatures below %g up to %g; use 0 for greedy decoding", b.Temperature, engine, min, min)
	}
	return ""
}

func (b BFCL) binary() string {
	if b.Binary == "" {
		return "bfcl"
	}
	return b.Binary
}

func (b BFCL) categoryList() string {
	names := make([]string, len(b.Categories))
	for i, c := range b.Categories {
		names[i] = c.Name
	}
	return strings.Join(names, ",")
}

// Generate is the argv of "bfcl generate": every flag explicit, result
// files of the requested categories overwritten.
func (b BFCL) Generate() []string {
	threads := b.NumThreads
	if threads <= 0 {
		threads = 16
	}
	return []string{b.binary(), "generate", "--model", b.Model, "--test-category", b.categoryList(),
		"--temperature", strconv.FormatFloat(b.Temperature, 'g', -1, 64),
		"--num-threads", strconv.Itoa(threads), "--allow-overwrite"}
}

// Evaluate is the argv of "bfcl evaluate".
func (b BFCL) Evaluate() []string {
	argv := []string{b.binary(), "evaluate", "--model", b.Model, "--test-category", b.categoryList()}
	if b.PartialEval {
		argv = append(argv, "--partial-eval")
	}
	return argv
}

// Env is the environment both commands need on top of the inherited one.
func (b BFCL) Env() map[string]string {
	return map[string]string{
		"BFCL_PROJECT_ROOT": b.Root,
		"OPENAI_BASE_URL":   b.BaseURL,
		"OPENAI_API_KEY":    "EMPTY",
	}
}

// ErrRootNotEmpty is returned by PrepareRoot for a reused root.
var ErrRootNotEmpty = errors.New("not empty")

// PrepareRoot creates root for one run, refusing a directory that already
// has entries: a reused root carries stale score files and a .env that
// bfcl loads with override (bfcl-ab.md §2.6).
func PrepareRoot(root string) error {
	entries, err := os.ReadDir(root)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return os.MkdirAll(root, 0o755)
	case err != nil:
		return fmt.Errorf("bfcl root %s: %w", root, err)
	case len(entries) > 0:
		return fmt.Errorf("bfcl root %s: %w (holds %s, ...): every (arm, replicate) run needs a fresh root", root, ErrRootNotEmpty, entries[0].Name())
	}
	return nil
}
