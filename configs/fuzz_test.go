package configs

import (
	"os"
	"testing"
)

// FuzzParseMasters feeds arbitrary YAML to the master-config loader: it
// must return (configs or errors naming a position), never panic or hang.
func FuzzParseMasters(f *testing.F) {
	for _, p := range []string{"amd-master.yaml", "nvidia-master.yaml"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b[:min(len(b), 4096)])
		}
	}
	f.Add([]byte(mergeBomb(8)))
	f.Add([]byte("a: &a\n  x: 1\n  <<: *a\n"))
	f.Add([]byte("k:\n  - [*x]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return
		}
		m, err := ParseMasters(Source{Name: "fuzz.yaml", Data: data})
		if err == nil && m == nil {
			t.Fatal("no configs and no error")
		}
	})
}
