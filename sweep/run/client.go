package run

import (
	"errors"
	"fmt"
	"os/exec"
)

// ClientRequest is what a user asked for as the load client of a point:
// a named aiperf, the built-in load generator, or the default (aiperf on
// PATH when it can give a true result, else the built-in one), and the
// clock the point runs on.
type ClientRequest struct {
	// Aiperf is --aiperf: a program path or name; "" looks aiperf up on
	// PATH.
	Aiperf string
	// Builtin is --builtin-client.
	Builtin bool
	// Simulate, WallClock and TimeScale are the point's Setup fields.
	Simulate  bool
	WallClock bool
	TimeScale float64
	// LookPath finds programs (default exec.LookPath).
	LookPath func(string) (string, error)
}

// ClientChoice is the load client a point runs with and why.
type ClientChoice struct {
	// Aiperf is the aiperf program; "" means the built-in load generator.
	Aiperf string
	// Why says how the choice was made, for the user and the result.
	Why string
}

// honestClock reports whether a real client measures true latencies
// against the point's engine: a real engine, or the simulated one on the
// uncompressed wall clock. A real aiperf times requests by the wall clock:
// on a compressed clock (--time-scale 150) its latencies come out 150
// times too small and its --benchmark-duration takes that much longer, and
// the virtual clock needs the built-in load generator to advance it.
func honestClock(simulate, wallClock bool, timeScale float64) bool {
	return !simulate || (wallClock && timeScale == 1)
}

// ErrDishonestClock is returned when a real aiperf would run against the
// simulated engine on a compressed or virtual clock.
var ErrDishonestClock = errors.New("a real aiperf measures wall-clock time: against the simulated engine it needs --sim-clock wall --time-scale 1, or use --builtin-client")

// clockName describes a simulated point's clock for messages.
func clockName(wallClock bool, timeScale float64) string {
	if !wallClock {
		return "the virtual clock (--sim-clock virtual)"
	}
	return fmt.Sprintf("a wall clock compressed %gx (--time-scale %g)", timeScale, timeScale)
}

// ChooseClient decides the point's load client. A real aiperf never runs
// against a compressed or virtual clock: named with --aiperf it is refused
// (an error wrapping ErrDishonestClock that names the fix), found on PATH
// it is passed over for the built-in load generator and Why says so.
func ChooseClient(req ClientRequest) (ClientChoice, error) {
	look := req.LookPath
	if look == nil {
		look = exec.LookPath
	}
	honest := honestClock(req.Simulate, req.WallClock, req.TimeScale)
	switch {
	case req.Builtin:
		return ClientChoice{Why: "--builtin-client"}, nil
	case req.Aiperf != "":
		p, err := look(req.Aiperf)
		if err != nil {
			return ClientChoice{}, fmt.Errorf("--aiperf %s: %w", req.Aiperf, err)
		}
		if !honest {
			return ClientChoice{}, fmt.Errorf("--aiperf %s with --simulate on %s: %w", p, clockName(req.WallClock, req.TimeScale), ErrDishonestClock)
		}
		return ClientChoice{Aiperf: p, Why: "--aiperf " + req.Aiperf}, nil
	}
	p, err := look("aiperf")
	switch {
	case err != nil:
		return ClientChoice{Why: "no aiperf on PATH"}, nil
	case !honest:
		return ClientChoice{Why: fmt.Sprintf("aiperf on PATH (%s) not used: the simulated engine runs on %s, and a real aiperf needs --sim-clock wall --time-scale 1", p, clockName(req.WallClock, req.TimeScale))}, nil
	}
	return ClientChoice{Aiperf: p, Why: "aiperf on PATH"}, nil
}
