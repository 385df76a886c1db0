// Package matrix turns InferenceX master configs into the benchmark matrix
// and perf-changelog.yaml changes into the sweep they ask for, with the
// same rows, order, keys and values as InferenceX's
// utils/matrix_logic/generate_sweep_configs.py and
// utils/process_changelog.py (byte for byte as JSON).
//
// Generating a matrix:
//
//	masters, err := configs.LoadMasters("configs/amd-master.yaml", "configs/nvidia-master.yaml")
//	runners, err := configs.LoadRunners("configs/runners.yaml")
//	g := &matrix.Generator{Masters: masters, Runners: runners}
//	rows, err := g.TestConfig(matrix.TestConfigOptions{
//		ConfigKeys:  []string{"qwen3.5-fp8-mi325x-sglang-agentic-mtp"},
//		EvalOptions: matrix.EvalOptions{NoEvals: true},
//	})
//	for _, r := range rows { // *matrix.Row: typed fields, see Row and Kind
//		fmt.Println(r.Kind, r.TP, r.EP, r.Conc, r.ExpName)
//	}
//	out, err := rows.MarshalJSON() // exactly the bytes the Python generator prints
//
// FullSweep does the same for every config that passes its filters.
//
// Processing a changelog change:
//
//	cl, err := g.ProcessChangelog(matrix.ChangelogOptions{
//		Base: configs.Source{Name: "base", Data: oldChangelog},
//		Head: configs.Source{Name: "head", Data: newChangelog},
//	})
//	for _, b := range cl.SingleNode { // buckets "8k1k", "agentic", ...
//		for _, r := range b.Rows {
//			fmt.Println(b.Name, r.RecipeFingerprint, r.Conc)
//		}
//	}
//	out, err := cl.MarshalJSON() // exactly the bytes process_changelog.py prints
//
// (encoding/json re-compacts what a Marshaler returns, so json.Marshal
// gives the same JSON values with different spacing.)
//
// Rows are plain data: later steps plan and run them (recipes, executors).
// Fingerprint and CanonicalJSON reproduce Python's canonical JSON and the
// recipe fingerprint for any row or value.
package matrix
