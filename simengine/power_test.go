package simengine

import (
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/internal/simproto"
)

// TestPowerLogWatts: a GPU's power over a span counts the busy time of the
// buckets it covers in part in proportion. Counting such a bucket whole
// made the sampled power 15 % above the energy counters on a simulated
// point (the accumulator cross-check failed).
func TestPowerLogWatts(t *testing.T) {
	p := gpuPower{idle: 100, tdp: 1100}
	l := newPowerLog()
	l.add(0, 0.25, 0, 128) // a full decode batch for one bucket
	full := 0.35 + 0.5     // the decode factor of a full batch
	for _, tc := range []struct {
		from, to, busy float64 // busy: the decode fraction of the span
	}{
		{0, 1, 0.25},
		{0.2, 1.2, 0.05},
		{0.25, 1.25, 0},
		{0, 0.25, 1},
	} {
		want := p.idle + (p.tdp-p.idle)*tc.busy*full
		if got := l.watts(p, tc.from, tc.to, 0); math.Abs(got-want) > 1e-9 {
			t.Errorf("[%g, %g): %g W, want %g", tc.from, tc.to, got, want)
		}
	}
	// Work before since does not count.
	if got, want := l.watts(p, 0, 1, 0.2), p.idle+(p.tdp-p.idle)*0.05*full; math.Abs(got-want) > 1e-9 {
		t.Errorf("since 0.2: %g W, want %g", got, want)
	}
	// A fuller batch draws more power but less than in proportion.
	small, big := newPowerLog(), newPowerLog()
	small.add(0, 1, 0, 8)
	big.add(0, 1, 0, 64)
	ws, wb := small.watts(p, 0, 1, 0), big.watts(p, 0, 1, 0)
	if !(wb > ws && wb/ws < 64.0/8) {
		t.Errorf("batch 8: %g W, batch 64: %g W", ws, wb)
	}
}

// TestSimPowerWallClock: on the compressed wall clock GET /sim/power
// stamps samples on the load generator's clock about the origin it is
// given (every artifact second from 2 s before the origin to the one the
// clock has passed), idle before any work and above idle while a request
// runs; without an origin it is refused. The simulated amd-smi's energy
// counters answer on the same clock.
func TestSimPowerWallClock(t *testing.T) {
	cfg := testConfig(configs.SGLang)
	cfg.TimeScale = 20
	srv, base := startServer(t, cfg)
	origin := time.Now().UnixNano()
	idle := powerOf(srv.Config().GPU).idle

	code, body := get(t, base+"/sim/power")
	assert.Equal(t, http.StatusBadRequest, code, "%s", body)

	samples := func(q string) (header []string, stamps []int64, watts [][]float64) {
		t.Helper()
		code, body := get(t, base+"/sim/power?origin="+strconv.FormatInt(origin, 10)+q)
		require.Equal(t, http.StatusOK, code, "%s", body)
		lines := strings.Split(strings.TrimSpace(string(body)), "\n")
		header = strings.Fields(lines[0])
		for _, l := range lines[1:] {
			f := strings.Fields(l)
			e, err := strconv.ParseInt(f[0], 10, 64)
			require.NoError(t, err)
			stamps = append(stamps, e)
			watts = append(watts, parseFloats(f[1:]))
		}
		return header, stamps, watts
	}
	time.Sleep(300 * time.Millisecond) // 6 s of the compressed clock
	header, stamps, watts := samples("")
	require.Len(t, header, 10)
	assert.Equal(t, []string{"gen", "1"}, header[:2])
	o := origin / 1e9
	require.GreaterOrEqual(t, len(stamps), 6, "every artifact second from origin-2 on")
	assert.Equal(t, o-2, stamps[0])
	for i, e := range stamps {
		assert.Equal(t, stamps[0]+int64(i), e, "consecutive seconds")
		assert.Len(t, watts[i], srv.Config().GPUs())
		for _, w := range watts[i] {
			assert.GreaterOrEqual(t, w, idle)
		}
	}
	for _, w := range watts[len(watts)-1] {
		assert.InDelta(t, idle, w, 1e-9, "seconds after the warm-up, no work: idle")
	}

	resp := post(t, base+"/v1/chat/completions", chatBody{Messages: userMsg("hello"), MaxTokens: intp(2000), IgnoreEOS: true})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, _ = io.Copy(io.Discard, resp.Body)
	time.Sleep(100 * time.Millisecond)
	_, stamps, watts = samples("&from=" + strconv.FormatInt(stamps[len(stamps)-1]+1, 10))
	peak := 0.0
	for _, ws := range watts {
		peak = max(peak, ws[0])
	}
	assert.Greater(t, peak, idle, "the request's decode steps draw power (%d samples)", len(stamps))

	var out strings.Builder
	env := map[string]string{simproto.EnvSMIURL: base, simproto.EnvSMIClockOrigin: strconv.FormatInt(origin, 10)}
	require.Equal(t, 0, SMI("amd-smi", []string{"metric", "-E", "--csv"}, func(k string) string { return env[k] }, &out, io.Discard))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	assert.Equal(t, "gpu,socket_power,total_energy_consumption", lines[0])
	assert.Len(t, lines, 9, "8 GPUs per node")
}
