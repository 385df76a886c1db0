package recipes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"sweep/configs/matrix"
	"sweep/internal/filename"
	"sweep/recipes/schema"
)

// Point is one planned benchmark point: everything needed to run one matrix
// row. Router is nil without DP attention; exactly one of Client (benchmark
// rows) and Eval (eval-only rows) is set.
type Point struct {
	// Row is the matrix row the point runs; Row.ConfigKey names its key.
	Row    matrix.Row
	Recipe string // recipe name = InferenceX script stem
	// Engine is the inference server; CommandFile is where InferenceX
	// records its argv (sglang_command.txt, ...).
	Engine      Command
	CommandFile string
	Router      *Command
	Client      *Command
	Eval        *Command
	// Sidecars must be started and ready before the engine (LMCache).
	Sidecars []Sidecar
	// MetricsURLs are the Prometheus endpoints aiperf records: its --url
	// base plus every --server-metrics URL. RequiredMetricPrefix must
	// appear in the exported server metrics ("" for no check).
	MetricsURLs          []string
	RequiredMetricPrefix string
	// GoldenAL is the golden acceptance length the engine simulates; nil
	// without speculative decoding and on eval-only rows (real acceptance).
	GoldenAL *float64
	// HealthURL is the engine's readiness endpoint; RouterHealthURL the
	// router's ("" without a router).
	HealthURL, RouterHealthURL string
	// Port is the point's public port (the router's with DP attention);
	// EnginePort the engine's.
	Port, EnginePort int
	// ResultDir holds server.log, the command files and aiperf_artifacts/;
	// ResultFilename is InferenceX's RESULT_FILENAME (no extension).
	ResultDir, ResultFilename string
	// Fast is true for agentx-fast discovery points (1200 s, 1 warm-up).
	Fast bool
	// ProbeDuration is the benchmark duration in seconds of a point planned
	// as an adaptive search's short bracketing probe (0: not a probe).
	ProbeDuration int
	// Escapes lists flags or commands not checked against a schema.
	Escapes []schema.Escape
	// Launch are the host commands that run the point on its runner, in
	// order (filled by the launch package; empty when not asked for).
	Launch []HostCommand
	// LaunchNotes say what the launch does differently from its launcher
	// and why (a step dropped on a shared node).
	LaunchNotes []string
	// ClientSetup are the steps that make the client's environment in the
	// container before the engine starts (ClientEnv.Steps: the aiperf
	// venv, the trace set); empty when the client is already there.
	ClientSetup []SetupStep
	// MultiNode is the disaggregated multi-node point laid out on its
	// hosts (LocalMultiNode.SweepPoint), nil for a single-node point; Engine is
	// then its first prefill worker and Router its PD router.
	MultiNode *LocalMultiNode
}

type pointJSON struct {
	Row                  *matrix.Row     `json:"row"`
	ConfigKey            string          `json:"config_key,omitempty"`
	Recipe               string          `json:"recipe"`
	Engine               Command         `json:"engine"`
	CommandFile          string          `json:"command_file"`
	Router               *Command        `json:"router"`
	Client               *Command        `json:"client"`
	Eval                 *Command        `json:"eval"`
	Sidecars             []Sidecar       `json:"sidecars,omitempty"`
	MetricsURLs          []string        `json:"metrics_urls"`
	RequiredMetricPrefix string          `json:"required_metric_prefix"`
	GoldenAL             *float64        `json:"golden_al"`
	HealthURL            string          `json:"health_url"`
	RouterHealthURL      string          `json:"router_health_url,omitempty"`
	Port                 int             `json:"port"`
	EnginePort           int             `json:"engine_port"`
	ResultDir            string          `json:"result_dir"`
	ResultFilename       string          `json:"result_filename"`
	Fast                 bool            `json:"fast"`
	ProbeDuration        int             `json:"probe_duration,omitempty"`
	Escapes              []schema.Escape `json:"escapes,omitempty"`
	Launch               []HostCommand   `json:"launch,omitempty"`
	LaunchNotes          []string        `json:"launch_notes,omitempty"`
	ClientSetup          []SetupStep     `json:"client_setup,omitempty"`
}

// MarshalJSON writes the point as `sweep plan --format json` prints it:
// {"row", "config_key", "engine": {"argv", "env"}, "router", "client",
// "eval", "metrics_urls", "required_metric_prefix", "golden_al", ...}. The
// row is InferenceX's row JSON; its key is the separate "config_key".
func (p Point) MarshalJSON() ([]byte, error) {
	return json.Marshal(pointJSON{
		Row: &p.Row, ConfigKey: p.Row.ConfigKey, Recipe: p.Recipe, Engine: p.Engine, CommandFile: p.CommandFile,
		Router: p.Router, Client: p.Client, Eval: p.Eval, Sidecars: p.Sidecars,
		MetricsURLs: p.MetricsURLs, RequiredMetricPrefix: p.RequiredMetricPrefix, GoldenAL: p.GoldenAL,
		HealthURL: p.HealthURL, RouterHealthURL: p.RouterHealthURL, Port: p.Port, EnginePort: p.EnginePort,
		ResultDir: p.ResultDir, ResultFilename: p.ResultFilename, Fast: p.Fast, ProbeDuration: p.ProbeDuration, Escapes: p.Escapes, Launch: p.Launch, LaunchNotes: p.LaunchNotes,
		ClientSetup: p.ClientSetup,
	})
}

// UnmarshalJSON reads a point as MarshalJSON writes it, so a point planned
// on one machine runs unchanged on another (sweep run --plan). Unknown
// keys are errors.
func (p *Point) UnmarshalJSON(data []byte) error {
	var pj pointJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pj); err != nil {
		return fmt.Errorf("planned point: %w", err)
	}
	if pj.Row == nil {
		return errors.New(`planned point: no "row"`)
	}
	if len(pj.Engine.Argv) == 0 {
		return errors.New(`planned point: "engine" has no argv`)
	}
	// Both name files in the point's result directory.
	if err := filename.Check("result_filename", pj.ResultFilename); err != nil {
		return fmt.Errorf("planned point: %w", err)
	}
	if pj.CommandFile != "" {
		if err := filename.Check("command_file", pj.CommandFile); err != nil {
			return fmt.Errorf("planned point: %w", err)
		}
	}
	*p = Point{
		Row: *pj.Row, Recipe: pj.Recipe, Engine: pj.Engine, CommandFile: pj.CommandFile,
		Router: pj.Router, Client: pj.Client, Eval: pj.Eval, Sidecars: pj.Sidecars,
		MetricsURLs: pj.MetricsURLs, RequiredMetricPrefix: pj.RequiredMetricPrefix, GoldenAL: pj.GoldenAL,
		HealthURL: pj.HealthURL, RouterHealthURL: pj.RouterHealthURL, Port: pj.Port, EnginePort: pj.EnginePort,
		ResultDir: pj.ResultDir, ResultFilename: pj.ResultFilename, Fast: pj.Fast, ProbeDuration: pj.ProbeDuration, Escapes: pj.Escapes, Launch: pj.Launch, LaunchNotes: pj.LaunchNotes,
		ClientSetup: pj.ClientSetup,
	}
	p.Row.ConfigKey = pj.ConfigKey
	return nil
}
