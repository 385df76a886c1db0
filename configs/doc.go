// Package configs loads and checks InferenceX-format config files: the
// master configs (amd-master.yaml, nvidia-master.yaml), runners.yaml,
// perf-changelog.yaml and the golden acceptance-length curves, plus the
// project's own accuracy A/B legs (configs/ab/*.yaml, ABLeg).
//
// Files are read as yaml.v3 nodes, never straight into structs, so every
// problem is a *Error with file:line:col, the dotted key path, what is wrong
// and what is allowed. Loaders do not stop at the first problem: they return
// all of them joined with errors.Join, sorted by file and line; Errors
// flattens such an error back into []*Error.
//
// The rules are InferenceX's (utils/matrix_logic/validation.py and
// utils/validate_perf_changelog.py at the conformance commit) plus a few
// stricter ones that catch certain mistakes early: duplicate YAML keys,
// YAML 1.1 booleans in string fields, empty or repeated concurrencies,
// agentic entries whose shape does not match multinode, DRAM offload on a
// runner without hardware facts. The project's own configs/*.yaml are
// compiled in (Embedded, DefaultMasters, DefaultRunners, DefaultGoldenAL) so
// commands work from any directory, and so is window-provenance.csv
// (DefaultWindowProvenance): where each planned single-node agentic key's
// official windows came from by InferenceX's own account (chosen at a
// measured knee, configs.WindowAtKnee, or a hard cap, a mirrored grid,
// ...), which sweep sim agreement prints and counts by.
//
// Typical use:
//
//	masters, err := configs.LoadMasters("configs/amd-master.yaml", "configs/nvidia-master.yaml")
//	if err != nil {
//		for _, e := range configs.Errors(err) {
//			fmt.Println(e) // file:line:col: key.path: what is wrong; what is allowed
//		}
//		return err
//	}
//	runners, err := configs.LoadRunners("configs/runners.yaml")
//	entry, ok := masters.Lookup("qwen3.5-fp8-mi325x-sglang-agentic-mtp")
//
//	entries, err := configs.ParseChangelog("perf-changelog.yaml", data)
//	change, err := configs.CheckChangelogChange(
//		configs.Source{Name: "origin/main:perf-changelog.yaml", Data: old},
//		configs.Source{Name: "perf-changelog.yaml", Data: data})
//	// change.Added: the appended entries
//
//	report := configs.Validate(configs.ValidateInput{Masters: srcs, Runners: rsrc, Changelog: &csrc})
//	// report.Problems: every problem in every file ("sweep validate")
//
//	leg, err := configs.DefaultABLeg("minimaxm3-mi325x-smg") // or LoadABLeg(file)
//	// leg.Model, leg.Categories, leg.Arms[0].ConfigKey, leg.Simulate, ...
//
//	golden, err := configs.DefaultGoldenAL()
//	set, _ := golden.Set("qwen3.5_mtp")
//	al, ok := set.AL("qwen3.5-397b-a17b-nvfp4", configs.ThinkingOn, 3) // 3.39
//
//	windows, err := configs.DefaultWindowProvenance()
//	// windows[0].Key, windows[0].Provenance ("knee"), windows[0].Evidence
package configs
