package simengine

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	"sweep/configs"
	"sweep/internal/redact"
	"sweep/internal/simproto"
	"sweep/recipes"
	"sweep/recipes/schema"
)

// SimulatedSnapshot is the model snapshot revision a simulated engine is
// given in place of recipes.HFSnapshotPlaceholder: it loads no weights, so
// no HF cache is read.
const SimulatedSnapshot = "simulated"

// PlannedCommandLine is the command line a simulated run of a planned
// point starts its engine with (sweep run --simulate, sweep discover
// --simulate; sweep sim calibrate's planned commands): the engine's argv
// with its model snapshot's revision SimulatedSnapshot, the --unchecked
// specs of the plan's escapes (UncheckedSpecs), the planned environment
// with the point's sidecars' commands (SidecarsEnv) and the GPU its
// runner names (configs.GPUOfRunner), and the point's sidecar files
// (recipes.Sidecar.Files, such as the Mooncake store's config that
// MOONCAKE_CONFIG_PATH names) in Files: Config reads them from there, so
// a planned engine is read as it will run before any file is written
// (sweep sim calibrate's planned commands, a calibrated run's record at
// plan time), and nothing is written here. The point runner writes them
// where the plan puts them before the engine starts, which reads them
// from the disk: a file missing there fails its start.
func PlannedCommandLine(p *recipes.Point) (CommandLine, error) {
	argv := make([]string, len(p.Engine.Argv))
	for i, a := range p.Engine.Argv {
		argv[i] = strings.ReplaceAll(a, "/snapshots/"+recipes.HFSnapshotPlaceholder, "/snapshots/"+SimulatedSnapshot)
	}
	env := maps.Clone(p.Engine.Env)
	if env == nil {
		env = map[string]string{}
	}
	sidecars, err := SidecarsEnv(p.Sidecars)
	if err != nil {
		return CommandLine{}, err
	}
	if sidecars != "" {
		env[simproto.EnvSidecars] = sidecars
	}
	var files []recipes.File
	for _, sc := range p.Sidecars {
		files = append(files, sc.Files...)
	}
	return CommandLine{Argv: argv, Unchecked: UncheckedSpecs(p.Escapes, p.Engine.Argv), Env: env, Files: files, GPU: configs.GPUOfRunner(p.Row.Runner)}, nil
}

// UncheckedSpecs are the FLAG:N specs (CommandLine.Unchecked, sim-engine's
// --unchecked) of the plan's escapes that are flags of argv (given as
// FLAG VALUE or FLAG=VALUE), each once: the simulated engine accepts the
// flags the plan passed without a schema check, as the real engine would.
func UncheckedSpecs(escapes []schema.Escape, argv []string) []string {
	var out []string
	seen := map[string]bool{}
	given := schema.ReadArgv(argv, schema.ArgvOptions{})
	for _, e := range escapes {
		if _, ok := given.Find(e.Flag); ok && strings.HasPrefix(e.Flag, "-") && !seen[e.Flag] {
			seen[e.Flag] = true
			out = append(out, e.Flag+":"+strconv.Itoa(len(e.Values)))
		}
	}
	return out
}

// SidecarsEnv is the value of simproto.EnvSidecars that hands a simulated
// engine the commands of the point's sidecars, which a simulated run does
// not start: the engine reads from them what the real one learns from
// its servers (an LMCache server's L1 size). Secret flag values are
// redacted, as in the command files that record the environment. "" for
// a point without sidecars.
func SidecarsEnv(sidecars []recipes.Sidecar) (string, error) {
	if len(sidecars) == 0 {
		return "", nil
	}
	argvs := make([][]string, len(sidecars))
	for i, sc := range sidecars {
		argvs[i] = redact.Argv(sc.Command.Argv)
	}
	v, err := simproto.Sidecars(argvs)
	if err != nil {
		return "", fmt.Errorf("sidecars of the simulated engine: %w", err)
	}
	return v, nil
}
