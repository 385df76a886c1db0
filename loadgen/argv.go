package loadgen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Flags is the parsed `aiperf profile` command line the load generator
// reads its options from. Names are aiperf's primary flag names without
// the leading dashes ("model-names", not "--model" or "-m"); aliases are
// resolved by the parser. The aiperf schema's parsed argv satisfies it
// through a small adapter; Args is the fallback implementation.
type Flags interface {
	// Changed reports whether the flag was given.
	Changed(name string) bool
	String(name string) (string, error)
	Int(name string) (int, error)
	Float(name string) (float64, error)
	Bool(name string) (bool, error)
	// Strings returns every value of a list flag, across repetitions.
	Strings(name string) ([]string, error)
}

// flagKind is how the fallback parser reads a flag's value.
type flagKind int

const (
	kindString flagKind = iota
	kindInt
	kindFloat
	kindBool
	kindList // several values per occurrence, repeatable, comma-split
)

// flagSpec describes one aiperf 0.12 `profile` flag the load generator
// implements (or deliberately accepts as a no-op; see Note).
type flagSpec struct {
	Name    string
	Aliases []string
	Kind    flagKind
	Note    string // "" = implemented; otherwise why it is accepted without effect
}

// supportedFlags is every aiperf `profile` flag the built-in load
// generator accepts: the InferenceX AgentX replay command's flags
// (inferencex.md §4.5) plus a few common ones. Everything else is
// rejected.
var supportedFlags = []flagSpec{
	{Name: "scenario", Kind: kindString},
	{Name: "unsafe-override", Kind: kindBool},
	{Name: "url", Aliases: []string{"u"}, Kind: kindList},
	{Name: "custom-endpoint", Aliases: []string{"endpoint"}, Kind: kindString},
	{Name: "endpoint-type", Kind: kindString},
	{Name: "streaming", Kind: kindBool},
	{Name: "model-names", Aliases: []string{"model", "m"}, Kind: kindList},
	{Name: "tokenizer", Kind: kindString, Note: "recorded only: tokens are counted by the server (--use-server-token-count) or estimated as words"},
	{Name: "tokenizer-trust-remote-code", Kind: kindBool, Note: "no tokenizer is loaded"},
	{Name: "apply-chat-template", Kind: kindBool, Note: "the chat endpoint applies the template server-side"},
	{Name: "concurrency", Kind: kindInt},
	{Name: "benchmark-duration", Kind: kindFloat},
	{Name: "benchmark-grace-period", Kind: kindFloat},
	{Name: "request-count", Aliases: []string{"num-requests"}, Kind: kindInt},
	{Name: "conversation-num", Aliases: []string{"num-conversations", "num-sessions"}, Kind: kindInt},
	{Name: "request-timeout-seconds", Kind: kindFloat},
	{Name: "stats-interval", Kind: kindFloat},
	{Name: "random-seed", Kind: kindInt},
	{Name: "failed-request-threshold", Kind: kindFloat},
	{Name: "trajectory-start-min-ratio", Kind: kindFloat},
	{Name: "trajectory-start-max-ratio", Kind: kindFloat},
	{Name: "warmup-requests-per-lane", Kind: kindInt},
	{Name: "warmup-request-count", Aliases: []string{"num-warmup-requests"}, Kind: kindInt},
	{Name: "warmup-grace-period", Kind: kindFloat},
	{Name: "agentic-warmup-grace-period", Kind: kindFloat},
	{Name: "trace-idle-gap-cap-seconds", Kind: kindFloat},
	{Name: "system-idle-gap-cap-seconds", Kind: kindFloat},
	{Name: "use-server-token-count", Kind: kindBool},
	{Name: "extra-inputs", Kind: kindList},
	{Name: "header", Aliases: []string{"H"}, Kind: kindList},
	{Name: "api-key", Kind: kindString},
	{Name: "no-gpu-telemetry", Kind: kindBool, Note: "GPU telemetry is never collected"},
	{Name: "max-context-length", Kind: kindInt},
	{Name: "num-dataset-entries", Aliases: []string{"num-prompts"}, Kind: kindInt},
	{Name: "slice-duration", Kind: kindFloat},
	{Name: "server-metrics", Kind: kindList},
	{Name: "no-server-metrics", Kind: kindBool},
	{Name: "server-metrics-formats", Kind: kindList, Note: "json and csv are always written"},
	{Name: "output-artifact-dir", Aliases: []string{"artifact-dir"}, Kind: kindString},
	{Name: "public-dataset", Kind: kindString},
	{Name: "hf-weka-dataset", Kind: kindString},
	{Name: "input-file", Kind: kindString},
	{Name: "custom-dataset-type", Kind: kindString},
	{Name: "cache-bust", Kind: kindString},
	{Name: "ui-type", Aliases: []string{"ui"}, Kind: kindString, Note: "progress always goes to stderr"},
	{Name: "log-level", Kind: kindString, Note: "no log file is written"},
}

// SupportedFlags lists the aiperf `profile` flags the load generator
// accepts, as "--name", sorted.
func SupportedFlags() []string {
	out := make([]string, 0, len(supportedFlags))
	for _, f := range supportedFlags {
		out = append(out, "--"+f.Name)
	}
	slices.Sort(out)
	return out
}

// Supported reports whether the load generator accepts the aiperf
// `profile` flag name (primary name, with or without leading dashes) and,
// for flags accepted without effect, why.
func Supported(name string) (note string, ok bool) {
	spec, ok := lookupSpec(name)
	if !ok {
		return "", false
	}
	return spec.Note, true
}

func lookupSpec(token string) (*flagSpec, bool) {
	name := strings.TrimLeft(token, "-")
	for i := range supportedFlags {
		f := &supportedFlags[i]
		if f.Name == name || slices.Contains(f.Aliases, name) {
			return f, true
		}
	}
	return nil, false
}

// Args is a parsed `aiperf profile` argv: the fallback Flags
// implementation, limited to the flags the load generator implements.
type Args struct {
	order  []string
	values map[string][]string
}

// ArgError is a command-line error, worded like aiperf's parser.
type ArgError struct{ Msg string }

// Error returns the message.
func (e *ArgError) Error() string { return e.Msg }

// ParseArgs parses what follows the program name of an aiperf command:
// "profile" and its flags, with aiperf's rules (--flag value and
// --flag=value; bools are bare or --flag=true|false; list flags take
// several values per occurrence and accumulate; a scalar flag may appear
// once). Flags the load generator does not implement are rejected.
func ParseArgs(argv []string) (*Args, error) {
	if len(argv) == 0 || argv[0] != "profile" {
		got := "nothing"
		if len(argv) > 0 {
			got = strconv.Quote(argv[0])
		}
		return nil, &ArgError{Msg: fmt.Sprintf("want the aiperf subcommand \"profile\" first, got %s", got)}
	}
	a := &Args{values: map[string][]string{}}
	for i := 1; i < len(argv); i++ {
		tok := argv[i]
		if !strings.HasPrefix(tok, "-") || tok == "-" {
			return nil, &ArgError{Msg: fmt.Sprintf("Unused Tokens: [%q].", tok)}
		}
		name, val, hasVal := strings.Cut(tok, "=")
		spec, ok := lookupSpec(name)
		if !ok {
			return nil, &ArgError{Msg: fmt.Sprintf("Unknown option: %s. The built-in load generator implements only: %s", name, strings.Join(SupportedFlags(), " "))}
		}
		if _, seen := a.values[spec.Name]; seen && spec.Kind != kindList {
			return nil, &ArgError{Msg: fmt.Sprintf("Parameter --%s specified multiple times.", spec.Name)}
		}
		var vals []string
		switch {
		case spec.Kind == kindBool:
			v := "true"
			if hasVal {
				b, ok := parseAiperfBool(val)
				if !ok {
					return nil, &ArgError{Msg: fmt.Sprintf("Invalid value for --%s: unable to convert %q into bool.", spec.Name, val)}
				}
				v = strconv.FormatBool(b)
			}
			vals = []string{v}
		case hasVal:
			vals = []string{val}
		case spec.Kind == kindList:
			for i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
				i++
				vals = append(vals, argv[i])
			}
			if len(vals) == 0 {
				return nil, &ArgError{Msg: fmt.Sprintf("Command \"profile\" parameter --%s requires an argument.", spec.Name)}
			}
		default:
			if i+1 >= len(argv) || (strings.HasPrefix(argv[i+1], "--") && spec.Kind == kindString) {
				return nil, &ArgError{Msg: fmt.Sprintf("Command \"profile\" parameter --%s requires an argument.", spec.Name)}
			}
			i++
			vals = []string{argv[i]}
		}
		if spec.Kind == kindList && spec.Name != "extra-inputs" && spec.Name != "header" {
			var split []string
			for _, v := range vals {
				split = append(split, strings.Split(v, ",")...)
			}
			vals = split
		}
		if _, seen := a.values[spec.Name]; !seen {
			a.order = append(a.order, spec.Name)
		}
		a.values[spec.Name] = append(a.values[spec.Name], vals...)
	}
	return a, nil
}

func parseAiperfBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "true", "t", "yes", "y", "1":
		return true, true
	case "false", "f", "no", "n", "0":
		return false, true
	}
	return false, false
}

// Names lists the flags given, by primary name, in first-seen order.
func (a *Args) Names() []string { return slices.Clone(a.order) }

// Changed reports whether the flag was given.
func (a *Args) Changed(name string) bool { _, ok := a.values[name]; return ok }

func (a *Args) one(name string) (string, bool) {
	v, ok := a.values[name]
	if !ok || len(v) == 0 {
		return "", false
	}
	return v[0], true
}

// String returns a string flag's value ("" when absent).
func (a *Args) String(name string) (string, error) { v, _ := a.one(name); return v, nil }

// Int returns an int flag's value (0 when absent).
func (a *Args) Int(name string) (int, error) {
	v, ok := a.one(name)
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, &ArgError{Msg: fmt.Sprintf("Invalid value for --%s: %q is not an integer (a comma list would be a sweep, which the load generator does not run).", name, v)}
	}
	return n, nil
}

// Float returns a float flag's value (0 when absent).
func (a *Args) Float(name string) (float64, error) {
	v, ok := a.one(name)
	if !ok {
		return 0, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, &ArgError{Msg: fmt.Sprintf("Invalid value for --%s: %q is not a number.", name, v)}
	}
	return f, nil
}

// Bool returns a bool flag's value (false when absent).
func (a *Args) Bool(name string) (bool, error) { v, _ := a.one(name); return v == "true", nil }

// Strings returns every value of a list flag.
func (a *Args) Strings(name string) ([]string, error) { return slices.Clone(a.values[name]), nil }
