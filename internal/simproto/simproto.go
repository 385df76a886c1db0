// Package simproto is the contract between sweep and the simulated
// processes it starts (sweep sim-engine, sweep loadgen, sweep sim-bfcl):
// the environment variables that configure them and the virtual clock's
// HTTP headers. Both sides import these names; neither restates them.
//
// A point run with --simulate exports the Env* variables to the engine's
// and the client's processes; on the virtual clock (EnvClock and
// EnvLoadgenClock "virtual") every request carries HeaderParticipant and
// HeaderTime, and every SSE event is preceded by a SSEClockPrefix comment.
package simproto

import (
	"encoding/json"
	"fmt"
)

// Environment variables of the simulated engine (sweep sim-engine).
const (
	EnvFault     = "SWEEP_SIM_FAULT"      // fault list (simengine.ParseFaults)
	EnvTimeScale = "SWEEP_SIM_TIME_SCALE" // simulated seconds per wall-clock second; loadgen's fallback
	EnvClock     = "SWEEP_SIM_CLOCK"      // "virtual" or "wall"
	EnvGPU       = "SWEEP_SIM_GPU"        // GPU model: mi300x, h200, ...
	EnvSeed      = "SWEEP_SIM_SEED"       // uint64 seed of noise and output lengths
	// EnvRunner is the point's runner label (configs/runners.yaml:
	// cluster:mi300x-amds): its hardware entry's host memory is what a
	// node gives the engine's host KV tier.
	EnvRunner = "SWEEP_SIM_RUNNER"
	// EnvMaxLag is the share of a wall-clock simulated engine's busy time
	// in late steps past which a point is invalid (sweep run reads it;
	// 0.10 when unset; 1: never, for a host known to be loaded, such as
	// a test run beside others: the lag is still recorded and warned of).
	EnvMaxLag   = "SWEEP_SIM_MAX_LAG"
	EnvLoadTime = "SWEEP_SIM_LOAD_TIME"   // Go duration, simulated model loading
	EnvWarmup   = "SWEEP_SIM_WARMUP_TIME" // Go duration, simulated warm-up (SGLang)
	// EnvCalibration names a calibration file (simengine.Calibration) the
	// simulated engine takes its step costs and KV pool from when one of
	// its arms matches the engine's configuration.
	EnvCalibration = "SWEEP_SIM_CALIBRATION"
	// EnvSidecars carries the commands of the helper processes a point
	// starts beside its engine (LMCache's servers, Mooncake's master),
	// which a simulated run does not start, to the simulated engine: a
	// JSON array of argv arrays (Sidecars, ParseSidecars). The engine reads
	// from them what the real one would learn from its servers (an LMCache
	// server's L1 size).
	EnvSidecars = "SWEEP_SIM_SIDECARS"
)

// Sidecars is EnvSidecars' value for the argvs of a point's sidecars.
func Sidecars(argvs [][]string) (string, error) {
	b, err := json.Marshal(argvs)
	return string(b), err
}

// ParseSidecars reads EnvSidecars' value ("" is none).
func ParseSidecars(v string) ([][]string, error) {
	if v == "" {
		return nil, nil
	}
	var argvs [][]string
	if err := json.Unmarshal([]byte(v), &argvs); err != nil {
		return nil, fmt.Errorf("%s: want a JSON array of argv arrays, as sweep run writes it: %w", EnvSidecars, err)
	}
	return argvs, nil
}

// Environment variables of the built-in load client (sweep loadgen).
const (
	EnvLoadgenTimeScale = "SWEEP_LOADGEN_TIME_SCALE" // the client's time scale (else EnvTimeScale, else 1)
	EnvLoadgenClock     = "SWEEP_LOADGEN_CLOCK"      // "virtual" drives the engine's virtual clock
	// EnvLoadgenClockOrigin (Unix ns) is the instant the compressed wall
	// clock stretches from: an artifact stamp is origin + (t-origin)*scale.
	// Unset, the client's start. The simulated GPU tools stamp their
	// samples on the same clock (EnvSMIClockOrigin).
	EnvLoadgenClockOrigin = "SWEEP_LOADGEN_CLOCK_ORIGIN"
)

// Environment of the simulated GPU tools (nvidia-smi, amd-smi stand-ins).
const (
	// EnvSMIURL is the simulated engine (or router) base URL.
	EnvSMIURL = "SWEEP_SIM_SMI_URL"
	// EnvSMINodeGPUs is the node's GPU count (default 8): GPUs beyond the
	// engine's idle at their idle power, as a real node's do.
	EnvSMINodeGPUs = "SWEEP_SIM_NODE_GPUS"
	// EnvSMIAfterGen is the engine's anchor generation when the monitor
	// started (GET /sim/power's gen): the loop samples only a later load.
	// Unset, the generation of its first answer is taken.
	EnvSMIAfterGen = "SWEEP_SIM_SMI_AFTER_GEN"
	// EnvSMIFault injects a telemetry fault: "stall=A:B" (no samples from
	// A to B seconds after the first), "missing-gpu=N" (GPU N never
	// reported).
	EnvSMIFault = "SWEEP_SIM_SMI_FAULT"
	// EnvSMIClockOrigin (Unix ns) runs the tools on the wall clock: a
	// sample's stamp is on the load generator's compressed clock about
	// this origin (EnvLoadgenClockOrigin), and every second of that clock
	// is sampled as the wall clock passes it. Unset, the tools follow the
	// engine's virtual clock.
	EnvSMIClockOrigin = "SWEEP_SIM_SMI_CLOCK_ORIGIN"
)

// EnvBFCL carries an arm and its replicate to the BFCL stand-in
// (sweep sim-bfcl), as JSON.
const EnvBFCL = "SWEEP_SIM_BFCL"

// Headers of the virtual clock protocol (simengine's package doc has the
// whole exchange). Times are simulated seconds as decimal floats.
const (
	HeaderParticipant = "X-Sim-Participant" // the participant sending a request
	HeaderTime        = "X-Sim-Time"        // its simulated arrival time
	HeaderDeadline    = "X-Sim-Deadline"    // abort the request at this simulated time
	// HeaderThen declares what the participant does when the request
	// ends normally: "sleep=D&cap=C&before=B" sleeps D seconds with the
	// idle-gap cap C (0: none), unless the end plus D is at or after B
	// (the end of its issuing window; +Inf when omitted).
	HeaderThen = "X-Sim-Then"
	// HeaderWoke answers (409) a request sent at its declared wake-up when
	// the participant woke earlier (the idle-gap cap shortened its sleep):
	// send it again at this time.
	HeaderWoke = "X-Sim-Woke"
	// HeaderPrompt, "unknown", answers (409) a prompt that reuses block ids
	// the engine does not have: send it again whole.
	HeaderPrompt = "X-Sim-Prompt"
	// HeaderTimeScale is on every answer of the simulated engine: its
	// time scale (simulated seconds per wall-clock second).
	HeaderTimeScale = "X-Sim-Time-Scale"
	// HeaderSamples is on a /sim/log answer: how many metric samples the
	// log holds.
	HeaderSamples = "X-Sim-Samples"
	// SSEClockPrefix starts the comment line before every SSE event on the
	// virtual clock: ": sim-time 12.345678".
	SSEClockPrefix = ": sim-time "
)
