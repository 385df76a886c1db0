package simengine

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
)

// gpuWatts is the power of each of the configuration's GPUs over [from,
// to), idle before since: a GPU serves the rank it belongs to (with DP
// attention every rank runs on every GPU of the group, which then draws
// the ranks' mean).
func (s *Server) gpuWatts(from, to, since float64) []float64 {
	p := powerOf(s.cfg.GPU)
	n := max(s.cfg.GPUs(), 1)
	ranks := make([]float64, len(s.ranks))
	for i, r := range s.ranks {
		ranks[i] = r.power.watts(p, from, to, since)
	}
	out := make([]float64, n)
	shared := len(ranks) > 0 && n%len(ranks) != 0 || s.cfg.DPAttention
	for g := range out {
		switch {
		case len(ranks) == 0:
			out[g] = p.idle
		case shared:
			sum := 0.0
			for _, w := range ranks {
				sum += w
			}
			out[g] = sum / float64(len(ranks))
		default:
			out[g] = ranks[g/(n/len(ranks))]
		}
	}
	return out
}

// simPower serves GPU power samples: "gen G now T until U gpus N idle I"
// (G counts the load generator's first joins that carried wall=, 0 before
// any; U: the simulated time samples are known until, now or, once every
// participant has left, 10 s later at idle; I: a GPU's idle watts), with
// ?energy=1 "energy J0 J1 ..." (each GPU's energy in joules from simulated
// time 0 to U), then one line "E W0 W1 ..." per whole Unix second E of the
// artifact clock from ?from= (default 2 s before the join; ?last=1: only
// the last) to U, W being each GPU's mean power over the second before E.
// ?margin=M holds back the last M seconds while requests still run. Without
// a join (G 0) there are no samples. The load generator starts its
// artifact clock on a whole second, so the samples fall at the same
// simulated times in every run; the GPUs idle before the join (the
// readiness traffic before it is not part of the load).
func (s *Server) simPower(w http.ResponseWriter, r *http.Request) {
	if s.vc == nil {
		s.simPowerWall(w, r)
		return
	}
	vc := s.vc
	vc.mu.Lock()
	now, wallSec, fracNs, joined, set, gen := vc.now, vc.wallSec, vc.wallFracNs, vc.joinedAt, vc.anchorSet, vc.anchorGen
	// Idle: no participant, nothing arriving and no request on a rank
	// (participants may all be away while requests still run).
	idle := len(vc.parts.list) == 0 && len(vc.arrivals) == 0
	vc.mu.Unlock()
	for _, r := range s.ranks {
		r.mu.Lock()
		idle = idle && len(r.running) == 0 && len(r.waiting) == 0
		r.mu.Unlock()
	}
	until := now
	if idle && set {
		until = now + 10
	}
	n := max(s.cfg.GPUs(), 1)
	fmt.Fprintf(w, "gen %d now %s until %s gpus %d idle %s\n", gen, fmtF(now), fmtF(until), n, fmtF(powerOf(s.cfg.GPU).idle))
	if !set {
		return
	}
	// at is the simulated time of artifact second e: small terms only, so
	// the result does not depend on the day the point ran.
	frac := float64(fracNs) / 1e9
	at := func(e int64) float64 { return float64(e-wallSec) - frac + joined }
	last := wallSec + int64(math.Floor(until-joined+frac))
	if m, err := strconv.ParseFloat(r.URL.Query().Get("margin"), 64); err == nil && m > 0 && !idle {
		last = wallSec + int64(math.Floor(until-m-joined+frac))
	}
	if r.URL.Query().Get("energy") == "1" {
		energy := make([]float64, n)
		for b := 0.0; b < until; b += 1 {
			for g, wt := range s.gpuWatts(b, math.Min(b+1, until), joined) {
				energy[g] += wt * (math.Min(b+1, until) - b)
			}
		}
		fmt.Fprint(w, "energy")
		for _, e := range energy {
			fmt.Fprintf(w, " %s", fmtF(e))
		}
		fmt.Fprintln(w)
	}
	from, err := strconv.ParseInt(r.URL.Query().Get("from"), 10, 64)
	switch {
	case r.URL.Query().Get("last") == "1":
		from = last
	case err != nil || from <= 0:
		from = wallSec - 2 // a monitor runs before the load starts
	}
	for e := from; e <= last; e++ {
		t := at(e)
		fmt.Fprintf(w, "%d", e)
		for _, wt := range s.gpuWatts(t-1, t, joined) {
			fmt.Fprintf(w, " %s", fmtF(wt))
		}
		fmt.Fprintln(w)
	}
}

// simPowerWall is GET /sim/power on the compressed wall clock: samples
// are stamped on the load generator's artifact clock stretched about
// ?origin= (Unix ns, simproto.EnvLoadgenClockOrigin), so artifact second
// E is simulated time (origin + (E-origin)/scale - start)*scale of this
// engine. The answer has the virtual clock's shape with gen 1 (the wall
// clock has no joins: every second is the load's), U the simulated time
// now, and samples from ?from= (default 2 s before the origin) to the
// last whole artifact second the clock has passed (?margin=M holds back
// M more). Every step counts, readiness traffic included.
func (s *Server) simPowerWall(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	origin, err := strconv.ParseInt(q.Get("origin"), 10, 64)
	if err != nil || origin <= 0 {
		http.Error(w, "on the wall clock GET /sim/power needs origin=<Unix ns> (the load generator's clock origin)", http.StatusBadRequest)
		return
	}
	scale := s.cfg.TimeScale
	if scale <= 0 {
		scale = 1
	}
	now := s.simNow()
	n := max(s.cfg.GPUs(), 1)
	fmt.Fprintf(w, "gen 1 now %s until %s gpus %d idle %s\n", fmtF(now), fmtF(now), n, fmtF(powerOf(s.cfg.GPU).idle))
	o := float64(origin) / 1e9
	start := float64(s.base.UnixNano()) / 1e9
	// at is the simulated time of artifact second e; stamp the artifact
	// time of simulated time t.
	at := func(e int64) float64 { return (o + (float64(e)-o)/scale - start) * scale }
	stamp := func(t float64) float64 { return o + (start+t/scale-o)*scale }
	last := int64(math.Floor(stamp(now)))
	if m, err := strconv.ParseFloat(q.Get("margin"), 64); err == nil && m > 0 {
		last = int64(math.Floor(stamp(now) - m))
	}
	if q.Get("energy") == "1" {
		energy := make([]float64, n)
		for b := 0.0; b < now; b++ {
			for g, wt := range s.gpuWatts(b, math.Min(b+1, now), 0) {
				energy[g] += wt * (math.Min(b+1, now) - b)
			}
		}
		fmt.Fprint(w, "energy")
		for _, e := range energy {
			fmt.Fprintf(w, " %s", fmtF(e))
		}
		fmt.Fprintln(w)
	}
	from, err := strconv.ParseInt(q.Get("from"), 10, 64)
	switch {
	case q.Get("last") == "1":
		from = last
	case err != nil || from <= 0:
		from = int64(math.Floor(o)) - 2
	}
	for e := from; e <= last; e++ {
		t := at(e)
		fmt.Fprintf(w, "%d", e)
		for _, wt := range s.gpuWatts(math.Max(t-1, 0), math.Max(t, 0), 0) {
			fmt.Fprintf(w, " %s", fmtF(wt))
		}
		fmt.Fprintln(w)
	}
}

func fmtF(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
