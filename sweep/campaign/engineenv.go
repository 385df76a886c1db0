package campaign

import (
	"maps"
	"slices"
	"strings"

	"sweep/configs"
)

// EngineEnv are the Identity settings of the variables of the environment
// environ ("NAME=value" pairs, os.Environ's form) that change what an
// engine of schedule s measures and reach it: the engines' own
// (configs.Engine.OwnEnvPrefixes: SGLANG_*, SGL_*, VLLM_*) and those of
// the libraries they run on (configs.RuntimeEnvPrefixes: NCCL_*, RCCL_*,
// CUDA_*, HIP_*, HSA_*, ROCR_*, TORCH_*, TRITON_*, AITER_*, ...). A
// variable reaches the engine of one of its points when the engine
// inherits it, as the runner starts it, because the point's recipe
// neither sets nor unsets it, and reaches(p, name) says the point's
// launch passes it on (nil: every variable; --launch in docker passes
// only the names its runner's launcher lists). The GPU visibility
// variables (visibleDevices) never do: the executor pins each server to
// the GPUs it gives it (RunBackend.StartServer), or its Slurm
// allocation does, so a resume on other GPUs of the node is the same
// sweep. Each is an EnvSetting with the variable's value, in name
// order: a sweep resumed with another value, or with one set or unset,
// is a different sweep, its points measured under other engine
// settings.
func EngineEnv(s *Schedule, environ []string, reaches func(p *Point, name string) bool) []Setting {
	vars := map[string]string{}
	for _, kv := range environ {
		if name, value, ok := strings.Cut(kv, "="); ok && name != "" && !slices.Contains(visibleDevices, name) {
			vars[name] = value
		}
	}
	found := map[string]string{}
	for _, p := range s.Points {
		eng := p.Plan.Engine
		for _, prefix := range slices.Concat(p.Plan.Row.Framework.OwnEnvPrefixes(), configs.RuntimeEnvPrefixes()) {
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
