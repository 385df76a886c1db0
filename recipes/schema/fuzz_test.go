package schema

import (
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary command lines to every schema: Parse must not panic, and a
// command it accepts must parse again, unchanged, from its normalised form.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"profile --model m --concurrency 8,16 --streaming=false",
		"profile --scenario inferencex-agentx-mvp --public-dataset weka_hf --unsafe-override",
		"serve m -tp 8 --compilation-config.mode 3 -O3 --no-enable-prefix-caching",
		"--model-path m --tp 2 --enable-dp --chunked-prefill-size -1 -- x",
		"profile --url a b --extra-inputs ignore_eos:false --no-auto-plot=1",
	} {
		f.Add(seed)
	}
	c, err := Embedded()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line string) {
		argv := strings.Fields(line)
		for _, s := range c.All() {
			p, err := s.Parse(argv)
			if err != nil || p.Help {
				continue
			}
			again, err := s.Parse(p.Args())
			if err != nil {
				t.Fatalf("%s: %q normalised to %q, which fails: %v", s.ID(), argv, p.Args(), err)
			}
			if got, want := strings.Join(again.Args(), " "), strings.Join(p.Args(), " "); got != want {
				t.Fatalf("%s: normalising twice changed %q to %q", s.ID(), want, got)
			}
		}
	})
}
