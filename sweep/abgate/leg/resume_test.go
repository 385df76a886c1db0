package leg

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"sweep/sweep/abgate"
)

// TestKeptServer: an arm's server is the one its kept records name only
// when every replicate was kept from an earlier run; a replicate left to
// run, or one this run made, means this run's server is the arm's.
func TestKeptServer(t *testing.T) {
	start := time.Date(2026, 12, 7, 21, 0, 0, 500, time.UTC)
	kept := func(started time.Time, port string) replicateState {
		return replicateState{kept: "r", keptRec: &Replicate{Started: started, Made: Made{Server: abgate.ArmServer{Arm: "a", EngineArgv: []string{"vllm", "--port", port}}}}}
	}
	earlier, now := start.Add(-time.Minute), start.Add(time.Millisecond)
	for _, tc := range []struct {
		name   string
		states []replicateState
		want   []string // the server's engine argv; nil: no server named
	}{
		{"every replicate kept from earlier runs", []replicateState{kept(earlier, "{port}"), kept(earlier.Add(time.Second), "{port} 2")}, []string{"vllm", "--port", "{port}"}},
		{"one left to run", []replicateState{kept(earlier, "{port}"), {fresh: "r.try2"}}, nil},
		{"one made by this run", []replicateState{kept(earlier, "{port}"), kept(now, "{port}")}, nil},
		{"started in this run's second, after it", []replicateState{kept(start.Add(time.Nanosecond), "{port}")}, nil},
		{"no replicates", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := keptServer(tc.states, start)
			if tc.want == nil {
				assert.Nil(t, got)
				return
			}
			if assert.NotNil(t, got) {
				assert.Equal(t, tc.want, got.EngineArgv)
				assert.True(t, got.Kept, "the report says it is kept from an earlier run")
			}
		})
	}
}
