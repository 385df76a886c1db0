package run

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sweep/internal/proc"
)

// TestWatchLoadExitOrder: when the client and the engine (or a worker)
// have all exited by the time the runner looks, as on a loaded host, the
// failure's wording and blame follow the order they exited in. The
// runner followed whichever Done channel its select took, at random once
// both were closed: TestRunFaults/engine_crashes_as_the_load_ends saw
// "client had sent its last request" for an engine that exited after its
// client. Each case's processes have exited, in its order, before the
// runner looks, 200 times (the select's pick, not a fair coin when the
// watchers start at the look, failed every run of the test, 10 of 10).
func TestWatchLoadExitOrder(t *testing.T) {
	const looks = 200
	tests := []struct {
		name       string
		order      []string // the processes' names, in the order they exit
		clientExit int
		blame      string
		want       string
	}{
		{name: "engine exits after the client", order: []string{"client", "engine"}, blame: "engine",
			want: "engine exited as the load ended (exit code 7), just after client finished"},
		{name: "engine exits before the client", order: []string{"engine", "client"}, blame: "engine",
			want: "engine exited as the load ended (exit code 7): client had sent its last request and finished on its own"},
		{name: "worker exits before the engine", order: []string{"decode0", "engine", "client"}, blame: "decode0",
			want: "decode0 exited as the load ended (exit code 9): client had sent its last request and finished on its own"},
		{name: "engine exits before the worker", order: []string{"engine", "decode0", "client"}, blame: "engine",
			want: "engine exited as the load ended (exit code 7): client had sent its last request and finished on its own"},
		{name: "worker exits after the client", order: []string{"client", "decode0", "engine"}, blame: "decode0",
			want: "decode0 exited as the load ended (exit code 9), just after client finished"},
		{name: "client fails after the worker and the engine", order: []string{"decode0", "engine", "client"}, clientExit: 2, blame: "decode0",
			want: "decode0 exited during the load (exit code 9)"},
		{name: "client fails before the engine", order: []string{"client", "engine"}, clientExit: 2, blame: "engine",
			want: "engine exited during the load (exit code 7)"},
	}
	self, err := os.Executable()
	require.NoError(t, err)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			codes := map[string]int{"client": tc.clientExit, "engine": 7, "decode0": 9}
			procs := map[string]*proc.Process{}
			for _, name := range tc.order { // each starts once the one before it has exited
				p, err := proc.Start(t.Context(), proc.Spec{Name: name, Argv: []string{self}, Env: map[string]string{
					roleEnv: "exit", faultEnv: strconv.Itoa(codes[name]),
					"GORACE": "atexit_sleep_ms=0", // a race-enabled binary's exit 0 waits 1 s for reports by default
				}})
				require.NoError(t, err)
				t.Cleanup(func() { p.Stop(time.Second) })
				_, err = p.Wait(t.Context())
				require.NoError(t, err)
				procs[name] = p
			}
			r, err := newRunner(Spec{}, Options{OutDir: t.TempDir(), StopGrace: time.Second}.withDefaults(), "point", RecordFile)
			require.NoError(t, err)
			if w := procs["decode0"]; w != nil {
				r.workers = []*proc.Process{w}
			}
			for i := range looks {
				blame, err := r.watchLoad(t.Context(), procs["client"], procs["engine"], nil)
				require.Error(t, err, "look %d", i)
				require.Equal(t, tc.want, err.Error(), "look %d: exited in the order %v", i, tc.order)
				require.Equal(t, tc.blame, blame.Name(), "look %d: blamed", i)
			}
		})
	}
}
