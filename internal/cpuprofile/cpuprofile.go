// Package cpuprofile profiles a sweep process's CPU when its environment
// asks for it, so that every process of a point (the runner, the engine,
// router and load generator it starts) can be profiled together.
package cpuprofile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
)

// Env names a directory: every sweep process started with it set writes
// a CPU profile there, cpu-<command>-<pid>.pprof, for `go tool pprof`.
const Env = "SWEEP_CPU_PROFILE_DIR"

// Start starts profiling when $SWEEP_CPU_PROFILE_DIR is set (the file is
// named for the command, args[0]) and returns the function that stops
// it; a profile that cannot start is reported on errOut and skipped.
func Start(args []string, errOut io.Writer) func() {
	dir := os.Getenv(Env)
	if dir == "" {
		return func() {}
	}
	name := "sweep"
	if len(args) > 0 {
		name = filepath.Base(args[0])
	}
	f, err := os.Create(filepath.Join(dir, "cpu-"+name+"-"+strconv.Itoa(os.Getpid())+".pprof"))
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(errOut, "sweep: $%s: %v\n", Env, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}
