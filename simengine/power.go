package simengine

import (
	"math"
	"sync"
)

// GPU power on the virtual timeline, for the simulated nvidia-smi and
// amd-smi (sweep's GPU telemetry stand-ins; see SMI).
//
// Each rank logs how long its steps ran prefill and decode work and with
// how many decoding requests, in quarter-second buckets of simulated time.
// A GPU's power over a bucket is
//
//	idle + (tdp - idle) * (0.92*prefill + decode*(0.35 + 0.5*min(1, batch/128)))
//
// with prefill and decode the bucket's busy fractions and batch the mean
// decode batch: a decode step with a full batch draws little more than
// one with a few requests while it makes many more tokens, so the energy
// per token falls as batching improves. GET /sim/power serves the samples.

// powerBucket is the bucket width in simulated seconds.
const powerBucket = 0.25

// gpuPower is a GPU model's idle and board-limit power in watts (rough
// public figures).
type gpuPower struct{ idle, tdp float64 }

var gpuPowers = map[string]gpuPower{
	"mi300x": {140, 750}, "mi325x": {160, 1000}, "mi355x": {220, 1400},
	"h100": {80, 700}, "h200": {90, 700}, "b200": {150, 1000}, "b300": {160, 1100}, "gb200": {170, 1200},
}

func powerOf(gpu string) gpuPower {
	if p, ok := gpuPowers[gpu]; ok {
		return p
	}
	return gpuPower{100, 700}
}

// powerLog is one rank's busy time per bucket.
type powerLog struct {
	mu      sync.Mutex
	prefill map[int64]float64 // seconds of prefill work in the bucket
	decode  map[int64]float64 // seconds of decode work
	batch   map[int64]float64 // decode seconds times batch size
}

func newPowerLog() *powerLog {
	return &powerLog{prefill: map[int64]float64{}, decode: map[int64]float64{}, batch: map[int64]float64{}}
}

// add spreads a step from start to end over the buckets it covers;
// prefillShare of it is prefill, the rest decodes batch requests.
func (l *powerLog) add(start, end, prefillShare float64, batch int) {
	if !(end > start) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for b := int64(math.Floor(start / powerBucket)); float64(b)*powerBucket < end; b++ {
		lo, hi := math.Max(start, float64(b)*powerBucket), math.Min(end, float64(b+1)*powerBucket)
		if hi <= lo {
			continue
		}
		d := hi - lo
		l.prefill[b] += d * prefillShare
		l.decode[b] += d * (1 - prefillShare)
		l.batch[b] += d * (1 - prefillShare) * float64(batch)
	}
}

// watts is the rank's GPU power averaged over [from, to), counting the
// work from since on (before it the GPU idles).
func (l *powerLog) watts(p gpuPower, from, to, since float64) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var pre, dec, bat float64
	start := math.Max(from, since)
	for b := int64(math.Floor(start / powerBucket)); float64(b)*powerBucket < to; b++ {
		// A bucket the span covers in part counts in proportion.
		lo, hi := math.Max(start, float64(b)*powerBucket), math.Min(to, float64(b+1)*powerBucket)
		f := math.Max(hi-lo, 0) / powerBucket
		pre += l.prefill[b] * f
		dec += l.decode[b] * f
		bat += l.batch[b] * f
	}
	span := to - from
	w := p.idle
	if span > 0 {
		mean := 0.0
		if dec > 0 {
			mean = bat / dec
		}
		w += (p.tdp - p.idle) * (0.92*math.Min(pre/span, 1) + math.Min(dec/span, 1)*(0.35+0.5*math.Min(1, mean/128)))
	}
	return w
}
