// Package redact keeps secret values out of what sweep records: the
// command files beside a result, a made record's flags, the sidecar
// commands handed to a simulated engine. Env replaces the values of
// secret environment variables (by the last word of the name), Argv the
// values of secret flags:
//
//	env := redact.Env(cmd.Env)   // HF_TOKEN=<redacted>
//	argv := redact.Argv(cmd.Argv) // --api-key <redacted>, --hf-token=<redacted>
package redact

import (
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Marker is what a secret value is replaced with.
const Marker = "<redacted>"

// secretName matches environment variable names whose values must never
// reach a log or command file (HF_TOKEN, WANDB_API_KEY, AWS_SECRET_ACCESS_KEY,
// ...); it looks at the last word only, so SGLANG_SIMULATE_ACC_TOKEN_MODE
// stays readable.
var secretName = regexp.MustCompile(`(?i)(^|_)(TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?)$`)

// secretFlag matches flags whose value is a secret (--api-key, --hf-token, ...).
var secretFlag = regexp.MustCompile(`(?i)^--?[a-z0-9-]*(token|secret|password|api-key|apikey)$`)

// Env returns a copy of env with secret values replaced.
func Env(env map[string]string) map[string]string {
	out := maps.Clone(env)
	for k := range out {
		if secretName.MatchString(k) {
			out[k] = Marker
		}
	}
	return out
}

// Argv returns a copy of argv with the values of secret flags replaced,
// in both the "--flag value" and "--flag=value" forms.
func Argv(argv []string) []string {
	out := slices.Clone(argv)
	for i := 0; i < len(out); i++ {
		name, _, hasValue := strings.Cut(out[i], "=")
		if !secretFlag.MatchString(name) {
			continue
		}
		if hasValue {
			out[i] = name + "=" + Marker
		} else if i+1 < len(out) {
			out[i+1] = Marker
			i++
		}
	}
	return out
}
