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
	rows, err := ParseHelp(Cyclopts, text)
	require.NoError(t, err)
	d := MustLoad("aiperf", "").Compare(rows)
	require.Len(t, d.Added, 1)
	assert.Equal(t, []string{"--use-chat-template"}, d.Added[0].Names)
	assert.Equal(t, []string{"--apply-chat-template"}, d.Removed)
	require.Len(t, d.Changed, 1)
	assert.Equal(t, "--model-selection-strategy", d.Changed[0].Flag)
	assert.Equal(t, "choices", d.Changed[0].What)
}
