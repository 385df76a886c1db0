package run

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"sweep/internal/inputfile"
	"sweep/recipes"
	"sweep/recipes/schema"
	"sweep/simengine"
)

// RecordedCommand is the engine command recorded beside a result file:
// the real engine's argv (the simulated engine's wrapper, sweep
// sim-engine ... --, left out), the --unchecked FLAG:N specs that wrapper
// passed (flags the plan passes without a schema check), and the
// exported environment. Files, for a planned command
// (PlannedEngineCommand), are the point's sidecar files, not written
// (simengine.CommandLine.Files); a recorded one has none (they are on
// the disk).
type RecordedCommand struct {
	Argv      []string
	Unchecked []string
	Env       map[string]string
	Files     []recipes.File
}

// SimConfig is the simulated engine's configuration for the command, read
// as the simulated engine reads it (with the calibration its environment
// names); lenient reads flags its schema does not know past.
func (c RecordedCommand) SimConfig(lenient bool) (simengine.Config, error) {
	cl := simengine.CommandLine{Argv: c.Argv, Unchecked: c.Unchecked, Env: c.Env, Files: c.Files, Lenient: lenient}
	return cl.Config(nil)
}

// EngineCommand reads the engine command recorded beside a result file
// (the point's sglang_command.txt, vllm_command.txt, server_command.txt,
// ...); ok is false when there is none that can be read. A Mooncake
// store's config its environment names (simengine.EnvMooncakeConfig)
// that is not where it was recorded (results copied elsewhere; a real
// run's container path) is the one beside the result, where the point
// runner writes it (besideLoad), when that one is there.
func EngineCommand(resultFile string) (cmd RecordedCommand, ok bool) {
	dir := filepath.Dir(resultFile)
	files, _ := filepath.Glob(filepath.Join(dir, "*_command.txt"))
	for _, f := range files {
		switch filepath.Base(f) {
		case "benchmark_command.txt", "router_command.txt", "eval_command.txt":
			continue
		}
		if cmd, err := ReadCommandFile(f); err == nil {
			if path := cmd.Env[simengine.EnvMooncakeConfig]; path != "" && !exists(path) && exists(filepath.Join(dir, filepath.Base(path))) {
				cmd.Env[simengine.EnvMooncakeConfig] = filepath.Join(dir, filepath.Base(path))
			}
			return cmd, true
		}
	}
	return RecordedCommand{}, false
}

// exists reports whether path names a file.
func exists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// ReadCommandFile reads one command file sweep writes beside a point
// (sglang_command.txt, a disaggregated point's prefill0_command.txt and
// decode0_command.txt, ...): the engine's argv and environment, a
// simulated engine's wrapper and --unchecked specs apart.
func ReadCommandFile(path string) (RecordedCommand, error) {
	data, err := inputfile.Read(path, inputfile.Text)
	if err != nil {
		return RecordedCommand{}, err
	}
	argv, env, err := ParseCommandText(string(data))
	if err != nil {
		return RecordedCommand{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(argv) == 0 {
		return RecordedCommand{}, fmt.Errorf("%s: no command: want the command line sweep writes beside a point", path)
	}
	cmd := RecordedCommand{Argv: argv, Env: env}
	if engine, unchecked, ok := simEngineArgv(argv); ok {
		cmd.Argv, cmd.Unchecked = engine, unchecked
	}
	return cmd, nil
}

// simEngineArgv splits a simulated engine's process argv (`EXE
// sim-engine [--unchecked FLAG:N]... -- ENGINE ARGV`, as simulateEngine
// makes it) into the real engine's argv and the --unchecked specs; ok is
// false for any other argv.
func simEngineArgv(argv []string) (engine, unchecked []string, ok bool) {
	dash := slices.Index(argv, "--")
	if len(argv) < 2 || argv[1] != "sim-engine" || dash < 0 {
		return nil, nil, false
	}
	for i := 2; i+1 < dash; i++ {
		if argv[i] == "--unchecked" {
			unchecked = append(unchecked, argv[i+1])
			i++
		}
	}
	return argv[dash+1:], unchecked, true
}

// EngineFlags reads the engine command recorded beside a result file
// (EngineCommand) and returns its flags with their values ("" for a bare
// flag), keyed as engineValues keys them; nil when there is none.
func EngineFlags(resultFile string) map[string]string {
	cmd, ok := EngineCommand(resultFile)
	if !ok {
		return nil
	}
	return engineValues(cmd.Argv)
}

// engineValues is an engine argv's flags with their values ("" for a
// bare flag), read as the engine reads it: with the schema of its
// program (schema.OfProgram; the command names no version, and versions
// hardly differ in how they read), abbreviations included where the
// engine takes them, so that each flag keys by its canonical name
// ("--max-running-req 8" is --max-running-requests to SGLang) and the
// program is no flag. An argv of a program without a schema keys its
// flags as spelt.
func engineValues(argv []string) map[string]string {
	return schema.ReadArgv(argv, schema.ArgvOptions{Schema: schema.OfProgram(argv), Abbrev: true}).Values()
}

// VolatileFlags are engine flags that change from run to run without
// changing what is served (ports and addresses): neither sweep compare
// nor a point's rerun (MadeDiff) counts them as a difference.
var VolatileFlags = []string{"--port", "--host", "--prometheus-port", "--dist-init-addr", "--nccl-port", "--master-port"}
