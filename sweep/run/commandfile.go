package run

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sweep/internal/redact"
)

// goRunProgram is what a temporary `go run` build of sweep is recorded as.
const goRunProgram = "sweep"

// goRunNote heads a command file whose program is a `go run` build.
const goRunNote = "# `sweep` is the `go run` build of sweep this run used (a temporary binary, deleted when it exited):\n" +
	"# run it with an installed sweep (go install ./cmd/sweep) or `go run ./cmd/sweep` in its place.\n"

// isGoRunBuild reports whether path is a binary that `go run` built in its
// temporary work directory ($GOTMPDIR or $TMPDIR/go-buildNNN/bNNN/exe/NAME),
// which go run deletes when it exits: a record naming it would point at
// nothing (and differ on every run).
func isGoRunBuild(path string) bool {
	if !filepath.IsAbs(path) || filepath.Base(filepath.Dir(path)) != "exe" {
		return false
	}
	for d := filepath.Dir(path); d != filepath.Dir(d); d = filepath.Dir(d) {
		if strings.HasPrefix(filepath.Base(d), "go-build") {
			return true
		}
	}
	return false
}

// recordedArgv is argv as command files and run.json record it: a
// temporary `go run` build of sweep as the program becomes "sweep"
// (goRun true), everything else is kept.
func recordedArgv(argv []string) (out []string, goRun bool) {
	if len(argv) == 0 || !isGoRunBuild(argv[0]) {
		return argv, false
	}
	out = slices.Clone(argv)
	out[0] = goRunProgram
	return out, true
}

// commandText renders a command for people: the environment it adds, one
// variable per line, then the argv with each token shell-quoted so it can
// be copied into a terminal. It is never executed by sweep. A temporary
// `go run` build as the program is written as "sweep", with a note.
func commandText(argv []string, env map[string]string, unset []string) string {
	var b strings.Builder
	argv, goRun := recordedArgv(argv)
	if goRun {
		b.WriteString(goRunNote)
	}
	for _, name := range slices.Sorted(slices.Values(unset)) {
		b.WriteString("unset " + name + "\n")
	}
	red := redact.Env(env)
	for _, k := range slices.Sorted(maps.Keys(red)) {
		b.WriteString("export " + k + "=" + shellQuote(red[k]) + "\n")
	}
	for i, a := range redact.Argv(argv) {
		if i > 0 {
			if strings.HasPrefix(a, "-") {
				b.WriteString(" \\\n  ")
			} else {
				b.WriteString(" ")
			}
		}
		b.WriteString(shellQuote(a))
	}
	b.WriteString("\n")
	return b.String()
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

func shellQuote(s string) string {
	if s != "" && shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ParseCommandText reads back what commandText wrote (a point's
// sglang_command.txt, vllm_command.txt, ...): the argv and the exported
// environment. Comment and unset lines are skipped; values keep the
// redaction commandText applied.
func ParseCommandText(text string) (argv []string, env map[string]string, err error) {
	env = map[string]string{}
	var cmd strings.Builder
	for line := range strings.SplitSeq(text, "\n") {
		switch {
		case strings.HasPrefix(line, "#"), strings.HasPrefix(line, "unset "), strings.TrimSpace(line) == "":
		case strings.HasPrefix(line, "export "):
			k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
			if !ok {
				return nil, nil, fmt.Errorf("command file: %q: want export NAME=VALUE", line)
			}
			words, err := shellWords(v)
			if err != nil || len(words) != 1 {
				return nil, nil, fmt.Errorf("command file: %q: want one shell-quoted value", line)
			}
			env[k] = words[0]
		default:
			cmd.WriteString(strings.TrimSuffix(strings.TrimRight(line, " "), "\\"))
			cmd.WriteByte(' ')
		}
	}
	argv, err = shellWords(cmd.String())
	return argv, env, err
}

// shellWords splits what shellQuote wrote: words separated by blanks,
// each plain or in single quotes (a quote inside closes the quotes,
// adds a backslashed quote and reopens them, as shellQuote writes it).
func shellWords(s string) ([]string, error) {
	var out []string
	var w strings.Builder
	in, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			w.WriteByte(c)
		case c == '\'':
			quoted, in = true, true
		case c == '\\' && i+1 < len(s) && s[i+1] == '\'':
			w.WriteByte('\'')
			i++
			in = true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("command file: unterminated quote in %q", s)
	}
	if in {
		out = append(out, w.String())
	}
	return out, nil
}
