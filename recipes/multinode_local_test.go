package recipes_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/recipes"
)

// TestPlanLocalMultiNode lays the AMD disaggregated point out on one
// host: the workers on their own loopback ports with the plan's argv
// otherwise unchanged, the PD router pointing at them, the client against
// the router recording every worker's metrics.
func TestPlanLocalMultiNode(t *testing.T) {
	rs := keyRows(t, amdDisaggKey)
	row := rs[len(rs)-1] // DP attention and EP
	conc := row.Concs[0]
	pts, err := recipes.PlanMultiNode(rs[len(rs)-1:], recipes.PlanOptions{})
	require.NoError(t, err)
	require.Equal(t, 2, recipes.LocalWorkerCount(&pts[0]))
	l, err := recipes.PlanLocalMultiNode(row, conc, recipes.PlanOptions{ResultDir: "/tmp/p"}, []int{20000, 20001, 20002})
	require.NoError(t, err)
	require.Len(t, l.Workers, 2)
	for i, w := range l.Workers {
		planned := roleOf(t, pts[0], w.Role).Command.Argv
		assert.Equal(t, []string{"prefill0", "decode0"}[i], w.Name)
		assert.Equal(t, "127.0.0.1", argValue(w.Command.Argv, "--host"))
		assert.Equal(t, []string{"20001", "20002"}[i], argValue(w.Command.Argv, "--port"))
		// Everything else is the plan's: same flags in the same order.
		assert.Len(t, w.Command.Argv, len(planned))
		for j, a := range planned {
			if planned[max(j-1, 0)] != "--port" && planned[max(j-1, 0)] != "--host" {
				assert.Equal(t, a, w.Command.Argv[j])
			}
		}
		assert.Equal(t, "http://127.0.0.1:"+argValue(w.Command.Argv, "--port")+"/metrics", w.MetricsURL)
	}
	assert.Equal(t, "20000", argValue(l.Router.Argv, "--port"))
	assert.Equal(t, "http://127.0.0.1:20001", argValue(l.Router.Argv, "--prefill"))
	assert.Equal(t, "http://127.0.0.1:20002", argValue(l.Router.Argv, "--decode"))
	assert.Contains(t, l.Router.Argv, "--pd-disaggregation")
	assert.Equal(t, "http://localhost:20000", argValue(l.Client.Argv, "--url"))
	i := slices.Index(l.Client.Argv, "--server-metrics")
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, []string{"http://127.0.0.1:20001/metrics", "http://127.0.0.1:20002/metrics"}, l.Client.Argv[i+1:i+3])
	assert.Equal(t, "/tmp/p/aiperf_artifacts", argValue(l.Client.Argv, "--output-artifact-dir"))
	assert.Equal(t, pts[0].ResultFilename+"_conc"+argValue(l.Client.Argv, "--concurrency"), l.ResultFilename)

	_, err = recipes.PlanLocalMultiNode(row, conc, recipes.PlanOptions{}, []int{20000, 20001})
	assert.ErrorContains(t, err, "2 port(s) given, want 3")
	_, err = recipes.PlanLocalMultiNode(row, conc+1, recipes.PlanOptions{}, []int{20000, 20001, 20002})
	assert.ErrorContains(t, err, "has concurrencies")
}

// TestPlanMultiNodeOnHosts lays the point out on nodes: each worker
// listens at its node's address, the router reaches the workers there,
// the client reaches the router at the first node's, and records every
// worker's metrics by node address.
func TestPlanMultiNodeOnHosts(t *testing.T) {
	rs := keyRows(t, amdDisaggKey)
	row := rs[len(rs)-1]
	conc := row.Concs[0]
	hosts := []string{"10.0.0.1", "10.0.0.1", "10.0.0.2"}
	l, err := recipes.PlanMultiNodeOnHosts(row, conc, recipes.PlanOptions{ResultDir: "/tmp/p"}, []int{20000, 20001, 20002}, hosts)
	require.NoError(t, err)
	require.Len(t, l.Workers, 2)
	for i, w := range l.Workers {
		assert.Equal(t, hosts[i+1], w.Host)
		assert.Equal(t, hosts[i+1], argValue(w.Command.Argv, "--host"))
		assert.Equal(t, "http://"+hosts[i+1]+":"+argValue(w.Command.Argv, "--port")+"/health", w.HealthURL)
	}
	assert.Equal(t, "10.0.0.1", l.RouterHost)
	assert.Equal(t, "http://10.0.0.1:20001", argValue(l.Router.Argv, "--prefill"))
	assert.Equal(t, "http://10.0.0.2:20002", argValue(l.Router.Argv, "--decode"))
	assert.Equal(t, "http://10.0.0.1:20000/health", l.RouterHealthURL)
	assert.Equal(t, "http://10.0.0.1:20000", argValue(l.Client.Argv, "--url"))
	assert.Equal(t, []string{"http://10.0.0.1:20001/metrics", "http://10.0.0.2:20002/metrics"}, l.MetricsURLs)

	_, err = recipes.PlanMultiNodeOnHosts(row, conc, recipes.PlanOptions{}, []int{20000, 20001, 20002}, hosts[:2])
	assert.ErrorContains(t, err, "2 host(s) for 3 port(s)")
}

// TestPlanLocalMultiNodeRefusesSrtSlurm: NVIDIA points' engines are
// rendered by srtctl from recipe files sweep does not read.
func TestPlanLocalMultiNodeRefusesSrtSlurm(t *testing.T) {
	row := keyRows(t, dynamoKey)[0]
	_, err := recipes.PlanLocalMultiNode(row, row.Concs[0], recipes.PlanOptions{}, []int{1, 2, 3})
	require.ErrorIs(t, err, recipes.ErrNotSupported)
	assert.True(t, strings.Contains(err.Error(), "srtctl apply"), err.Error())
}

// TestWithAddress: a worker's --port and --host are replaced in the form
// job.slurm gives them. Before, only "--port VALUE" was found: a worker
// started with --port=30000 was refused ("no --port VALUE in the
// command"), and of a flag given twice the first was replaced, not the
// one the engine reads.
func TestWithAddress(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		want []string
		err  string
	}{
		{"separate values", []string{"python3", "-m", "sglang.launch_server", "--port", "30000", "--host", "${NODE_ADDR}"},
			[]string{"python3", "-m", "sglang.launch_server", "--port", "7001", "--host", "10.0.0.2"}, ""},
		{"attached values", []string{"python3", "-m", "sglang.launch_server", "--port=30000", "--host=${NODE_ADDR}"},
			[]string{"python3", "-m", "sglang.launch_server", "--port=7001", "--host=10.0.0.2"}, ""},
		{"the last of two", []string{"python3", "-m", "sglang.launch_server", "--port", "1", "--host", "h", "--port", "30000"},
			[]string{"python3", "-m", "sglang.launch_server", "--port", "1", "--host", "10.0.0.2", "--port", "7001"}, ""},
		{"no port", []string{"python3", "-m", "sglang.launch_server", "--host", "h"}, nil, "no --port VALUE in the command"},
		{"port at the end", []string{"python3", "-m", "sglang.launch_server", "--host", "h", "--port"}, nil, "no --port VALUE in the command"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := recipes.WithAddress(tc.argv, "10.0.0.2", 7001)
			if tc.err != "" {
				assert.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got, "%q", tc.argv)
		})
	}
}
