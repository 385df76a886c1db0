package run

import (
	"maps"
	"regexp"
	"slices"
	"strings"
)

// secretName matches environment variable names whose values must never
// reach a log or command file (HF_TOKEN, WANDB_API_KEY, AWS_SECRET_ACCESS_KEY,
// ...); it looks at the last word only, so SGLANG_SIMULATE_ACC_TOKEN_MODE
// stays readable.
var secretName = regexp.MustCompile(`(?i)(^|_)(TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?)$`)

// secretFlag matches flags whose value is a secret (--api-key, --hf-token, ...).
var secretFlag = regexp.MustCompile(`(?i)^--?[a-z0-9-]*(token|secret|password|api-key|apikey)$`)

const redacted = "<redacted>"

// redactEnv returns env with secret values replaced.
func redactEnv(env map[string]string) map[string]string {
	out := maps.Clone(env)
	for k := range out {
		if secretName.MatchString(k) {
			out[k] = redacted
		}
	}
	return out
}

// redactArgv returns argv with the values of secret flags replaced, in both
// the "--flag value" and "--flag=value" forms.
func redactArgv(argv []string) []string {
	out := slices.Clone(argv)
	for i := 0; i < len(out); i++ {
		name, _, hasValue := strings.Cut(out[i], "=")
		if !secretFlag.MatchString(name) {
			continue
		}
		if hasValue {
			out[i] = name + "=" + redacted
		} else if i+1 < len(out) {
			out[i+1] = redacted
			i++
		}
	}
	return out
}

// commandText renders a command for people: the environment it adds, one
// variable per line, then the argv with each token shell-quoted so it can
// be copied into a terminal. It is never executed by sweep.
func commandText(argv []string, env map[string]string, unset []string) string {
	var b strings.Builder
	for _, name := range slices.Sorted(slices.Values(unset)) {
		b.WriteString("unset " + name + "\n")
	}
	red := redactEnv(env)
	for _, k := range slices.Sorted(maps.Keys(red)) {
		b.WriteString("export " + k + "=" + shellQuote(red[k]) + "\n")
	}
	for i, a := range redactArgv(argv) {
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
