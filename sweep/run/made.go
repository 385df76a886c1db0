package run

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"sweep/internal/redact"
	"sweep/metrics/result"
	"sweep/recipes/schema"
)

// Made is how a point's result is made, as its run.json records it: by
// sweep's simulated engine (with its settings) or a real one, with which
// client and client command (its benchmark duration, warm-up, ...), with
// which engine command and image. A point completed in a directory is
// the point a new run asks for only when it was made the same way
// (ClaimOutDir): a simulated result is never a real run's, nor one of
// another client, another length or warm-up, or other engine flags.
type Made struct {
	// Simulated says the simulated engine makes the result; Simulation
	// is its settings (nil: not compared).
	Simulated  bool
	Simulation *result.Simulation
	// Client is the load client (nil: not known before the run, as of a
	// launched point's, whose image picks it; not compared).
	Client *result.Client
	// ClientName and ClientArgv are the client process's name and argv:
	// its aiperf profile flags are compared (the built-in client's
	// wrapper, sweep loadgen ... --, and aiperf's program, which Client
	// names, are left out, as are volatileClientFlags); nil ClientArgv:
	// not compared.
	ClientName string
	ClientArgv []string
	// EngineName and Engine are the engine process's name and argv (the
	// simulated engine's wrapper, sweep sim-engine ... --, is left out
	// when compared); nil Engine: not compared.
	EngineName string
	Engine     []string
	// Image is the container image of the point ("": not compared).
	Image string
}

// SpecMade is how spec makes its point.
func SpecMade(spec Spec) Made {
	m := Made{Simulated: spec.Simulation != nil, Simulation: spec.Simulation, Client: spec.ClientInfo,
		EngineName: spec.Engine.Name, Engine: spec.Engine.Argv, Image: spec.Facts.Image}
	if spec.Client != nil {
		m.ClientName, m.ClientArgv = spec.Client.Name, spec.Client.Argv
	}
	return m
}

// MadeDiff lists how the point rec records was made otherwise than now
// would make it, each difference as "what: recorded, now new"; none when
// they agree on everything both say.
func MadeDiff(rec *Record, now Made) []string {
	var diffs []string
	add := func(what, was, is string) {
		diffs = append(diffs, fmt.Sprintf("%s: %s, now %s", what, was, is))
	}
	if was := rec.Simulation != nil; was != now.Simulated {
		add("engine", engineKind(rec.Simulation), engineKind(now.Simulation))
	} else if was && now.Simulation != nil {
		for _, d := range simDiff(rec.Simulation, now.Simulation) {
			add(d[0], d[1], d[2])
		}
	}
	if c := rec.Client; c != nil && now.Client != nil {
		if was, is := clientText(c), clientText(now.Client); was != is {
			add("client", was, is)
		}
	}
	if now.ClientArgv != nil {
		if p := rec.Processes[now.ClientName]; p != nil {
			for _, d := range flagDiff(clientFlags(p.Argv), clientFlags(now.ClientArgv)) {
				add("client flag "+d[0], d[1], d[2])
			}
		}
	}
	if now.Engine != nil {
		if p := rec.Processes[now.EngineName]; p != nil {
			for _, d := range flagDiff(stableFlags(p.Argv), stableFlags(now.Engine)) {
				add("engine flag "+d[0], d[1], d[2])
			}
		}
	}
	if rec.Facts != nil && rec.Facts.Image != "" && now.Image != "" && rec.Facts.Image != now.Image {
		add("image", rec.Facts.Image, now.Image)
	}
	return diffs
}

// engineKind names a simulation's engine: sweep's simulated one with its
// GPU and clock, or a real one (sim nil).
func engineKind(sim *result.Simulation) string {
	switch {
	case sim == nil:
		return "a real engine"
	case sim.Clock == "virtual":
		return fmt.Sprintf("simulated on %s, virtual clock", sim.GPU)
	default:
		return fmt.Sprintf("simulated on %s, time scale %gx", sim.GPU, sim.TimeScale)
	}
}

// simDiff lists the settings two simulations differ in: {what, a, b}.
func simDiff(a, b *result.Simulation) [][3]string {
	var out [][3]string
	cmpText := func(what, x, y string) {
		if x != y {
			out = append(out, [3]string{what, orNone(x), orNone(y)})
		}
	}
	cmpText("simulated GPU", a.GPU, b.GPU)
	cmpText("simulated clock", a.Clock, b.Clock)
	if a.Clock == b.Clock && a.Clock != "virtual" {
		cmpText("time scale", fmt.Sprintf("%gx", a.TimeScale), fmt.Sprintf("%gx", b.TimeScale))
	}
	cmpText("simulation seed", fmt.Sprint(a.Seed), fmt.Sprint(b.Seed))
	cmpText("simulated faults", a.Faults, b.Faults)
	calFile := func(c *result.SimCalibration) string {
		if c == nil {
			return ""
		}
		return c.File
	}
	cmpText("sim calibration", calFile(a.Calibration), calFile(b.Calibration))
	return out
}

func orNone(s string) string { return cmp.Or(s, "none") }

// clientText is what names a client's make: its name, program and flag
// schema (not the aiperf version its artifacts report, known only after).
func clientText(c *result.Client) string {
	s := c.Name
	if c.Program != "" {
		s += " (" + c.Program + ")"
	}
	if c.Schema != "" {
		s += " for " + c.Schema
	}
	return s
}

// stableFlags is an engine argv's flags ("" for a bare flag; read as
// the engine reads them, engineValues), the simulated engine's wrapper
// left out, secrets redacted as a record redacts them, and without
// VolatileFlags.
func stableFlags(argv []string) map[string]string {
	if engine, _, ok := simEngineArgv(argv); ok {
		argv = engine
	}
	flags := engineValues(redact.Argv(argv))
	for _, name := range VolatileFlags {
		delete(flags, name)
	}
	return flags
}

// volatileClientFlags are client flags that change from run to run of
// the same point without changing what it measures: the engine's URLs
// (a port) and where the artifacts go (the directory's path).
var volatileClientFlags = []string{"--url", "--server-metrics", "--output-artifact-dir"}

// clientFlags is a client argv's aiperf profile flags ("" for a bare
// flag): those after its profile subcommand, aiperf's or the built-in
// client's (sweep loadgen ... -- profile), read as aiperf reads them,
// as engineValues reads an engine's: with aiperf's default schema (the
// versions hardly differ in how they read), so that each flag keys by
// its canonical name ("--benchmark_duration" and "--benchmark-duration"
// are one flag; a flag the schema does not know keys as spelt); secrets
// redacted as a record redacts them, and without volatileClientFlags.
func clientFlags(argv []string) map[string]string {
	if i := slices.Index(argv, "profile"); i >= 0 {
		argv = argv[i+1:]
	}
	// Without the catalog (it is embedded), flags key as spelt.
	sch, _ := schema.Load("aiperf", "")
	flags := schema.ReadArgv(redact.Argv(argv), schema.ArgvOptions{Schema: sch, Abbrev: true}).Values()
	for _, name := range volatileClientFlags {
		delete(flags, name)
	}
	return flags
}

// flagDiff lists how the flags differ from a to b: {flag, a's, b's},
// sorted by flag; a flag one side lacks is "absent".
func flagDiff(a, b map[string]string) [][3]string {
	var out [][3]string
	for _, k := range slices.Sorted(maps.Keys(joinKeys(a, b))) {
		va, oka := a[k]
		vb, okb := b[k]
		if oka == okb && va == vb {
			continue
		}
		out = append(out, [3]string{k, flagValue(va, oka), flagValue(vb, okb)})
	}
	return out
}

func joinKeys(a, b map[string]string) map[string]bool {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return keys
}

func flagValue(v string, ok bool) string {
	switch {
	case !ok:
		return "absent"
	case v == "":
		return "set"
	}
	return strings.TrimSpace(v)
}

// FlagDiff lists how the flags of two argvs differ, from a to b: {flag,
// a's, b's} sorted by flag, a flag one side lacks "absent", a bare flag
// "set"; each read as its tool reads it (engineValues: the schema of its
// program, its abbreviations, a flag keyed by its canonical name),
// secret values redacted first (VolatileFlags are compared: leave them
// out of the argvs when they do not matter).
func FlagDiff(a, b []string) [][3]string {
	values := func(argv []string) map[string]string {
		return engineValues(redact.Argv(argv))
	}
	return flagDiff(values(a), values(b))
}
