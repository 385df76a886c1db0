package run

import (
	"path/filepath"
	"slices"
	"strings"

	"sweep/internal/inputfile"
)

// EngineFlags reads the engine command recorded beside a result file (the
// point's sglang_command.txt, vllm_command.txt, ...) and returns its flags
// with their values ("" for a bare flag); nil when there is none. The
// simulated engine's wrapper (sweep sim-engine ... --) is left out.
func EngineFlags(resultFile string) map[string]string {
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(resultFile), "*_command.txt"))
	for _, f := range files {
		switch filepath.Base(f) {
		case "benchmark_command.txt", "router_command.txt", "eval_command.txt":
			continue
		}
		data, err := inputfile.Read(f, inputfile.Text)
		if err != nil {
			continue
		}
		argv, _, err := ParseCommandText(string(data))
		if err != nil {
			continue
		}
		if i := slices.Index(argv, "--"); i >= 0 && len(argv) > 1 && argv[1] == "sim-engine" {
			argv = argv[i+1:]
		}
		flags := map[string]string{}
		for i := 0; i < len(argv); i++ {
			a := argv[i]
			if !strings.HasPrefix(a, "-") {
				continue
			}
			name, val, hasVal := strings.Cut(a, "=")
			if !hasVal && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
				val = argv[i+1]
				i++
			}
			flags[name] = val
		}
		return flags
	}
	return nil
}
