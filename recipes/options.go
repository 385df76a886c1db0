package recipes

import (
	"fmt"
	"math"

	"sweep/configs"
	"sweep/recipes/schema"
)

// Default plan settings (InferenceX's values).
const (
	DefaultPort          = 8888
	DefaultResultDir     = "/workspace/results"
	DefaultAiperfVersion = "0.12.0"
	// ForkAiperfVersion is the aiperf schema of the fork InferenceX pins
	// (SemiAnalysisAI/aiperf 754356e9); AiperfVersion "fork" selects it.
	ForkAiperfVersion = "sa-754356e9"
)

// PlanOptions tune Plan. Zero values take the defaults named on each field.
type PlanOptions struct {
	// Port is the point's public port (default 8888).
	Port int
	// ModelPath is what engines load (default: the row's model id).
	ModelPath string
	// ResultDir is the per-point result directory (default
	// /workspace/results).
	ResultDir string
	// AiperfVersion picks the aiperf schema: "0.12.0" (default, upstream)
	// or the InferenceX fork's version ForkAiperfVersion ("fork" for short).
	AiperfVersion string
	// Fast plans agentx-fast points: 1200 s and 1 warm-up request per lane.
	Fast bool
	// Duration, when > 0, replaces the row's duration in seconds (ignored
	// in Fast mode, as InferenceX does).
	Duration int
	// ProbeDuration, when > 0, plans every benchmark point as an adaptive
	// search's bracketing probe of this many seconds, in either mode (the
	// mode's warm-up stays; below 900 s aiperf gets --unsafe-override, as
	// InferenceX passes it).
	ProbeDuration int
	// Eval plans every row as an eval-only point (lm-eval instead of
	// aiperf); rows already marked eval-only are eval points regardless.
	Eval bool
	// RunnerName names the runner for RESULT_FILENAME and launcher routing
	// (default: the first runner of the row's label in Runners).
	RunnerName string
	// Catalog holds the recipes: models.Builtin() (sweep/recipes/models)
	// for the shipped ones. Required.
	Catalog *Catalog
	// Runners is runners.yaml (default: the embedded one).
	Runners *configs.Runners
	// Golden holds the golden AL curves (default: the embedded ones).
	Golden *configs.GoldenAL
}

type planConfig struct {
	PlanOptions
	aiperf *schema.Schema
}

func (o PlanOptions) withDefaults() (*planConfig, error) {
	if o.Port == 0 {
		o.Port = DefaultPort
	}
	if o.Port < 1 || RouterMetricsPort(o.Port) > math.MaxUint16 {
		return nil, fmt.Errorf("%w: port %d: want 1..%d (the router's metrics use port+%d)", ErrInvalidOptions, o.Port, math.MaxUint16-routerMetricsOffset, routerMetricsOffset)
	}
	if o.ResultDir == "" {
		o.ResultDir = DefaultResultDir
	}
	switch o.AiperfVersion {
	case "":
		o.AiperfVersion = DefaultAiperfVersion
	case "fork":
		o.AiperfVersion = ForkAiperfVersion
	}
	if o.Duration < 0 {
		return nil, fmt.Errorf("%w: duration %d: want > 0 seconds", ErrInvalidOptions, o.Duration)
	}
	if o.ProbeDuration < 0 {
		return nil, fmt.Errorf("%w: probe duration %d: want > 0 seconds", ErrInvalidOptions, o.ProbeDuration)
	}
	var err error
	if o.Runners == nil {
		if o.Runners, err = configs.DefaultRunners(); err != nil {
			return nil, err
		}
	}
	if o.Golden == nil {
		if o.Golden, err = configs.DefaultGoldenAL(); err != nil {
			return nil, err
		}
	}
	a, err := schema.Load("aiperf", o.AiperfVersion)
	if err != nil {
		return nil, fmt.Errorf("%w: aiperf version: %w", ErrInvalidOptions, err)
	}
	return &planConfig{PlanOptions: o, aiperf: a}, nil
}
