package main

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/executor/slurm"
)

// assertMetricsRecorded checks that the client's server-metrics export
// (aiperf_artifacts/server_metrics_export.json) lists each of urls among
// the endpoints it scraped successfully: every worker's metrics, by role.
func assertMetricsRecorded(t *testing.T, export string, urls ...string) {
	t.Helper()
	var exp struct {
		Summary struct {
			Successful []string `json:"endpoints_successful"`
		} `json:"summary"`
	}
	b, err := os.ReadFile(export)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &exp))
	for _, u := range urls {
		assert.Contains(t, exp.Summary.Successful, u, export)
	}
}

// assertJobEnded checks that the Slurm job has ended (or is forgotten).
func assertJobEnded(t *testing.T, job string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	st, err := slurm.NewClient(slurm.Exec{}).Status(ctx, slurm.JobID(job))
	if err == nil {
		assert.True(t, st.State.Done(), "job %s is %s", job, st.State)
	} else {
		assert.ErrorIs(t, err, slurm.ErrUnknownJob)
	}
}
