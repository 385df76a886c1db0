package knee

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"sweep/metrics/result"
)

func armWith(tp int, pts ...[3]float64) *Result {
	var id result.Identity
	for i := range id {
		id[i] = json.RawMessage(`"x"`)
	}
	id[8], _ = json.Marshal(tp)
	r := &Result{Arm: &Arm{Identity: id}}
	for _, p := range pts {
		r.Points = append(r.Points, Point{Conc: int(p[0]), Usable: true, Intvty: ptr(p[1]), E2ENormP90: ptr(p[1] / 2), Throughput: ptr(p[2])})
	}
	return r
}

func TestFrontiers(t *testing.T) {
	// tp8 owns the high-interactivity end, tp4 the high-throughput end;
	// tp2 is dominated everywhere; equal interactivity keeps the higher
	// throughput only.
	tp8 := armWith(8, [3]float64{1, 200, 1000}, [3]float64{4, 150, 3000}, [3]float64{16, 60, 5000})
	tp4 := armWith(4, [3]float64{4, 120, 2500}, [3]float64{16, 60, 6000}, [3]float64{64, 20, 8000})
	tp2 := armWith(2, [3]float64{4, 100, 2000}, [3]float64{16, 40, 4000})
	zero := armWith(1, [3]float64{1, 0, 9999})
	fs := Frontiers([]*Result{tp8, tp4, tp2, zero}, AxisMedian)
	assert.Len(t, fs, 1)
	type pt struct {
		tp   string
		conc int
	}
	var on []pt
	for _, p := range fs[0].OnFrontier() {
		on = append(on, pt{p.Result.Arm.Identity.Get("tp"), p.Conc})
	}
	assert.Equal(t, []pt{{"8", 1}, {"8", 4}, {"4", 16}, {"4", 64}}, on)
	assert.Len(t, fs[0].Points, 8, "points off the frontier stay, interactivity 0 is left out")
	assert.True(t, fs[0].Contributes(tp8))
	assert.True(t, fs[0].Contributes(tp4))
	assert.False(t, fs[0].Contributes(tp2))
	// the same data on the P90 E2E axis (halved) keeps the same order
	assert.Len(t, Frontiers([]*Result{tp8, tp4, tp2}, AxisE2ENormP90)[0].OnFrontier(), 4)
}
