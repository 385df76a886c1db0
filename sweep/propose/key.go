package propose

import (
	"fmt"
	"strings"

	"sweep/configs"
	"sweep/metrics/result"
)

// ResolveKey finds the master config key an arm's results came from: the
// agentic entry with the arm's model prefix, precision, framework and
// hardware (the runner label, with or without "cluster:": InferenceX's
// results carry it with, sweep's simulated ones too). More than one match is
// an error naming them (pick one with --config-key).
func ResolveKey(m *configs.Masters, id result.Identity) (string, error) {
	var hits []string
	for _, k := range m.Keys() {
		e, _ := m.Lookup(k)
		if len(e.Scenarios.AgenticCoding) == 0 || e.ModelPrefix != id.Get("infmax_model_prefix") ||
			e.Precision != id.Get("precision") || string(e.Framework) != id.Get("framework") ||
			strings.TrimPrefix(e.Runner, configs.ClusterPrefix) != strings.TrimPrefix(id.Get("hw"), configs.ClusterPrefix) {
			continue
		}
		hits = append(hits, k)
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		return "", fmt.Errorf("arm %s: no agentic master config with model-prefix %s, precision %s, framework %s, runner %s (name it with --config-key)",
			id.Label(), id.Get("infmax_model_prefix"), id.Get("precision"), id.Get("framework"), id.Get("hw"))
	}
	return "", fmt.Errorf("arm %s matches config keys %s: name one with --config-key", id.Label(), strings.Join(hits, ", "))
}
