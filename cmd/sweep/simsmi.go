package main

import "path/filepath"

// simulatedSMI reports whether sweep was started under the name of a GPU
// tool: the point runner links nvidia-smi or amd-smi to the sweep binary
// in a directory first on a simulated point's monitor PATH, and the
// simulated engine's telemetry answers (simengine.SMI).
func simulatedSMI(argv0 string) (string, bool) {
	switch tool := filepath.Base(argv0); tool {
	case "nvidia-smi", "amd-smi":
		return tool, true
	}
	return "", false
}
