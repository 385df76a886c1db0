package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

const aggCases = "../../testdata/aggregation"

func writeEnv(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "env.json")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}
