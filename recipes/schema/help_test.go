package schema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readTestdata(t testing.TB, parts ...string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(append([]string{"..", "..", "testdata"}, parts...)...))
	require.NoError(t, err)
	return string(data)
}

// The real `aiperf profile --help` of 0.12.0, at 100 and 250 columns, has no drift against
// the aiperf@0.12.0 schema: same 259 options, names, aliases, negative forms and choices.
func TestCheckRealAiperfHelp(t *testing.T) {
	s := MustLoad("aiperf", "0.12.0")
	for _, file := range []string{"aiperf-0.12.0-profile-help-cols100.txt", "aiperf-0.12.0-profile-help-cols250.txt"} {
		t.Run(file, func(t *testing.T) {
			rows, err := ParseHelp(Cyclopts, readTestdata(t, "help", file))
			require.NoError(t, err)
			assert.Len(t, rows, 259)
			d := s.Compare(rows)
			assert.Empty(t, d.Lines(), "drift in %s", file)
			assert.Equal(t, 259, d.Matched)
		})
	}
}

// The fork schema checked against upstream help shows the fork-only flags as removed.
func TestCheckForkAgainstUpstreamHelp(t *testing.T) {
	s := MustLoad("aiperf", "sa-754356e9")
	rows, err := ParseHelp(Cyclopts, readTestdata(t, "help", "aiperf-0.12.0-profile-help-cols250.txt"))
	require.NoError(t, err)
	d := s.Compare(rows)
	assert.ElementsMatch(t, []string{"--warmup-requests-per-lane", "--use-dynamo-conv-aware-routing", "--dynamo-session-timeout-seconds", "--use-end-to-start-delays"}, d.Removed)
	assert.Empty(t, d.Added)
	assert.Empty(t, d.Changed)
}

// Planted drift in the real help: a renamed flag, a removed one, a new choice.
func TestCheckDetectsPlantedAiperfDrift(t *testing.T) {
	text := readTestdata(t, "help", "aiperf-0.12.0-profile-help-cols100.txt")
	text = strings.Replace(text, "│ --apply-chat-template ", "│ --use-chat-template   ", 1)
	text = strings.Replace(text, "[choices: round-robin, random,", "[choices: round-robin, random, least-loaded,", 1)
	text = strings.Replace(text, "[default: 21600]", "[default: 3600]", 1)
	rows, err := ParseHelp(Cyclopts, text)
	require.NoError(t, err)
	d := MustLoad("aiperf", "").Compare(rows)
	require.Len(t, d.Added, 1)
	assert.Equal(t, []string{"--use-chat-template"}, d.Added[0].Names)
	assert.Equal(t, []string{"--apply-chat-template"}, d.Removed)
	require.Len(t, d.Changed, 2)
	assert.Equal(t, "--model-selection-strategy", d.Changed[0].Flag)
	assert.Equal(t, "choices", d.Changed[0].What)
	assert.Equal(t, Change{Flag: "--request-timeout-seconds", What: "default", Schema: "21600", Help: "3600"}, d.Changed[1])
}

// The argparse fixtures (written from the schema facts; see testdata/README.md) have no
// drift; flags the help shows beyond a partial schema are only counted.
func TestCheckArgparseFixtures(t *testing.T) {
	tests := []struct {
		tool, file string
		uncovered  int
	}{
		{"sglang@v0.5.16", "sglang-v0.5.16-help.txt", 0},
		{"vllm@v0.27.1", "vllm-v0.27.1-serve-help.txt", 0},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			c, _ := Embedded()
			s, err := c.Resolve(tc.tool)
			require.NoError(t, err)
			rows, err := ParseHelp(Argparse, readTestdata(t, "help", tc.file))
			require.NoError(t, err)
			d := s.Compare(rows)
			assert.Empty(t, d.Lines())
			assert.Len(t, d.Uncovered, tc.uncovered)
		})
	}
}

// Planted drift in the argparse fixtures is reported as removed, changed kind, changed
// names and changed choices.
func TestCheckDetectsPlantedArgparseDrift(t *testing.T) {
	sg := readTestdata(t, "help", "sglang-v0.5.16-help.txt")
	sg = strings.Replace(sg, "  --enable-cache-report\n", "  --enable-cache-stats\n", 1)                                         // renamed
	sg = strings.Replace(sg, "  --enable-metrics      ", "  --enable-metrics, --no-enable-metrics\n                        ", 1) // became BooleanOptionalAction
	sg = strings.Replace(sg, "{prefill,decode}", "{prefill,decode,both}", 1)                                                     // new choice
	rows, err := ParseHelp(Argparse, sg)
	require.NoError(t, err)
	d := MustLoad("sglang", "v0.5.16").Compare(rows)
	assert.Equal(t, []string{"--enable-cache-report"}, d.Removed)
	require.Len(t, d.Added, 1, "the complete schema reports the renamed flag as added")
	assert.Equal(t, []string{"--enable-cache-stats"}, d.Added[0].Names)
	var what []string
	for _, c := range d.Changed {
		what = append(what, c.Flag+" "+c.What)
	}
	assert.ElementsMatch(t, []string{"--enable-metrics names", "--enable-metrics kind", "--speculative-attention-mode choices"}, what)

	vl := readTestdata(t, "help", "vllm-v0.27.1-serve-help.txt")
	vl = strings.Replace(vl, "  --enable-prefix-caching, --no-enable-prefix-caching", "  --enable-prefix-caching", 1)
	vl = strings.Replace(vl, ", -tp TENSOR_PARALLEL_SIZE", "", 1)
	rows, err = ParseHelp(Argparse, vl)
	require.NoError(t, err)
	d = MustLoad("vllm", "").Compare(rows)
	what = nil
	for _, c := range d.Changed {
		what = append(what, c.Flag+" "+c.What)
	}
	assert.ElementsMatch(t, []string{"--enable-prefix-caching names", "--enable-prefix-caching kind", "--tensor-parallel-size names"}, what)
}

func TestParseHelpEmpty(t *testing.T) {
	_, err := ParseHelp(Cyclopts, "Usage: aiperf profile [OPTIONS]\n")
	assert.Error(t, err)
	_, err = ParseHelp("make", "x")
	assert.Error(t, err)
}
