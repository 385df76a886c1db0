package loadgen

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func testOptions(t testing.TB, url string) Options {
	o := DefaultOptions()
	o.URL = url
	o.Model = "test-model"
	o.Streaming = true
	o.ServerTokens = true
	o.Concurrency = 4
	o.BenchmarkDuration = 300 * time.Millisecond
	o.GracePeriod = 5 * time.Second
	o.WarmupPerLane = 1
	o.Seed = 42
	o.ArtifactDir = t.TempDir()
	o.TimeScale = 1000 // recorded think times of seconds become milliseconds
	o.ScrapeInterval = 20 * time.Millisecond
	o.ScrapeFlush = 0
	return o
}

func TestRunSmoke(t *testing.T) {
	f := &fakeServer{t: t, tokenGap: time.Millisecond}
	srv := f.start(t)
	o := testOptions(t, srv.URL)
	o.TimeScale = 1
	o.StartMinRatio, o.StartMaxRatio = 0, 1
	o.IdleGapCap = 10 * time.Millisecond
	res, err := Run(t.Context(), o, os.Stderr)
	require.NoError(t, err)
	t.Logf("%+v", res)
	b, err := os.ReadFile(filepath.Join(o.ArtifactDir, SummaryFile))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	t.Logf("%s", b[:2000])
}
