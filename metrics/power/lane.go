package power

import (
	"slices"
	"strconv"
	"strings"

	"sweep/internal/usage"
)

// Lane is whether a point runs InferenceX's power lane, read from the
// variables benchmark_lib.sh reads.
type Lane struct {
	// Enabled is ENABLE_AGENTX_POWER: on unless set to something other
	// than 1, true, TRUE, yes or YES (the shell's case is exact), and
	// never for a multi-node point.
	Enabled bool
	// Require is REQUIRE_POWER: 1, true or yes in any case makes invalid
	// telemetry fail the point (the adapter reads it lower-cased).
	Require bool
}

// The variables benchmark_lib.sh reads (Lane).
const (
	EnvEnable  = "ENABLE_AGENTX_POWER"
	EnvRequire = "REQUIRE_POWER"
)

// LaneFromEnv reads the lane's switches through lookup (os.LookupEnv).
func LaneFromEnv(lookup func(string) (string, bool), multinode bool) Lane {
	var l Lane
	enable, _ := lookup(EnvEnable)
	if enable == "" {
		enable = "1"
	}
	switch enable {
	case "1", "true", "TRUE", "yes", "YES":
		l.Enabled = !multinode
	}
	require, _ := lookup(EnvRequire)
	switch strings.ToLower(require) {
	case "1", "true", "yes":
		l.Require = true
	}
	return l
}

// ExpectedGPUs is the GPU count InferenceX passes the adapter:
// TP*PP*PCP, each defaulting to 1.
func ExpectedGPUs(tp, pp, pcp int) int {
	return max(tp, 1) * max(pp, 1) * max(pcp, 1)
}

// ParseGPUFilter reads a GPU filter (Options.GPUs): "all" is none (nil),
// else a comma-separated list of GPU indexes as the monitor writes them
// (0, 1, ...), each once. A problem is a *usage.Error naming the id.
func ParseGPUFilter(s string) ([]string, error) {
	if s == "all" {
		return nil, nil
	}
	var ids []string
	for id := range strings.SplitSeq(s, ",") {
		id = strings.TrimSpace(id)
		n, err := strconv.Atoi(id)
		switch {
		case id == "":
			return nil, usage.Errorf("GPU filter %q: an empty GPU id: want all or GPU indexes such as 0,1,2,3", s)
		case err != nil || n < 0 || strconv.Itoa(n) != id:
			return nil, usage.Errorf("GPU filter %q: %q is not a GPU index: want all or GPU indexes such as 0,1,2,3", s, id)
		case slices.Contains(ids, id):
			return nil, usage.Errorf("GPU filter %q: GPU %s is listed twice: list each GPU once", s, id)
		}
		ids = append(ids, id)
	}
	return ids, nil
}
