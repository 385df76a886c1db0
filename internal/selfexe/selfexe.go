// Package selfexe names the sweep binary that sweep starts as its own
// sub-processes: the simulated engine and load client of a simulated
// point (sweep sim-engine, sweep loadgen, sweep sim-bfcl), the program of
// a Slurm arm job, and the binary a launch mounts into the image.
//
// It is this process's executable unless the environment variable Env
// names another: a build of the same source without the race detector
// (the tests of cmd/sweep set it so the simulated processes they start
// run at full speed), or a static build for images without glibc.
package selfexe

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Env names the sweep binary to start instead of this one.
const Env = "SWEEP_EXECUTABLE"

// Path is the absolute path of the sweep binary to start: $SWEEP_EXECUTABLE
// when set, else this process's executable.
func Path() (string, error) {
	p := os.Getenv(Env)
	if p == "" {
		return os.Executable()
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("%s=%s: %w", Env, p, err)
	}
	if st, err := os.Stat(abs); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s=%s: not an executable file (unset it to use this sweep)", Env, p)
	}
	return abs, nil
}

// Without is env (NAME=VALUE pairs) without Env: for a process that runs
// sweep elsewhere (a Slurm job, a container), where this host's
// $SWEEP_EXECUTABLE names nothing; Slurm's srun --export=ALL,NAME=VALUE
// does not override a variable already in its environment.
func Without(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, Env+"=") {
			out = append(out, kv)
		}
	}
	return out
}
