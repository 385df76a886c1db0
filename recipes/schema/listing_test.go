package schema

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSummaries(t *testing.T) {
	cat, err := Embedded()
	require.NoError(t, err)
	rows := cat.Summaries()
	require.Len(t, rows, len(cat.All()))
	var aiperf *Summary
	for i := range rows {
		if rows[i].Tool == "aiperf" && rows[i].Version == "0.12.0" {
			aiperf = &rows[i]
		}
		assert.NotNil(t, rows[i].Scenarios, "an empty list, not null, in JSON")
	}
	require.NotNil(t, aiperf)
	s, err := cat.Get("aiperf", "0.12.0")
	require.NoError(t, err)
	spellings := 0
	for _, f := range s.Flags {
		spellings += len(f.Spellings())
	}
	assert.Equal(t, Summary{Tool: "aiperf", Version: "0.12.0", Default: s.Default, Complete: s.Complete, Flags: len(s.Flags),
		Spellings: spellings, Rules: len(s.Rules), Scenarios: []string{"inferencex-agentx-mvp"}}, *aiperf)

	var b bytes.Buffer
	require.NoError(t, WriteSummaries(&b, []Summary{
		{Tool: "t", Version: "1", Default: true, Complete: true, Flags: 2, Spellings: 3, Rules: 1, Scenarios: []string{"a", "b"}},
		{Tool: "t", Version: "2", Flags: 1, Spellings: 1, Scenarios: []string{}},
	}))
	assert.Equal(t, "TOOL  VERSION  DEFAULT  FLAGS  SPELLINGS  RULES  SCENARIOS  COVERAGE\n"+
		"t     1        yes      2      3          1      a,b        complete\n"+
		"t     2                 1      1          0      -          partial\n", b.String())
}

func TestProblemsOf(t *testing.T) {
	assert.Equal(t, []Problem{}, ProblemsOf(nil))
	e := &Error{Kind: "unknown-flag", Severity: "error", Flag: "--model-names", Spelling: "-m", Suggestion: "--model"}
	got := ProblemsOf([]*Error{e, {Kind: "rule", Severity: "warning", Flag: "--x", Rule: "r"}})
	assert.Equal(t, Problem{Kind: "unknown-flag", Severity: "error", Flag: "-m", Suggestion: "--model", Message: e.Error()}, got[0], "the flag as spelled")
	assert.Equal(t, "--x", got[1].Flag, "the canonical name when no spelling is known")
}

func TestShellJoin(t *testing.T) {
	assert.Equal(t, `profile --model m --extra '{"a": 1}' '' 'it'\''s'`, ShellJoin([]string{"profile", "--model", "m", "--extra", `{"a": 1}`, "", "it's"}))
}

func TestRunHelp(t *testing.T) {
	s := &Schema{Tool: "t", Command: []string{"profile"}}
	// sh -c SCRIPT profile --help: $0 is the subcommand, $1 the request.
	out, source, err := s.RunHelp(t.Context(), "sh", []string{"-c", `echo "$COLUMNS $NO_COLOR $0 $1"`}, time.Minute, 123)
	require.NoError(t, err)
	assert.Equal(t, "123 1 profile --help\n", string(out))
	assert.Equal(t, `sh -c echo "$COLUMNS $NO_COLOR $0 $1" profile --help`, source)

	_, _, err = s.RunHelp(t.Context(), "sh", []string{"-c", "for i in 1 2 3 4 5 6 7; do echo line$i >&2; done; exit 3"}, time.Minute, 80)
	assert.EqualError(t, err, "sh --help: exit status 3: line3 | line4 | line5 | line6 | line7", "the last five lines of its stderr")

	_, _, err = s.RunHelp(t.Context(), "sh", []string{"-c", "exec sleep 30"}, 50*time.Millisecond, 80)
	require.Error(t, err)
	assert.True(t, strings.HasSuffix(err.Error(), "context deadline exceeded"), err.Error())
}

func TestValidationAndWriteFlags(t *testing.T) {
	cat, err := Embedded()
	require.NoError(t, err)
	s, err := cat.Get("aiperf", "0.12.0")
	require.NoError(t, err)
	p, perr := s.Parse([]string{"profile", "-m", "m"})
	require.NoError(t, perr)
	v := s.NewValidation(p, perr)
	assert.Equal(t, Validation{Schema: "aiperf@0.12.0", Valid: true, Argv: p.Args(), Problems: []Problem{}, Warnings: []Problem{}}, v)
	p, perr = s.Parse([]string{"profile", "-m", "m", "--use-chat-template"})
	v = s.NewValidation(p, perr)
	assert.False(t, v.Valid)
	assert.Nil(t, v.Argv, "no argv for an invalid line")
	require.Len(t, v.Problems, 1)
	assert.Equal(t, "--use-chat-template", v.Problems[0].Flag)

	var b bytes.Buffer
	missing := s.WriteFlags(&b, []string{"--concurrency", "--use-chat-template"})
	assert.Equal(t, []string{"--use-chat-template"}, missing)
	assert.True(t, strings.HasPrefix(b.String(), "--concurrency  (aiperf@0.12.0)\n"), b.String())
	assert.Contains(t, b.String(), "aiperf@0.12.0 has no flag --use-chat-template (did you mean --apply-chat-template?)\n")
}
