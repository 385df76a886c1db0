package campaign

import (
	"maps"
	"slices"
	"strings"
)

// EngineEnv are the Identity settings of the engines' own variables
// (configs.Engine.OwnEnvPrefixes: SGLANG_*, VLLM_*) of the environment
// environ ("NAME=value" pairs, os.Environ's form) that reach an engine of
// schedule s: the engine of one of its points inherits it, as the runner
// starts it, because the point's recipe neither sets nor unsets it, and
// reaches(p, name) says the point's launch passes it on (nil: every
// variable; --launch in docker passes only the names its runner's
// launcher lists). Each is an EnvSetting with the variable's value, in
// name order: a sweep resumed with another value, or with one set or
// unset, is a different sweep, its points measured under other engine
// settings.
func EngineEnv(s *Schedule, environ []string, reaches func(p *Point, name string) bool) []Setting {
	vars := map[string]string{}
	for _, kv := range environ {
		if name, value, ok := strings.Cut(kv, "="); ok && name != "" {
			vars[name] = value
		}
	}
	found := map[string]string{}
	for _, p := range s.Points {
		eng := p.Plan.Engine
		for _, prefix := range p.Plan.Row.Framework.OwnEnvPrefixes() {
			for name, value := range vars {
				_, set := eng.Env[name]
				if !strings.HasPrefix(name, prefix) || set || slices.Contains(eng.Unset, name) || reaches != nil && !reaches(p, name) {
					continue
				}
				found[name] = value
			}
		}
	}
	var out []Setting
	for _, name := range slices.Sorted(maps.Keys(found)) {
		out = append(out, EnvSetting(name, found[name]))
	}
	return out
}
