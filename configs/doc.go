// Package configs loads and checks InferenceX-format config files: the
// master configs (amd-master.yaml, nvidia-master.yaml), runners.yaml and
// perf-changelog.yaml. Files are read as yaml.v3 nodes so that every
// problem is reported as a *Error with file:line:col, the key path, what is
// wrong and what is allowed; loaders report every problem in one pass.
//
// Typical use:
//
//	masters, err := configs.LoadMasters("configs/amd-master.yaml", "configs/nvidia-master.yaml")
//	if err != nil {
//		for _, e := range configs.Errors(err) { fmt.Println(e) } // file:line:col: key: msg
//	}
//	runners, err := configs.LoadRunners("configs/runners.yaml")
//	entries, err := configs.ParseChangelog("perf-changelog.yaml", data)
//	entry, ok := masters.Lookup("qwen3.5-fp8-mi325x-sglang-agentic-mtp")
package configs
