package schema

// Parse reads argv (everything after the program name: for aiperf it starts with
// "profile", for vLLM with "serve") with the schema. It returns the parsed values together
// with every problem found, joined; the Parsed value is usable even when err is not nil.
// Warnings (deprecated flags, argparse repeats, overridden scenario locks) do not make err
// non-nil and are listed in Parsed.Warnings.
func (s *Schema) Parse(argv []string, opts ...ParseOption) (*Parsed, error) {
	var cfg parseConfig
	for _, o := range opts {
		o(&cfg)
	}
	ps := &parser{s: s, cfg: cfg, probs: &problems{s: s}, p: &Parsed{Schema: s, values: map[string]*Value{}}}
	ps.run(argv)
	if !ps.p.Help {
		ps.checkRules()
		ps.checkScenario()
	}
	for _, e := range ps.probs.list {
		if e.Severity == SevWarning {
			ps.p.Warnings = append(ps.p.Warnings, e)
		}
	}
	if ps.p.Help {
		return ps.p, nil
	}
	return ps.p, ps.probs.err()
}
