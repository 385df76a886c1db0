package loadgen

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"sweep/internal/simproto"
	"sweep/metrics/aiperf"
)

// CommandLine is how `sweep loadgen` is started: an `aiperf profile`
// command line, the schema it is checked against, and the clock it runs
// on. The environment of the simulated processes (internal/simproto)
// fills in what is not given.
type CommandLine struct {
	Argv   []string // "profile" and the aiperf flags
	Schema string   // aiperf schema ref the argv is checked against
	// TimeScale 0 is $SWEEP_LOADGEN_TIME_SCALE, else $SWEEP_SIM_TIME_SCALE,
	// else 1.
	TimeScale    float64
	VirtualClock bool
	// RequireTraces is Options.RequireTraces (--require-traces).
	RequireTraces bool
	// Getenv reads the environment (nil: os.Getenv).
	Getenv func(string) string
}

// Options checks the command line with the aiperf schema, then that the
// load generator implements every flag, and makes the run's options; the
// schema's warnings go to warn. The compressed clock's origin is
// $SWEEP_LOADGEN_CLOCK_ORIGIN (Unix nanoseconds) when set.
func (c *CommandLine) Options(warn io.Writer) (Options, error) {
	getenv := c.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	flags, warnings, err := ParseCommand(c.Argv, c.Schema)
	if err != nil {
		return Options{}, err
	}
	for _, w := range warnings {
		fmt.Fprintf(warn, "loadgen: %s\n", w) // the schema's text starts with "warning:"
	}
	opts, err := OptionsFromFlags(flags)
	if err != nil {
		return Options{}, err
	}
	opts.TimeScale = c.TimeScale
	if opts.TimeScale == 0 {
		opts.TimeScale = 1
		for _, env := range []string{simproto.EnvLoadgenTimeScale, simproto.EnvTimeScale} {
			v := getenv(env)
			if v == "" {
				continue
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f <= 0 {
				return Options{}, fmt.Errorf("$%s=%q: want a positive number", env, v)
			}
			opts.TimeScale = f
			break
		}
	}
	if v := getenv(simproto.EnvLoadgenClockOrigin); v != "" {
		ns, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ns <= 0 {
			return Options{}, fmt.Errorf("$%s=%q: want Unix nanoseconds", simproto.EnvLoadgenClockOrigin, v)
		}
		opts.ClockOrigin = time.Unix(0, ns)
	}
	opts.VirtualClock = c.VirtualClock
	opts.RequireTraces = c.RequireTraces
	opts.CLICommand = aiperf.BuiltinCLICommand + strings.Join(c.Argv, " ")
	return opts, nil
}
