package loadgen

import (
	"io"
	"path/filepath"
	"testing"
	"time"
	"fmt"
	"os"
)

func TestZZDebug(t *testing.T) {
	run := func(t *testing.T) jsonObj {
		cfg := qwenSimConfig()
		cfg.Virtual = true
		o := virtualOptions(t, startSimEngine(t, cfg))
		o.Concurrency = 16
		if os.Getenv("NOCAP") != "" { o.SystemIdleCap = 0 }
		o.BenchmarkDuration = 600 * time.Second
		res, err := Run(t.Context(), o, io.Discard)
		if err != nil { t.Fatal(err) }
		fmt.Println("counts", res.Warmup, res.Profiling)
		b, _ := os.ReadFile(filepath.Join(o.ArtifactDir, RecordsFile))
		os.WriteFile(fmt.Sprintf("/tmp/v1/rec-%d.jsonl", time.Now().UnixNano()), b, 0o644)
		return readJSON(t, filepath.Join(o.ArtifactDir, SummaryFile))
	}
	a := numbers(run(t))
	hogCPU(t)
	b := numbers(run(t))
	n := 0
	for k, v := range a {
		if b[k] != v {
			n++
			if n < 20 { fmt.Println(k, v, b[k]) }
		}
	}
	fmt.Println("diffs", n)
}
