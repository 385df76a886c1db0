package metrics

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseText feeds arbitrary pages to the Prometheus parser, with and
// without family filtering: an error or a snapshot, never a panic.
func FuzzParseText(f *testing.F) {
	for _, n := range []string{"sglang_after.prom", "malformed.prom"} {
		if b, err := os.ReadFile(filepath.Join(promDir, n)); err == nil {
			f.Add(b[:min(len(b), 8192)])
		}
	}
	f.Add([]byte("# TYPE vllm:x counter\nvllm:x_total{a=\"b\"} 1e308\n"))
	f.Fuzz(func(t *testing.T, page []byte) {
		s, err := ParseText(bytes.NewReader(page), "fuzz")
		if err == nil {
			_, _ = s.Sum("sglang:num_requests_total", nil)
		}
		_, _ = ParseText(bytes.NewReader(page), "fuzz", KeepFamilies("sglang:num_requests", "vllm:x"))
	})
}
