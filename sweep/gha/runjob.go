package gha

import (
	"bufio"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/internal/inputfile"
	"sweep/internal/usage"
)

// RunJob says how this runner runs the points of a fan-out job with
// `sweep run`.
type RunJob struct {
	// RunnerName is the GitHub runner's name (runner.name), for
	// RESULT_FILENAME.
	RunnerName string
	// Out is the output directory: a job of one point writes there, a
	// job of several one subdirectory per point, named by its
	// RESULT_FILENAME.
	Out string
	// Simulate runs against the simulated engine; else OnHost starts a
	// real engine on this host, or the point runs through the runner's
	// launch path (sweep run --launch, with the Site changes and, for an
	// agentic point, Inferencex's aiperf as its load client; an eval-only
	// point runs lm-eval, no load client).
	Simulate, OnHost bool
	Site             []string
	Inferencex       string
	// ConfigFiles and RunnerConfig are passed on when set (the PR sweep
	// reads the pull request's master configs as data).
	ConfigFiles  []string
	RunnerConfig string
	// Force replaces what a point's output directory holds (sweep run
	// --force): another point's files, or this point made otherwise.
	Force bool
}

// PointRun is one point of a job as `sweep run` runs it.
type PointRun struct {
	Point
	Name string   // its RESULT_FILENAME on this runner
	Out  string   // its output directory
	Args []string // the flags of sweep run
}

// Runs plans the points of job (whose matrix row is row): each point's
// result filename, output directory and sweep run flags.
func (r RunJob) Runs(job *Job, row *matrix.Row) ([]PointRun, error) {
	runs := make([]PointRun, len(job.Points))
	for i, p := range job.Points {
		name, err := p.Filename(r.RunnerName)
		if err != nil {
			return nil, fmt.Errorf("point %d: %w", i+1, err)
		}
		runs[i] = PointRun{Point: p, Name: name, Out: r.Out}
	}
	for i := range runs {
		pr := &runs[i]
		if len(runs) > 1 {
			pr.Out = filepath.Join(r.Out, pr.Name)
		}
		pr.Args = []string{"--config-key", job.ConfigKey, "--tp", strconv.Itoa(row.TP), "--ep", strconv.Itoa(row.EP),
			"--conc", strconv.Itoa(pr.Conc), "--runner-name", r.RunnerName, "--out", pr.Out}
		if row.DPAttn {
			pr.Args = append(pr.Args, "--dp-attn")
		}
		if job.AgentxFast {
			pr.Args = append(pr.Args, "--fast")
		}
		evalOnly := row.EvalOnly != nil && *row.EvalOnly
		if evalOnly {
			// Under the all-evals label every agentic point is an eval
			// point; --all-evals lets sweep run select it (a point of
			// the default selection is one of them).
			pr.Args = append(pr.Args, "--eval", "--all-evals")
		}
		if r.Simulate {
			pr.Args = append(pr.Args, "--simulate")
		} else if !r.OnHost {
			pr.Args = append(pr.Args, "--launch")
			for _, s := range r.Site {
				pr.Args = append(pr.Args, "--site", s)
			}
			if r.Inferencex != "" && !evalOnly {
				pr.Args = append(pr.Args, "--inferencex", r.Inferencex)
			}
		}
		if len(r.ConfigFiles) > 0 {
			pr.Args = append(pr.Args, "--config-files", strings.Join(r.ConfigFiles, ","))
		}
		if r.RunnerConfig != "" {
			pr.Args = append(pr.Args, "--runner-config", r.RunnerConfig)
		}
		if r.Force {
			pr.Args = append(pr.Args, "--force")
		}
	}
	return runs, nil
}

// ReadOnlineRunners reads the runner names GitHub reports online from
// path: a JSON list, or one name a line ("#" starts a comment line). A
// file that cannot be read, or a JSON list that does not decode (at its
// line and column, configs.DecodeJSON), is a *usage.Error naming
// --online-runners.
func ReadOnlineRunners(path string) (map[string]bool, error) {
	data, err := inputfile.Read(path, inputfile.SmallJSON)
	if err != nil {
		return nil, usage.Errorf("--online-runners: %w: give the file of runner names the workflow wrote", err)
	}
	out := map[string]bool{}
	if t := strings.TrimSpace(string(data)); strings.HasPrefix(t, "[") {
		var names []string
		if err := configs.DecodeJSON(path, data, &names, "a JSON list of runner names (or one name a line)"); err != nil {
			return nil, usage.Errorf("--online-runners: %w", err)
		}
		for _, n := range names {
			out[n] = true
		}
		return out, nil
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		if n := strings.TrimSpace(sc.Text()); n != "" && !strings.HasPrefix(n, "#") {
			out[n] = true
		}
	}
	return out, sc.Err()
}

// ReadFanout reads the fan-out JSON `sweep ci matrix` printed. A file
// that cannot be read or is not a fan-out (another JSON file, such as
// one job of it, or {}) is a *usage.Error; a JSON problem carries its
// file, line and column (*configs.Error).
func ReadFanout(path string) (*FanoutJSON, error) {
	data, err := inputfile.Read(path, inputfile.SmallJSON)
	if err != nil {
		return nil, usage.Errorf("--fanout: %w", err)
	}
	const want = "the fan-out JSON `sweep ci matrix` prints"
	var top map[string]json.RawMessage
	if err := configs.DecodeJSON(path, data, &top, want); err != nil {
		return nil, usage.Errorf("--fanout: %w", err)
	}
	if _, points := top["points"]; points {
		if _, runner := top["runner"]; runner {
			return nil, usage.Errorf("--fanout %s: this is one job of a fan-out (its runner and points: what `sweep ci run-job` takes), not the fan-out: give %s", path, want)
		}
	}
	var absent []string
	for _, k := range []string{"sweep", "counts", "jobs"} {
		if _, ok := top[k]; !ok {
			absent = append(absent, strconv.Quote(k))
		}
	}
	if len(absent) > 0 {
		return nil, usage.Errorf("--fanout %s: it lacks %s: want %s", path, strings.Join(absent, ", "), want)
	}
	fan := &FanoutJSON{}
	if err := configs.DecodeJSON(path, data, fan, want); err != nil {
		return nil, usage.Errorf("--fanout: %w", err)
	}
	return fan, nil
}
