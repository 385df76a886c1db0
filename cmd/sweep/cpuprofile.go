package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
)

// cpuProfileEnv names a directory: every sweep process started with it
// set (the runner's engine, router and load generator included) writes a
// CPU profile there, cpu-<command>-<pid>.pprof, for `go tool pprof`.
const cpuProfileEnv = "SWEEP_CPU_PROFILE_DIR"

// startCPUProfile starts profiling when $SWEEP_CPU_PROFILE_DIR is set and
// returns the function that stops it.
func startCPUProfile(args []string) func() {
	dir := os.Getenv(cpuProfileEnv)
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
		fmt.Fprintf(os.Stderr, "sweep: $%s: %v\n", cpuProfileEnv, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}
