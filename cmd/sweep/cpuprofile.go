package main

import (
	"os"

	"sweep/internal/cpuprofile"
)

// startCPUProfile starts the CPU profile $SWEEP_CPU_PROFILE_DIR asks for
// and returns the function that stops it.
func startCPUProfile(args []string) func() { return cpuprofile.Start(args, os.Stderr) }
