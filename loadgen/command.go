package loadgen

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"sweep/recipes/schema"
)

// DefaultSchema is the aiperf flag schema a command line is read with
// when the caller names none: InferenceX pins the SemiAnalysis fork,
// whose --warmup-requests-per-lane upstream 0.12.0 does not have.
const DefaultSchema = "aiperf@sa-754356e9"

// Flags is the parsed `aiperf profile` command line the load generator
// reads its options from. Names are aiperf's long flag names without the
// leading dashes; any long spelling works ("model-names" or "model").
// ParseCommand
// and FlagsFromParsed return the implementation backed by the aiperf
// flag schema (recipes/schema).
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

// supportedFlag is one aiperf `profile` flag the load generator
// implements, or accepts without effect (Note says why).
type supportedFlag struct {
	Name string // canonical name in the aiperf schema, without dashes
	Note string // "" = implemented
}

// supportedFlags is every aiperf `profile` flag the built-in load
// generator accepts: the InferenceX AgentX replay command's flags
// (inferencex.md §4.5) plus a few common ones. How each is spelled and
// parsed is the aiperf schema's business; every other flag the schema
// accepts is rejected by CheckSupported.
var supportedFlags = []supportedFlag{
	{Name: "scenario"},
	{Name: "unsafe-override"},
	{Name: "url"},
	{Name: "custom-endpoint"},
	{Name: "endpoint-type"},
	{Name: "streaming"},
	{Name: "model-names"},
	{Name: "tokenizer", Note: "recorded only: tokens are counted by the server (--use-server-token-count) or estimated as words"},
	{Name: "tokenizer-trust-remote-code", Note: "no tokenizer is loaded"},
	{Name: "apply-chat-template", Note: "the chat endpoint applies the template server-side"},
	{Name: "concurrency"},
	{Name: "benchmark-duration"},
	{Name: "benchmark-grace-period"},
	{Name: "request-count"},
	{Name: "conversation-num"},
	{Name: "request-timeout-seconds"},
	{Name: "stats-interval"},
	{Name: "random-seed"},
	{Name: "failed-request-threshold"},
	{Name: "trajectory-start-min-ratio"},
	{Name: "trajectory-start-max-ratio"},
	{Name: "warmup-requests-per-lane"},
	{Name: "warmup-request-count"},
	{Name: "warmup-grace-period"},
	{Name: "agentic-warmup-grace-period"},
	{Name: "trace-idle-gap-cap-seconds"},
	{Name: "system-idle-gap-cap-seconds"},
	{Name: "use-server-token-count"},
	{Name: "extra-inputs"},
	{Name: "header"},
	{Name: "api-key"},
	{Name: "no-gpu-telemetry", Note: "GPU telemetry is never collected"},
	{Name: "max-context-length"},
	{Name: "num-dataset-entries"},
	{Name: "slice-duration"},
	{Name: "server-metrics"},
	{Name: "no-server-metrics"},
	{Name: "server-metrics-formats", Note: "json and csv are always written"},
	{Name: "output-artifact-dir"},
	{Name: "public-dataset"},
	{Name: "hf-weka-dataset"},
	{Name: "input-file"},
	{Name: "custom-dataset-type"},
	{Name: "cache-bust"},
	{Name: "ui-type", Note: "progress always goes to stderr"},
	{Name: "log-level", Note: "no log file is written"},
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
// `profile` flag (canonical name, with or without leading dashes) and,
// for flags accepted without effect, why.
func Supported(name string) (note string, ok bool) {
	name = strings.TrimLeft(name, "-")
	for _, f := range supportedFlags {
		if f.Name == name {
			return f.Note, true
		}
	}
	return "", false
}

// ParseCommand reads argv ("profile", then aiperf flags; the program
// name already removed) with the aiperf flag schema ref (TOOL@VERSION or
// TOOL; "" means DefaultSchema) from the embedded catalog, so the argv
// gets aiperf's own verdict, then checks with CheckSupported that every
// flag given is one the load generator implements. The schema's
// warnings (deprecated flags, scenario locks waived by
// --unsafe-override) are returned for the caller to print; a rejected
// argv returns the schema's *schema.Error problems, joined.
func ParseCommand(argv []string, ref string) (Flags, []*schema.Error, error) {
	if ref == "" {
		ref = DefaultSchema
	}
	cat, err := schema.Embedded()
	if err != nil {
		return nil, nil, err
	}
	s, err := cat.Resolve(ref)
	if err != nil {
		return nil, nil, err
	}
	if s.Tool != "aiperf" {
		return nil, nil, fmt.Errorf("schema %s is not an aiperf schema", s.ID())
	}
	p, err := s.Parse(argv)
	if err != nil {
		return nil, nil, err
	}
	if p.Help {
		return nil, nil, errors.New("aiperf --help is not a run: use sweep loadgen --help")
	}
	if err := CheckSupported(p); err != nil {
		return nil, nil, err
	}
	return FlagsFromParsed(p), p.Warnings, nil
}

// CheckSupported rejects the flags of a schema-parsed aiperf argv that
// the load generator does not implement, naming them all in one error.
func CheckSupported(p *schema.Parsed) error {
	var unsupported []string
	for _, name := range p.Flags() {
		if _, ok := Supported(name); !ok {
			unsupported = append(unsupported, name)
		}
	}
	if len(unsupported) == 0 {
		return nil
	}
	return fmt.Errorf("%s accepts %s, but the built-in load generator does not implement it; use the real aiperf (sweep run --aiperf PATH) or drop the flag",
		p.Schema.ID(), strings.Join(unsupported, ", "))
}

// FlagsFromParsed gives typed access to a schema-parsed aiperf argv. It
// does not check the flags against the supported list (CheckSupported
// does).
func FlagsFromParsed(p *schema.Parsed) Flags { return parsedFlags{p} }

// parsedFlags is Flags over a schema-parsed argv. Values were typed and
// bounds-checked by the schema, so the accessors fail only where the
// load generator is narrower than aiperf (a comma sweep).
type parsedFlags struct{ p *schema.Parsed }

func dashed(name string) string { return "--" + strings.TrimLeft(name, "-") }

func (f parsedFlags) Changed(name string) bool { return f.p.Has(dashed(name)) }

func (f parsedFlags) String(name string) (string, error) {
	v, _ := f.p.String(dashed(name))
	return v, nil
}

func (f parsedFlags) Int(name string) (int, error) {
	if vs := f.p.Ints(dashed(name)); len(vs) > 1 {
		return 0, sweepError(name, len(vs))
	}
	v, _ := f.p.Int(dashed(name))
	return int(v), nil
}

func (f parsedFlags) Float(name string) (float64, error) {
	if vs := f.p.Floats(dashed(name)); len(vs) > 1 {
		return 0, sweepError(name, len(vs))
	}
	v, _ := f.p.Float(dashed(name))
	return v, nil
}

func (f parsedFlags) Bool(name string) (bool, error) {
	v, _ := f.p.Bool(dashed(name))
	return v, nil
}

func (f parsedFlags) Strings(name string) ([]string, error) { return f.p.Strings(dashed(name)), nil }

func sweepError(name string, n int) error {
	return &ArgError{Msg: fmt.Sprintf("--%s: a comma list of %d values is an aiperf sweep; the load generator runs one value", strings.TrimLeft(name, "-"), n)}
}

// ArgError is a problem with a command line that the aiperf schema
// accepts but the load generator cannot run, worded like aiperf's
// messages where aiperf has one.
type ArgError struct{ Msg string }

// Error returns the message.
func (e *ArgError) Error() string { return e.Msg }
