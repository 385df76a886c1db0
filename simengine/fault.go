package simengine

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// FaultKind names an injected failure.
type FaultKind string

// The injected failures. Counts are requests finished after warm-up.
const (
	// FaultNeverReady: SGLang opens the port and answers /health with 503
	// forever; vLLM never opens the port.
	FaultNeverReady FaultKind = "never-ready"
	// FaultCrash: Run returns a *CrashError (the command exits 1) as soon
	// as N requests have finished; in-flight streams are cut.
	FaultCrash FaultKind = "crash"
	// FaultHang: after N finished requests the scheduler stops and every
	// endpoint, /health included, stops answering.
	FaultHang FaultKind = "hang"
	// FaultSlowMetrics: /metrics answers after the given wall-clock delay.
	FaultSlowMetrics FaultKind = "slow-metrics"
	// FaultMalformedMetrics: /metrics returns text that does not parse.
	FaultMalformedMetrics FaultKind = "malformed-metrics"
	// FaultIgnoreSIGTERM: the sim-engine command ignores SIGTERM, so only
	// SIGKILL stops it (tests the runner's escalation).
	FaultIgnoreSIGTERM FaultKind = "ignore-sigterm"
	// FaultSlowSteps: every scheduler step takes the given percentage
	// longer ("slow-steps:10"), a planted engine slowdown for testing
	// sweep compare; the point stays valid.
	FaultSlowSteps FaultKind = "slow-steps"
	// FaultLateSteps: on the wall clock every scheduler step's tokens go
	// out the given wall-clock delay after the step's scheduled end
	// ("late-steps:50ms"), as on a host too loaded for the time scale:
	// the engine falls behind its schedule (Lag).
	FaultLateSteps FaultKind = "late-steps"
)

var faultKinds = []FaultKind{FaultNeverReady, FaultCrash, FaultHang, FaultSlowMetrics, FaultMalformedMetrics, FaultIgnoreSIGTERM, FaultSlowSteps, FaultLateSteps}

// Form is how a fault of kind k is written, its argument as a
// placeholder: "crash:N", "slow-metrics:DURATION", "never-ready".
func (k FaultKind) Form() string {
	switch k {
	case FaultCrash, FaultHang:
		return string(k) + ":N"
	case FaultSlowMetrics, FaultLateSteps:
		return string(k) + ":DURATION"
	case FaultSlowSteps:
		return string(k) + ":PERCENT"
	}
	return string(k)
}

// FaultForms lists every fault kind's Form, comma-separated, for help
// texts and errors.
func FaultForms() string {
	forms := make([]string, len(faultKinds))
	for i, k := range faultKinds {
		forms[i] = k.Form()
	}
	return strings.Join(forms, ", ")
}

// Fault is one injected failure: a kind with its count (crash, hang) or
// delay (slow-metrics).
type Fault struct {
	Kind  FaultKind
	After int           // crash, hang: finished requests before the fault
	Delay time.Duration // slow-metrics, late-steps: wall-clock delay
	// Percent is slow-steps' slowdown: each step lasts 1 + Percent/100
	// times as long.
	Percent float64
}

// String renders the fault the way ParseFaults reads it.
func (f Fault) String() string {
	switch f.Kind {
	case FaultCrash, FaultHang:
		return fmt.Sprintf("%s:%d", f.Kind, f.After)
	case FaultSlowMetrics, FaultLateSteps:
		return fmt.Sprintf("%s:%s", f.Kind, f.Delay)
	case FaultSlowSteps:
		return fmt.Sprintf("%s:%s", f.Kind, strconv.FormatFloat(f.Percent, 'g', -1, 64))
	}
	return string(f.Kind)
}

// ParseFaults parses a comma-separated fault list such as
// "crash:5", "hang:0", "slow-metrics:3s,never-ready" or
// "malformed-metrics". An empty string is no faults.
func ParseFaults(s string) ([]Fault, error) {
	var out []Fault
	var errs []error
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		kind, arg, hasArg := strings.Cut(item, ":")
		f := Fault{Kind: FaultKind(kind)}
		switch f.Kind {
		case FaultCrash, FaultHang:
			n, err := strconv.Atoi(arg)
			if !hasArg || err != nil || n < 0 {
				errs = append(errs, fmt.Errorf("fault %q: want %s:N with N >= 0 finished requests", item, kind))
				continue
			}
			f.After = n
		case FaultSlowMetrics, FaultLateSteps:
			d, err := time.ParseDuration(arg)
			if !hasArg || err != nil || d < 0 {
				errs = append(errs, fmt.Errorf("fault %q: want %s:DURATION such as %s:5s", item, kind, kind))
				continue
			}
			f.Delay = d
		case FaultSlowSteps:
			p, err := strconv.ParseFloat(arg, 64)
			if !hasArg || err != nil || !(p > -100 && p <= 1000) {
				errs = append(errs, fmt.Errorf("fault %q: want slow-steps:PERCENT with PERCENT in (-100, 1000], e.g. slow-steps:10", item))
				continue
			}
			f.Percent = p
		case FaultNeverReady, FaultMalformedMetrics, FaultIgnoreSIGTERM:
			if hasArg {
				errs = append(errs, fmt.Errorf("fault %q: %s takes no argument", item, kind))
				continue
			}
		default:
			errs = append(errs, fmt.Errorf("fault %q: unknown kind, want one of %s", item, FaultForms()))
			continue
		}
		out = append(out, f)
	}
	return out, errors.Join(errs...)
}

// CrashError is returned by Server.Run when the crash fault fires.
type CrashError struct{ After int }

// Error describes the crash.
func (e *CrashError) Error() string {
	return fmt.Sprintf("simulated engine crash after %d finished requests", e.After)
}
