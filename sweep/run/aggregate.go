package run

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"sweep/internal/usage"
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
	// environment. It replaces the run facts only: what run.json records
	// of the point (its simulation, client, validation settings, golden
	// AL, scrape health and what the result was judged on) stays.
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
	// OutName names where the result goes in the power lane's log line
	// ("": InferenceX's RESULT_FILENAME.json).
	OutName string
	// CheckOut, when set, is called with the run facts before anything
	// is written (the power lane writes its sidecars into the
	// directory): an error stops the aggregation there.
	CheckOut func(result.RunFacts) error
}

// Aggregated is a result aggregated from a directory's artifacts.
type Aggregated struct {
	Result *result.Result
	Facts  result.RunFacts
	// InputErr is a problem of an artifact the result was made in spite
	// of (a summary that does not read: its records still give the
	// result, invalid): a usage error at the file's line and column,
	// for the command to exit with once the result is written.
	InputErr error
	// PowerExit is the power lane's exit code under REQUIRE_POWER with
	// invalid telemetry (0 otherwise); PowerErr says why.
	PowerExit int
	PowerErr  error
}

// Aggregate aggregates the artifacts of the result directory dir
// (absolute) into InferenceX's result, with the acceptance length, the
// validation and, when the run had it, the power lane; the result says
// whether it is valid, simulated and which client made it. Its validity
// is sweep run's judgement (judgement): with run.json's failed stages
// before the result (judgedStages), its schedule lag and official mark.
func Aggregate(dir string, o AggregateOptions) (*Aggregated, error) {
	if o.Name == "" {
		o.Name = dir
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if err := checkPointDir(dir, o.Name); err != nil {
		return nil, err
	}
	rec, err := pointRecord(dir, o.Name)
	if err != nil {
		return nil, err
	}
	facts, vopts, err := aggregateFacts(dir, rec, o)
	if err != nil {
		return nil, err
	}
	if o.GoldenAL != nil {
		facts.GoldenAL = o.GoldenAL
	}
	if o.ALToleranceGiven || facts.ALTolerance == 0 {
		facts.ALTolerance = o.ALTolerance
	}
	if o.CheckOut != nil {
		if err := o.CheckOut(facts); err != nil {
			return nil, err
		}
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
	// The result says whether it counts, judged as sweep run judges it.
	v, verr := result.Validate(aiperf.ResolveArtifactDir(dir), vopts)
	clientArgv := recordedClientArgv(rec) // what the client was asked, as run.json records it
	var client *result.Client
	if rec != nil {
		client = rec.Client
	}
	j := judgement{al: res.AcceptanceLength, verdict: &v, verdictErr: verr, artifacts: result.CheckArtifacts(in, askedOf(facts, clientArgv, client))}
	if rec != nil {
		// What run.json records of the run itself: its failed stages,
		// the schedule lag and whether the point was official.
		j.failedStages = stageReasons(judgedStages(rec, o.GoldenAL != nil || o.ALToleranceGiven))
		if sim := rec.Simulation; sim != nil {
			_, j.lag = lagVerdict(sim.ScheduleLag, sim.TimeScale)
		}
		j.official, j.submission = rec.Official, res.Submission
	}
	out := &Aggregated{Result: res, Facts: facts}
	outName := o.OutName
	if outName == "" {
		outName = result.FileName(facts.ResultFilename)
	}
	j.power = aggregatePower(dir, o.Log, outName, out)
	if in.SummaryErr != nil {
		out.InputErr = usage.Refuse(fmt.Errorf("%w; the result is made from the records alone, invalid: aggregate a directory whose summary aiperf wrote", in.SummaryErr))
	}
	res.SetValidity(j.reasons())
	// What the point was comes from what its directory records, whatever
	// gave the facts: run.json's simulation, client and scrape health,
	// else the artifacts' own word on the client.
	if rec != nil {
		if rec.Simulation != nil {
			res.Simulated, res.Simulation = true, rec.Simulation
		}
		res.Probe = rec.Probe
		res.Client = rec.Client.Stamped(in.Summary)
		res.ScrapeHealth = recordedScrapeHealth(dir, rec)
	} else if in.Summary != nil && in.Summary.AIPerfVersion != "" {
		res.Client = &result.Client{Name: "unknown (no run.json)", AiperfVersion: in.Summary.AIPerfVersion,
			Why: "the directory has no run.json of sweep run; its artifacts say only which aiperf version wrote them"}
	}
	return out, nil
}

// checkPointDir refuses, as a usage error, a RESULT_DIR that is not the
// directory of a point (name is it as the user gave it): one that does
// not exist, a file, or a directory with neither run.json nor aiperf
// artifacts.
func checkPointDir(dir, name string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return usage.Errorf("RESULT_DIR %s does not exist: give the directory of one point (sweep run's --out, or InferenceX's result directory)", name)
	case err != nil:
		return fmt.Errorf("RESULT_DIR: %w", err)
	case !st.IsDir():
		return usage.Errorf("RESULT_DIR %s is a file, not a directory: give the point directory that holds it (%s)", name, filepath.Dir(name))
	}
	if _, err := os.Stat(filepath.Join(dir, RecordFile)); err == nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, aiperf.ArtifactDirName)); err == nil {
		return nil
	}
	return usage.Errorf("RESULT_DIR %s holds no point: it has neither %s nor aiperf_artifacts/: give the directory a point was run into (sweep run's --out)", name, RecordFile)
}

// pointRecord is the run.json sweep run wrote for the point in dir (name
// is dir as the user gave it), nil when there is none (or it is a
// server's own record, without facts). One that does not read is a
// usage error at its line and column: aggregating without it would lose
// what it records (whether the point was simulated, which client made
// it).
func pointRecord(dir, name string) (*Record, error) {
	rec, err := ReadRecordFile(dir)
	if err != nil {
		return nil, usage.Errorf("%w: the point's record does not read, so the result would lose whether the point was simulated and which client made it: run the point again (sweep run --force --out %s), or remove %s to aggregate from the artifacts alone, the result then saying neither (client \"unknown (no run.json)\") and the run facts coming from --env-file or the environment", err, name, filepath.Join(name, RecordFile))
	}
	if rec != nil && rec.Facts != nil {
		return rec, nil
	}
	return nil, nil
}

// recordedScrapeHealth is the health of sweep's own scraping during the
// point: as run.json records it, else (a run.json written before it did)
// as the point's own result file in dir says.
func recordedScrapeHealth(dir string, rec *Record) *metrics.ScrapeHealth {
	if rec.ScrapeHealth != nil {
		return rec.ScrapeHealth
	}
	if rec.ResultFile == "" {
		return nil
	}
	path := filepath.Join(dir, filepath.Base(rec.ResultFile))
	f, err := result.ReadFile(path)
	if err != nil {
		return nil
	}
	return f.Result.ScrapeHealth
}

// aggregatePower runs InferenceX's power lane on the result when the run
// had it (ENABLE_AGENTX_POWER on, the offset file the recipe writes with
// the monitor present; for a disaggregated point its node monitors'
// directories, summed as in sweep run): the power keys go into the
// result, the sidecars into dir. Under REQUIRE_POWER invalid telemetry sets
// PowerExit and is the reason it returns ("": none).
func aggregatePower(dir string, log io.Writer, outName string, a *Aggregated) string {
	var fields *power.Fields
	var out power.Outcome
	if a.Facts.Multinode {
		// A simulated disaggregated point's lane: its node monitors.
		lane := power.LaneFromEnv(os.LookupEnv, false)
		nodes := multiNodePowerRan(dir)
		if !lane.Enabled || len(nodes) == 0 {
			return ""
		}
		o := multiNodePowerOptions(dir, a.Facts, nodes)
		o.RequirePower, o.Stdout, o.Stderr = lane.Require, log, log
		fields, out = power.AdaptMultiNode(o)
	} else {
		lane := power.LaneFromEnv(os.LookupEnv, false)
		if !lane.Enabled || !power.LaneRan(dir) {
			return ""
		}
		expected := power.ExpectedGPUs(a.Facts.TP, a.Facts.PP, a.Facts.PCP)
		fields, out = power.AdaptResult(power.Options{
			ResultDir: dir, AggregateName: outName, ExpectedGPUs: &expected,
			RequirePower: lane.Require, Stdout: log, Stderr: log,
		})
	}
	a.Result.Fields = fields
	if out.ExitCode == 0 {
		return ""
	}
	msg := "power: " + strings.Join(out.Explained(), ", ") + " (REQUIRE_POWER)"
	a.PowerExit, a.PowerErr = out.ExitCode, errors.New(msg)
	return msg
}

// aggregateFacts picks the run facts of dir: the env file, else the
// point's run.json (rec), else the process environment; and the
// validation settings, run.json's when it has them. A golden AL and its
// tolerance run.json has stay when the env file gives the facts (they are
// not InferenceX variables).
func aggregateFacts(dir string, rec *Record, o AggregateOptions) (result.RunFacts, result.ValidateOptions, error) {
	vopts := result.ValidateOptions{FailedRequestThreshold: result.DefaultFailedRequestThreshold}
	if rec != nil && rec.ValidateOptions != nil {
		vopts = *rec.ValidateOptions
	}
	recPath := filepath.Join(dir, RecordFile)
	var env map[string]string
	switch {
	case o.EnvFile != "":
		var err error
		if env, err = result.EnvFromFile(o.EnvFile, map[string]string{"RESULT_DIR": dir, "AGENTIC_OUTPUT_DIR": o.OutDir}); err != nil {
			return result.RunFacts{}, vopts, usage.Errorf("--env-file: %w", err)
		}
		facts, err := result.FromEnv(env)
		if err != nil {
			return facts, vopts, fmt.Errorf("run facts: %s: %w", o.EnvFile, err)
		}
		if rec != nil {
			facts.GoldenAL, facts.ALTolerance = rec.Facts.GoldenAL, rec.Facts.ALTolerance
			fmt.Fprintf(o.Log, "run facts: from %s (--env-file); the point's simulation, client and validation settings from %s\n", o.EnvFile, recPath)
		}
		return facts, vopts, nil
	case rec != nil:
		facts := *rec.Facts
		if err := facts.Check(); err != nil {
			return facts, vopts, fmt.Errorf("run facts in %s: %w", recPath, err)
		}
		fmt.Fprintf(o.Log, "run facts: from %s (--env-file overrides)\n", recPath)
		return facts, vopts, nil
	}
	facts, err := result.FromEnv(result.ProcessEnv())
	if err != nil {
		return facts, vopts, fmt.Errorf("run facts (no %s in %s: from the process environment; or give --env-file): %w", RecordFile, o.Name, err)
	}
	return facts, vopts, nil
}
