package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The speed guard on matrix generation as a user runs it: one whole
// `sweep matrix full-sweep` process over InferenceX's configs (start-up,
// loading, generation and 1 MB of JSON) against one run of InferenceX's
// utils/matrix_logic/generate_sweep_configs.py full-sweep on the same
// files, which prints the same bytes. The guard is 30x; compare the two
// ns/op figures back to back on a quiet machine:
//
//	git --git-dir=<fetched InferenceX git dir> archive 843c6254f utils | tar -x -C /tmp/ix
//	SWEEP_BENCH_INFERENCEX=/tmp/ix go test -run '^$' -bench 'MatrixFullSweepProcess' -benchtime 10x ./cmd/sweep

// fullSweepArgs are the generator arguments both benchmarks pass.
func fullSweepArgs() []string {
	return append(append([]string{"full-sweep", "--config-files"}, ixMasters...), "--runner-config", ixRunners)
}

// BenchmarkMatrixFullSweepProcess runs the sweep binary once per
// iteration (built once, outside the timer).
func BenchmarkMatrixFullSweepProcess(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "sweep")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	args := append([]string{"matrix"}, fullSweepArgs()...)
	b.ResetTimer()
	for range b.N {
		cmd := exec.Command(bin, args...)
		if out, err := cmd.Output(); err != nil || len(out) < 1<<20 {
			b.Fatalf("sweep matrix full-sweep: %v (%d bytes)", err, len(out))
		}
	}
}

// BenchmarkMatrixFullSweepProcessPython runs InferenceX's generator once
// per iteration; SWEEP_BENCH_INFERENCEX names a tree holding its utils/
// (skipped otherwise: the benchmark needs Python with PyYAML and pydantic).
func BenchmarkMatrixFullSweepProcessPython(b *testing.B) {
	ix := os.Getenv("SWEEP_BENCH_INFERENCEX")
	if ix == "" {
		b.Skip("set SWEEP_BENCH_INFERENCEX to an InferenceX tree (843c6254f utils/) to time its generator")
	}
	script := filepath.Join(ix, "utils", "matrix_logic", "generate_sweep_configs.py")
	args := append([]string{script}, fullSweepArgs()...)
	b.ResetTimer()
	for range b.N {
		if out, err := exec.Command("python3", args...).Output(); err != nil || len(out) < 1<<20 {
			b.Fatalf("generate_sweep_configs.py full-sweep: %v (%d bytes)", err, len(out))
		}
	}
}
