package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
)

// The conformance tests run InferenceX's recorded cases through the same
// command code the CLI runs (flag parsing, options, run function, JSON
// printing); only file loading is cached across cases.

const (
	ixDir      = "../../testdata/inferencex"
	sweepTDDir = "../../testdata/sweep"
)

var (
	ixMasters = []string{ixDir + "/configs/amd-master.yaml", ixDir + "/configs/nvidia-master.yaml"}
	ixRunners = ixDir + "/configs/runners.yaml"
)

// cachedLoader loads each distinct set of config files once. Loaded
// configs are read-only, so sharing them between cases is safe.
type cachedLoader struct {
	mu    sync.Mutex
	cache map[string]loadResult
	// files overrides file contents by name (nil: read from disk).
	files map[string][]byte
}

type loadResult struct {
	m   *configs.Masters
	r   *configs.Runners
	err error
}

func (c *cachedLoader) load(files []string, runner string) (*configs.Masters, *configs.Runners, error) {
	key := strings.Join(files, "\x00") + "\x01" + runner
	c.mu.Lock()
	defer c.mu.Unlock()
	if res, ok := c.cache[key]; ok {
		return res.m, res.r, res.err
	}
	var res loadResult
	if c.files == nil {
		res.m, res.r, res.err = configs.Load(files, runner)
	} else {
		srcs := make([]configs.Source, 0, len(files))
		for _, f := range files {
			srcs = append(srcs, configs.Source{Name: f, Data: c.files[f]})
		}
		if res.m, res.err = configs.ParseMasters(srcs...); res.err == nil {
			res.r, res.err = configs.ParseRunners(configs.Source{Name: runner, Data: c.files[runner]})
		}
	}
	if c.cache == nil {
		c.cache = map[string]loadResult{}
	}
	c.cache[key] = res
	return res.m, res.r, res.err
}

// runMatrixCmd runs "sweep matrix KIND args..." with the loader and
// returns stdout and the command's error.
func runMatrixCmd(t *testing.T, l *cachedLoader, kind string, args []string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	ios := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	var cmd *Command
	switch kind {
	case "test-config":
		cmd = newMatrixTestConfigCmd(ios, func(ctx context.Context, o *matrixTestConfigOptions) error {
			o.Inputs.Load = l.load
			return matrixTestConfigRun(ctx, o)
		})
	case "full-sweep":
		cmd = newMatrixFullSweepCmd(ios, func(ctx context.Context, o *matrixFullSweepOptions) error {
			o.Inputs.Load = l.load
			return matrixFullSweepRun(ctx, o)
		})
	default:
		t.Fatalf("unknown matrix kind %q", kind)
	}
	err := dispatch(t.Context(), ios, cmd, []string{"sweep", "matrix", kind}, args)
	return out.String(), err
}

// runChangelogCmd runs "sweep changelog args..." with the loader and an
// in-memory git.
func runChangelogCmd(t *testing.T, l *cachedLoader, git map[string][]byte, args []string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	ios := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	cmd := newChangelogCmd(ios, func(ctx context.Context, o *changelogOptions) error {
		o.Inputs.Load = l.load
		o.Git = fakeGit(git)
		return changelogRun(ctx, o)
	})
	err := dispatch(t.Context(), ios, cmd, []string{"sweep", "changelog"}, args)
	return out.String(), err
}

// fakeGit serves "ref:path" contents from a map, as git show would.
func fakeGit(git map[string][]byte) func(context.Context, string, string) ([]byte, error) {
	return func(_ context.Context, ref, path string) ([]byte, error) {
		data, ok := git[ref+":"+path]
		if !ok {
			return nil, fmt.Errorf("fake git: no %s:%s", ref, path)
		}
		return data, nil
	}
}

// decodeJSON parses JSON keeping numbers as their text, so 1 and 1.0 differ.
func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v), "output is not JSON: %.300s", s)
	return v
}

type ixCase struct {
	Kind       string          `json:"kind"`
	Args       []string        `json:"args"`
	OK         bool            `json:"ok"`
	Output     json.RawMessage `json:"output"`
	EntryIndex int             `json:"entry_index"`
	Added      string          `json:"added"`
	TrimConc   bool            `json:"trim_conc"`
}

// cutChangelog returns the base and head files of a changelog case: the
// changelog cut before its top-level entry number idx (0-based, counting
// lines that start with "- "), and that plus the entry's text.
func cutChangelog(t *testing.T, changelog []byte, idx int, added string) (base, head []byte) {
	t.Helper()
	n := 0
	off := 0
	for _, line := range strings.SplitAfter(string(changelog), "\n") {
		if strings.HasPrefix(line, "- ") {
			if n == idx {
				base = changelog[:off]
				head = append(append([]byte{}, base...), added...)
				require.True(t, bytes.HasPrefix(changelog, head), "entry %d: base+added is not a prefix of the changelog", idx)
				return base, head
			}
			n++
		}
		off += len(line)
	}
	t.Fatalf("changelog has no entry %d", idx)
	return nil, nil
}

// loadIXCases reads InferenceX's recorded cases and the changelog the
// changelog cases cut.
func loadIXCases(t *testing.T) ([]ixCase, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ixDir, "cases.json"))
	require.NoError(t, err)
	var file struct {
		Cases []ixCase `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(data, &file))
	changelog, err := os.ReadFile(filepath.Join(ixDir, "configs", "perf-changelog.yaml"))
	require.NoError(t, err)
	return file.Cases, changelog
}

// ixInputs are the flags naming InferenceX's master configs and runners.
func ixInputs() []string {
	return append(append([]string{"--config-files"}, ixMasters...), "--runner-config", ixRunners)
}

// TestInferenceXConformance runs every case of
// testdata/inferencex/cases.json (InferenceX's own generator and changelog
// processor at the conformance commit) and compares parsed JSON.
func TestInferenceXConformance(t *testing.T) {
	cases, changelog := loadIXCases(t)
	l := &cachedLoader{}
	inputs := ixInputs()
	counts := map[string][2]int{} // kind -> matched, total
	for i, c := range cases {
		name := fmt.Sprintf("%s/%03d", c.Kind, i)
		t.Run(name, func(t *testing.T) {
			cnt := counts[c.Kind]
			cnt[1]++
			defer func() { counts[c.Kind] = cnt }()
			var out string
			var err error
			if c.Kind == "changelog" {
				base, head := cutChangelog(t, changelog, c.EntryIndex, c.Added)
				git := map[string][]byte{"base:perf-changelog.yaml": base, "head:perf-changelog.yaml": head}
				args := append([]string{"--base-ref", "base", "--head-ref", "head"}, inputs...)
				if c.TrimConc {
					args = append(args, "--trim-conc")
				}
				out, err = runChangelogCmd(t, l, git, args)
			} else {
				out, err = runMatrixCmd(t, l, c.Kind, append(slicesClone(c.Args), inputs...))
			}
			if !c.OK {
				if assert.Error(t, err, "InferenceX rejects this case; args %q", c.Args) {
					cnt[0]++
				}
				return
			}
			require.NoError(t, err, "args %q", c.Args)
			got, want := decodeJSON(t, out), decodeJSON(t, string(c.Output))
			if c.Kind == "changelog" {
				// The refs are the commits of the recording run.
				for _, v := range []any{got, want} {
					md := v.(map[string]any)["changelog_metadata"].(map[string]any)
					delete(md, "base_ref")
					delete(md, "head_ref")
				}
			}
			if assert.Equal(t, want, got, "args %q", c.Args) {
				cnt[0]++
			}
		})
	}
	total := 0
	for kind, cnt := range counts {
		t.Logf("%s: %d of %d cases match", kind, cnt[0], cnt[1])
		assert.Equal(t, cnt[1], cnt[0], "%s cases that do not match", kind)
		total += cnt[1]
	}
	assert.Equal(t, len(cases), total)
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// TestPythonRecordedCases runs testdata/sweep/python-cases.json: outputs
// of InferenceX's code recorded by testdata/sweep/generate_python_cases.py
// on shapes the real configs lack (testdata/sweep/custom-master.yaml),
// every key in every eval mode, full-sweep filters, and changelog changes
// with several entries, eval flags, trim-conc, deletions and append-only
// entries. Outputs must match byte for byte (sha256 of stdout).
func TestPythonRecordedCases(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(sweepTDDir, "python-cases.json"))
	require.NoError(t, err)
	var file struct {
		Matrix []struct {
			Kind   string   `json:"kind"`
			Args   []string `json:"args"`
			OK     bool     `json:"ok"`
			SHA256 string   `json:"sha256"`
		} `json:"matrix"`
		Changelog []struct {
			Name       string   `json:"name"`
			Flags      []string `json:"flags"`
			Entries    string   `json:"entries"`
			Replace    []string `json:"replace"`
			HeadCustom *string  `json:"head_custom"`
			OK         bool     `json:"ok"`
			SHA256     string   `json:"sha256"`
			Output     *string  `json:"output"`
			Error      string   `json:"error"`
		} `json:"changelog"`
	}
	require.NoError(t, json.Unmarshal(data, &file))
	custom := filepath.Join(sweepTDDir, "custom-master.yaml")
	inputs := []string{"--config-files", ixMasters[0], ixMasters[1], custom, "--runner-config", ixRunners}
	l := &cachedLoader{}
	matched := 0
	for i, c := range file.Matrix {
		t.Run(fmt.Sprintf("matrix/%04d", i), func(t *testing.T) {
			out, err := runMatrixCmd(t, l, c.Kind, append(slicesClone(c.Args), inputs...))
			if !c.OK {
				if assert.Error(t, err, "InferenceX rejects %s %q", c.Kind, c.Args) {
					matched++
				}
				return
			}
			require.NoError(t, err, "%s %q", c.Kind, c.Args)
			if assert.Equal(t, c.SHA256, sha256Hex(out), "%s %q: output differs from InferenceX's; got %.500s", c.Kind, c.Args, out) {
				matched++
			}
		})
	}
	t.Logf("matrix: %d of %d recorded cases match (same bytes, or rejected by both)", matched, len(file.Matrix))

	readFile := func(p string) []byte {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		return b
	}
	changelog := readFile(filepath.Join(ixDir, "configs", "perf-changelog.yaml"))
	files := map[string][]byte{
		"amd":     readFile(ixMasters[0]),
		"nvidia":  readFile(ixMasters[1]),
		"custom":  readFile(custom),
		"runners": readFile(ixRunners),
	}
	matched = 0
	shared := &cachedLoader{files: files}
	for _, c := range file.Changelog {
		t.Run("changelog/"+c.Name, func(t *testing.T) {
			head := changelog
			if c.Replace != nil {
				head = []byte(strings.Replace(string(head), c.Replace[0], c.Replace[1], 1))
			}
			head = append(slicesCloneBytes(head), c.Entries...)
			loader := shared
			if c.HeadCustom != nil {
				headFiles := map[string][]byte{"custom": []byte(*c.HeadCustom)}
				for k, v := range files {
					if k != "custom" {
						headFiles[k] = v
					}
				}
				loader = &cachedLoader{files: headFiles}
			}
			git := map[string][]byte{
				"base:perf-changelog.yaml": changelog,
				"HEAD:perf-changelog.yaml": head,
				"base:amd":                 files["amd"],
				"base:nvidia":              files["nvidia"],
				"base:custom":              files["custom"],
				"base:runners":             files["runners"],
			}
			args := append([]string{"--base-ref", "base", "--head-ref", "HEAD", "--config-files", "amd", "nvidia", "custom", "--runner-config", "runners"}, c.Flags...)
			out, err := runChangelogCmd(t, loader, git, args)
			if !c.OK {
				if assert.Error(t, err, "InferenceX rejects this change: %s", c.Error) {
					matched++
					t.Logf("InferenceX: %s\nsweep: %v", c.Error, err)
				}
				return
			}
			require.NoError(t, err)
			out = strings.TrimSuffix(out, "\n")
			if c.Output != nil {
				if !assert.Equal(t, *c.Output, out) {
					return
				}
			}
			if assert.Equal(t, c.SHA256, sha256Hex(out), "output differs from InferenceX's: %.500s", out) {
				matched++
			}
		})
	}
	t.Logf("changelog: %d of %d recorded cases match (same bytes, or rejected by both)", matched, len(file.Changelog))
}

func slicesCloneBytes(b []byte) []byte { return append([]byte(nil), b...) }

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
