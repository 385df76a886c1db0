package recipes_test

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sweep/recipes"
	"sweep/recipes/models"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs/matrix"
)

// shellWords splits shell text into words as sh does for the subset
// WriteText emits: comment lines, backslash-newline continuations,
// blanks, single quotes (with the '\” idiom) and double quotes. Nothing
// is expanded: "${A+"B=$A"}" stays one word with its quotes removed.
func shellWords(t *testing.T, text string) []string {
	t.Helper()
	var lines []string
	for l := range strings.SplitSeq(text, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			lines = append(lines, l)
		}
	}
	s := strings.ReplaceAll(strings.Join(lines, "\n"), "\\\n", "")
	var words []string
	var cur strings.Builder
	in := false // inside a word
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			require.GreaterOrEqual(t, j, 0, "unclosed single quote in %q", s[i:])
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '"':
			j := strings.IndexByte(s[i+1:], '"')
			require.GreaterOrEqual(t, j, 0, "unclosed double quote in %q", s[i:])
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '\\':
			require.Less(t, i+1, len(s))
			cur.WriteByte(s[i+1])
			i++
			in = true
		default:
			require.NotContains(t, "|&;<>()`*?[]{}~!", string(c), "unquoted special character %q in %q", c, s[max(0, i-20):min(len(s), i+20)])
			if c == '$' {
				require.True(t, strings.HasPrefix(s[i:], "${"), "unquoted $ in %q", s[i:min(len(s), i+20)])
				// ${SRC+"DST=$SRC"} or a ${NAME} placeholder: one word.
				j := strings.IndexByte(s[i:], '}')
				require.Positive(t, j)
				cur.WriteString(strings.ReplaceAll(s[i:i+j+1], `"`, ""))
				i += j
				in = true
				continue
			}
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// wantWords is what the shell should see for c: env(1) with its -u and
// assignments when the command unsets or copies variables, plain
// assignments otherwise, then the argv.
func wantWords(c recipes.Command) []string {
	var out []string
	if len(c.Unset) > 0 || len(c.EnvFrom) > 0 {
		out = append(out, "env")
		for _, u := range c.Unset {
			out = append(out, "-u", u)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		out = append(out, k+"="+c.Env[k])
	}
	for _, k := range slices.Sorted(maps.Keys(c.EnvFrom)) {
		out = append(out, fmt.Sprintf("${%s+%s=$%s}", c.EnvFrom[k], k, c.EnvFrom[k]))
	}
	return append(out, c.Argv...)
}

// TestPlanTextIsShell: each command block of the text plan, pasted into a
// shell, gives exactly the planned environment and argv (JSON values,
// spaces and quotes included).
func TestPlanTextIsShell(t *testing.T) {
	all := rows(t, matrix.TestConfigOptions{ConfigKeys: shippedKeys, EvalOptions: matrix.EvalOptions{NoEvals: true}})
	all = append(all, rows(t, matrix.TestConfigOptions{ConfigKeys: shippedKeys, EvalOptions: matrix.EvalOptions{EvalsOnly: true}})...)
	pts, err := recipes.Plan(all, recipes.PlanOptions{Catalog: models.Builtin()})
	require.NoError(t, err)
	for _, p := range pts {
		cmds := []struct {
			title string
			c     *recipes.Command
		}{{"engine", &p.Engine}, {"router", p.Router}, {"client", p.Client}, {"eval", p.Eval}}
		for _, s := range p.Sidecars {
			cmds = append(cmds, struct {
				title string
				c     *recipes.Command
			}{"sidecar " + s.Name, &s.Command})
		}
		for _, cmd := range cmds {
			if cmd.c == nil {
				continue
			}
			var b strings.Builder
			recipes.WriteCommand(&b, cmd.title, *cmd.c)
			text := b.String()
			lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
			for _, l := range lines[1 : len(lines)-1] {
				require.True(t, strings.HasSuffix(l, " \\"), "%s %s: line %q has no continuation", p.Row.ConfigKey, cmd.title, l)
			}
			assert.Equal(t, wantWords(*cmd.c), shellWords(t, text), "%s %s:\n%s", p.Row.ConfigKey, cmd.title, text)
		}
	}
}

func TestShellWords(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("# comment\n  A='x y' \\\n  prog --j '{\"a\": 1}' --q 'it'\\''s' ${B+\"C=$B\"}\n")
	assert.Equal(t, []string{"A=x y", "prog", "--j", `{"a": 1}`, "--q", "it's", "${B+C=$B}"}, shellWords(t, b.String()))
}
