package run

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"sweep/metrics"
	"sweep/metrics/aiperf"
	"sweep/metrics/power"
	"sweep/metrics/result"
)

// AggregateOptions say where the facts of a result directory come from
// and how its acceptance length is judged (`sweep result aggregate`).
type AggregateOptions struct {
	// EnvFile is a JSON object of InferenceX's variables; "" reads the
	// run.json sweep run wrote in the directory, else the process
	// environment.
	EnvFile string
	// OutDir fills the env file's <AGENTIC_OUTPUT_DIR> placeholder.
	OutDir string
	// GoldenAL, when set, is the recipe's golden acceptance length.
	GoldenAL *float64
	// ALTolerance is the AL check's tolerance; it replaces run.json's
	// when ALToleranceGiven (or when run.json has none).
	ALTolerance      float64
	ALToleranceGiven bool
	// Log takes the "run facts: from" line and the power adapter's output.
	Log io.Writer
	// Name is the directory as the user gave it, for errors ("": dir).
	Name string
}

// Aggregated is a result aggregated from a directory's artifacts.
type Aggregated struct {
	Result *result.Result
	Facts  result.RunFacts
	// PowerExit is the power lane's exit code under REQUIRE_POWER with
	// invalid telemetry (0 otherwise); PowerErr says why.
	PowerExit int
	PowerErr  error
}

// Aggregate aggregates the artifacts of the result directory dir
// (absolute) into InferenceX's result, with the acceptance length, the
// validation and, when the run had it, the power lane; the result says
// whether it is valid, simulated and which client made it.
func Aggregate(dir string, o AggregateOptions) (*Aggregated, error) {
	if o.Name == "" {
		o.Name = dir
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	facts, sim, vopts, err := aggregateFacts(dir, o)
	if err != nil {
		return nil, err
	}
	if o.GoldenAL != nil {
		facts.GoldenAL = o.GoldenAL
	}
	if o.ALToleranceGiven || facts.ALTolerance == 0 {
		facts.ALTolerance = o.ALTolerance
	}
	in, err := result.LoadInputs(o.Name, facts.HFHubCache)
	if err != nil {
		return nil, fmt.Errorf("aggregate %s: %w", o.Name, err)
	}
	res, err := result.Aggregate(in, facts)
	if err != nil {
		return nil, fmt.Errorf("aggregate %s: %w", o.Name, err)
	}
	if facts.GoldenAL != nil || result.Speculative(facts.SpecDecoding) {
		res.AcceptanceLength = result.CheckALFromExport(in.ServerMetrics, facts.GoldenAL, facts.ALTolerance)
	}
	// The result says whether it counts, as sweep run's results do.
	var reasons []string
	if al := res.AcceptanceLength; al != nil && al.Verdict == metrics.ALFail {
		reasons = append(reasons, "acceptance length: "+al.Reason)
	}
	v, verr := result.Validate(aiperf.ResolveArtifactDir(dir), vopts)
	switch {
	case verr != nil:
		reasons = append(reasons, "validation: "+verr.Error())
	case !v.Valid:
		reasons = append(reasons, "validation: "+v.Reason)
	}
	out := &Aggregated{Result: res, Facts: facts}
	aggregatePower(dir, o.Log, out, &reasons)
	res.SetValidity(reasons)
	if sim != nil {
		res.Simulated, res.Simulation = true, sim
	}
	if rec, ok := ReadRecordFile(dir); ok && o.EnvFile == "" && rec.Facts != nil {
		res.Client = rec.Client.Stamped(in.Summary) // the client run.json recorded
	}
	return out, nil
}

// aggregatePower runs InferenceX's power lane on the result when the run
// had it (ENABLE_AGENTX_POWER on, the offset file the recipe writes with
// the monitor present; for a disaggregated point its node monitors'
// directories, summed as in sweep run): the power keys go into the
// result, the sidecars into dir. Under REQUIRE_POWER invalid telemetry adds a
// reason and sets PowerExit.
func aggregatePower(dir string, log io.Writer, a *Aggregated, reasons *[]string) {
	var fields *power.Fields
	var out power.Outcome
	if a.Facts.Multinode {
		// A simulated disaggregated point's lane: its node monitors.
		lane := power.LaneFromEnv(os.LookupEnv, false)
		nodes := multiNodePowerRan(dir)
		if !lane.Enabled || len(nodes) == 0 {
			return
		}
		o := multiNodePowerOptions(dir, a.Facts, nodes)
		o.RequirePower, o.Stdout, o.Stderr = lane.Require, log, log
		fields, out = power.AdaptMultiNode(o)
	} else {
		lane := power.LaneFromEnv(os.LookupEnv, false)
		if !lane.Enabled || !power.LaneRan(dir) {
			return
		}
		expected := power.ExpectedGPUs(a.Facts.TP, a.Facts.PP, a.Facts.PCP)
		fields, out = power.AdaptResult(power.Options{
			ResultDir: dir, AggregateName: result.FileName(a.Facts.ResultFilename), ExpectedGPUs: &expected,
			RequirePower: lane.Require, Stdout: log, Stderr: log,
		})
	}
	a.Result.Fields = fields
	if out.ExitCode == 0 {
		return
	}
	msg := "power: " + strings.Join(out.Explained(), ", ") + " (REQUIRE_POWER)"
	*reasons = append(*reasons, msg)
	a.PowerExit, a.PowerErr = out.ExitCode, errors.New(msg)
}

// aggregateFacts picks the run facts of dir: the env file, else the
// run.json sweep run wrote there (its facts, simulation and validation
// settings), else the process environment.
func aggregateFacts(dir string, o AggregateOptions) (result.RunFacts, *result.Simulation, result.ValidateOptions, error) {
	vopts := result.ValidateOptions{FailedRequestThreshold: result.DefaultFailedRequestThreshold}
	var env map[string]string
	switch rec, ok := ReadRecordFile(dir); {
	case o.EnvFile != "":
		var err error
		if env, err = result.EnvFromFile(o.EnvFile, map[string]string{"RESULT_DIR": dir, "AGENTIC_OUTPUT_DIR": o.OutDir}); err != nil {
			return result.RunFacts{}, nil, vopts, err
		}
	case ok && rec.Facts != nil:
		facts := *rec.Facts
		if err := facts.Check(); err != nil {
			return facts, nil, vopts, fmt.Errorf("run facts in %s: %w", filepath.Join(dir, RecordFile), err)
		}
		if rec.ValidateOptions != nil {
			vopts = *rec.ValidateOptions
		}
		fmt.Fprintf(o.Log, "run facts: from %s (--env-file overrides)\n", filepath.Join(dir, RecordFile))
		return facts, rec.Simulation, vopts, nil
	default:
		env = result.ProcessEnv()
	}
	facts, err := result.FromEnv(env)
	if err != nil {
		return facts, nil, vopts, fmt.Errorf("run facts: %w", err)
	}
	return facts, nil, vopts, nil
}
