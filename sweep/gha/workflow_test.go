package gha

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/recipes"
)

// The PR sweep's workflows, read as GitHub reads them: these tests hold
// the properties GitHub's guidance for self-hosted runners asks of a
// workflow that pull requests trigger (README: "CI: what a sweep label
// approves").

type workflow struct {
	On   map[string]any    `yaml:"on"`
	Jobs map[string]*wfJob `yaml:"jobs"`
}

type wfJob struct {
	If          string            `yaml:"if"`
	Needs       any               `yaml:"needs"`
	RunsOn      any               `yaml:"runs-on"`
	Uses        string            `yaml:"uses"`
	With        map[string]string `yaml:"with"`
	Secrets     any               `yaml:"secrets"`
	Permissions map[string]string `yaml:"permissions"`
	Env         map[string]string `yaml:"env"`
	Steps       []wfStep          `yaml:"steps"`
}

type wfStep struct {
	Name       string            `yaml:"name"`
	If         string            `yaml:"if"`
	Uses       string            `yaml:"uses"`
	With       map[string]string `yaml:"with"`
	Env        map[string]string `yaml:"env"`
	Run        string            `yaml:"run"`
	WorkingDir string            `yaml:"working-directory"`
}

func readWorkflow(t *testing.T, name string) *workflow {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", ".github", "workflows", name))
	require.NoError(t, err)
	var w workflow
	require.NoError(t, yaml.Unmarshal(data, &w), name)
	return &w
}

// checksOutPR reports whether a job checks out the pull request's head.
func (j *wfJob) checksOutPR() bool {
	for _, s := range j.Steps {
		if strings.HasPrefix(s.Uses, "actions/checkout@") && (s.With["repository"] != "" || s.With["ref"] != "") {
			return true
		}
	}
	return false
}

// text is everything a job passes to its steps, for finding secrets.
func (j *wfJob) text(t *testing.T) string {
	data, err := yaml.Marshal(j)
	require.NoError(t, err)
	return string(data)
}

// TestWorkflowRunsBaseBranchCode: sweep.yml is a pull_request_target
// workflow (this file and the tool come from the base branch; a
// pull_request workflow runs the pull request's own copy of both), and
// no step of sweep.yml or sweep-point.yml runs code from the pull
// request: the tool is built with go build in tool/ (the base checkout),
// the pull request's checkout (pr/, at the approved SHA, no credentials)
// is only named as data to --config-files, --changelog or --head-file.
func TestWorkflowRunsBaseBranchCode(t *testing.T) {
	sweep := readWorkflow(t, "sweep.yml")
	events := make([]string, 0, len(sweep.On))
	for e := range sweep.On {
		events = append(events, e)
	}
	assert.Equal(t, []string{"pull_request_target"}, events, "sweep.yml's triggers")
	prData := regexp.MustCompile(`(\S+)\s+"?(pr/[^\s",]*)`)
	for _, name := range []string{"sweep.yml", "sweep-point.yml"} {
		w := readWorkflow(t, name)
		for jn, j := range w.Jobs {
			if j.Uses != "" {
				assert.Equal(t, "./.github/workflows/sweep-point.yml", j.Uses, "%s %s: calls only the base branch's sweep-point.yml", name, jn)
				assert.Nil(t, j.Secrets, "%s %s: passes no secrets", name, jn)
			}
			for _, s := range j.Steps {
				where := name + " " + jn + " " + s.Name
				if strings.HasPrefix(s.Uses, "actions/checkout@") {
					assert.Equal(t, "false", s.With["persist-credentials"], "%s: a checkout keeps no token", where)
					if s.With["repository"] == inferencexRepo {
						assert.Equal(t, "inferencex", s.With["path"], "%s: InferenceX is checked out in inferencex/", where)
						assert.Regexp(t, "^"+recipes.LauncherCommit+"[0-9a-f]{31}$", s.With["ref"], "%s: at the commit sweep mirrors, pinned", where)
						continue
					}
					if s.With["ref"] != "" || s.With["repository"] != "" {
						assert.Equal(t, "pr", s.With["path"], "%s: the pull request is checked out in pr/", where)
						assert.Contains(t, []string{"${{ github.event.pull_request.head.sha }}", "${{ inputs.head-sha }}"}, s.With["ref"], "%s: at the approved head SHA", where)
					} else {
						assert.Equal(t, "tool", s.With["path"], "%s: the base branch is checked out in tool/", where)
					}
				}
				assert.False(t, strings.HasPrefix(s.WorkingDir, "pr") || strings.HasPrefix(s.WorkingDir, "inferencex"), "%s: nothing runs in pr/ or inferencex/", where)
				assert.NotRegexp(t, `\bgo (run|test|generate)\b|\bmake\b|\bbash (pr|inferencex)/|\./(pr|inferencex)/`, s.Run, "%s: runs no pull-request or InferenceX code", where)
				if strings.Contains(s.Run, "go build") {
					assert.Equal(t, "tool", s.WorkingDir, "%s: builds the base branch's tool", where)
				}
				for _, m := range prData.FindAllStringSubmatch(s.Run, -1) {
					assert.Contains(t, []string{"--config-files", "--changelog", "--head-file"}, m[1], "%s: %s is data", where, m[2])
				}
				if strings.Contains(s.Run, "ci matrix") || strings.Contains(s.Run, " validate") || strings.Contains(s.Run, "ci run-job") {
					assert.Contains(t, s.Run, "--runner-config tool/configs/runners.yaml", "%s: runner labels are checked against the base branch's runners.yaml", where)
				}
			}
		}
	}
	// The self-hosted job's label comes from the fan-out, which the base
	// branch's tool computed from validated configs.
	point := readWorkflow(t, "sweep-point.yml").Jobs["point"]
	require.NotNil(t, point)
	assert.Equal(t, []any{"self-hosted", "${{ inputs.runner }}"}, point.RunsOn)
	for jn, j := range sweep.Jobs {
		if j.Uses != "" {
			assert.Equal(t, "${{ matrix.job.runner }}", j.With["runner"], jn)
			assert.Equal(t, "${{ github.event.pull_request.head.sha }}", j.With["head-sha"], jn)
		}
	}
}

// inferencexRepo is the repository whose checkout gives sweep-point.yml
// InferenceX's client.
const inferencexRepo = "SemiAnalysisAI/InferenceX"

// TestWorkflowMeasuresWithInferenceXsClient: the PR sweep's agentic
// points measure with InferenceX's own client unless the workflow's
// client input says otherwise: its checkout at the commit sweep mirrors,
// with submodules (utils/aiperf, the aiperf fork), and uv for the per-job
// venv, handed to ci run-job --inferencex. Before, ci run-job ran without
// it, so each launched point measured with whatever the image had: the
// built-in load generator in InferenceX's images, which have no aiperf.
func TestWorkflowMeasuresWithInferenceXsClient(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", ".github", "workflows", "sweep-point.yml"))
	require.NoError(t, err)
	var w struct {
		On struct {
			WorkflowCall struct {
				Inputs map[string]map[string]any `yaml:"inputs"`
			} `yaml:"workflow_call"`
		} `yaml:"on"`
	}
	require.NoError(t, yaml.Unmarshal(data, &w))
	client := w.On.WorkflowCall.Inputs["client"]
	require.NotNil(t, client, "sweep-point.yml has a client input")
	assert.Equal(t, "inferencex", client["default"], "InferenceX's client by default")
	for jn, j := range readWorkflow(t, "sweep.yml").Jobs {
		if j.Uses != "" {
			assert.NotContains(t, j.With, "client", "%s: the default client", jn)
		}
	}
	steps := map[string]wfStep{}
	for _, s := range readWorkflow(t, "sweep-point.yml").Jobs["point"].Steps {
		steps[s.Name] = s
	}
	ix := steps["Check out InferenceX (its aiperf)"]
	assert.Equal(t, inferencexRepo, ix.With["repository"])
	assert.Equal(t, "true", ix.With["submodules"], "utils/aiperf is a submodule")
	assert.Equal(t, "inputs.client == 'inferencex'", ix.If)
	uv := steps["Install uv (mounted into the image for the aiperf venv)"]
	assert.True(t, strings.HasPrefix(uv.Uses, "astral-sh/setup-uv@"), uv.Uses)
	assert.Equal(t, "inputs.client == 'inferencex'", uv.If)
	runStep := steps["Run the point"]
	assert.Equal(t, "${{ inputs.client }}", runStep.Env["CLIENT"])
	assert.Contains(t, runStep.Run, `if [ "$CLIENT" = inferencex ]; then
  client=(--inferencex `+ix.With["path"]+`)`)
	assert.Contains(t, runStep.Run, `"${client[@]}"`)
	assert.Contains(t, steps["Check the client input"].Run, "inferencex|image) ;;")
}

// TestWorkflowDropsApprovalOnPush: a push (synchronize) runs only the job
// that removes every primary sweep label, so the next run needs a
// maintainer's new label; every other job runs only on labeled.
func TestWorkflowDropsApprovalOnPush(t *testing.T) {
	w := readWorkflow(t, "sweep.yml")
	types, _ := w.On["pull_request_target"].(map[string]any)["types"].([]any)
	assert.ElementsMatch(t, []any{"labeled", "synchronize"}, types)
	var drop []string
	for jn, j := range w.Jobs {
		if j.Needs != nil {
			continue // skipped with what it needs
		}
		switch j.If {
		case "github.event.action == 'synchronize'":
			drop = append(drop, jn)
			assert.Equal(t, map[string]string{"pull-requests": "write"}, j.Permissions, jn)
			assert.False(t, j.checksOutPR(), jn)
			script := j.Steps[len(j.Steps)-1].Run
			assert.Contains(t, script, `--method DELETE "repos/$REPO/issues/$PR/labels/$label"`)
			for _, l := range primaryLabels {
				assert.Contains(t, script, l, "%s removes %s", jn, l)
			}
		case "github.event.action == 'labeled'":
		default:
			t.Errorf("job %s runs on %q: want only labeled (or the label removal on synchronize)", jn, j.If)
		}
	}
	assert.Len(t, drop, 1, "one job drops the approval")
}

// TestWorkflowSecrets: no job that reads the pull request's files sees a
// secret; RUNNERS_TOKEN is read by a job that checks out nothing.
func TestWorkflowSecrets(t *testing.T) {
	for _, name := range []string{"sweep.yml", "sweep-point.yml"} {
		for jn, j := range readWorkflow(t, name).Jobs {
			text := j.text(t)
			if j.checksOutPR() || j.Uses != "" {
				assert.NotContains(t, text, "secrets.", "%s %s reads pull-request data", name, jn)
			}
			if strings.Contains(text, "secrets.") {
				for _, s := range j.Steps {
					assert.Empty(t, s.Uses, "%s %s holds a secret: no action, no checkout", name, jn)
				}
			}
		}
	}
}

// TestWorkflowRunsItsFamilies: sweep.yml has one sweep-point job per
// family of WorkflowFamilies (named for it) besides the canary, each
// waiting for the canary and skipped when it failed, and collect waits
// for all of them; the fan-out reports every other family as not run.
// Before, sweep-agentic and sweep-agentic-evals did not wait for the
// canary, and the fixed-seq-len families, which only wait for it, had
// jobs that could not succeed.
func TestWorkflowRunsItsFamilies(t *testing.T) {
	w := readWorkflow(t, "sweep.yml")
	var fams []string
	for jn, j := range w.Jobs {
		if j.Uses == "" {
			continue
		}
		assert.Equal(t, jn, j.With["family"], "job %s's family", jn)
		assert.Contains(t, j.With["job"], "matrix.job", jn)
		if jn == "canary" {
			assert.Equal(t, "setup", j.Needs, jn)
			assert.Equal(t, "fromJson(needs.setup.outputs.fanout).counts.canary > 0", j.If, jn)
			continue
		}
		fams = append(fams, jn)
		assert.Equal(t, []any{"setup", "canary"}, j.Needs, "%s waits for the canary", jn)
		assert.Equal(t, "${{ !cancelled() && needs.setup.result == 'success' && needs.canary.result != 'failure' && fromJson(needs.setup.outputs.fanout).counts['"+jn+"'] > 0 }}",
			j.If, "%s runs unless the canary failed (it is skipped without one)", jn)
	}
	sort.Strings(fams)
	want := WorkflowFamilies()
	sort.Strings(want)
	assert.Equal(t, want, fams)
	for _, f := range want {
		assert.Contains(t, families, f)
	}
	needs, _ := w.Jobs["collect"].Needs.([]any)
	for _, f := range append(fams, "canary", "setup") {
		assert.True(t, slices.Contains(needs, any(f)), "collect needs %s", f)
	}
}

// TestWorkflowNamesUploadsByThePoint: sweep-point.yml names what it
// uploads by the kind of the job's point (the first artifact name `ci
// matrix` gave it), never by the job's family. Before, the prefix came
// from the family's name, so the canary, an agentic point in the job
// named "canary", would upload its result as bmk_<name> and none of its
// aiperf artifacts. An eval-only point uploads lm-eval's output under its
// eval_ name; before, it uploaded none of it and tried a result file it
// never writes.
func TestWorkflowNamesUploadsByThePoint(t *testing.T) {
	job := readWorkflow(t, "sweep-point.yml").Jobs["point"]
	require.NotNil(t, job)
	assert.Equal(t, "${{ fromJson(inputs.job).points[0].artifacts[0] }}", job.Env["FIRST_ARTIFACT"])
	steps := map[string]wfStep{}
	for _, s := range job.Steps {
		steps[s.Name] = s
		data, err := yaml.Marshal(s)
		require.NoError(t, err)
		assert.NotContains(t, string(data), "inputs.family", "step %q", s.Name)
	}
	isAgentic := "startsWith(env.FIRST_ARTIFACT, '" + agenticResultArtifact + "')"
	assert.Equal(t, "${{ "+isAgentic+" && '"+agenticResultArtifact+"' || '"+resultArtifact+"' }}${{ steps.run.outputs.result-filename }}",
		steps["Upload the result"].With["name"])
	assert.Contains(t, steps["Upload the artifacts"].If, isAgentic)
	// An eval-only point uploads lm-eval's output under its eval_
	// artifact name, and no result file (it writes none).
	assert.Contains(t, steps["Upload the result"].If, "startsWith(env.FIRST_ARTIFACT, '"+resultArtifact+"')")
	assert.Contains(t, steps["Upload the eval results"].If, "startsWith(env.FIRST_ARTIFACT, 'eval_')")
	assert.Equal(t, "eval_${{ fromJson(inputs.job).config['exp-name'] }}_${{ steps.run.outputs.result-filename }}", steps["Upload the eval results"].With["name"])
	assert.Equal(t, "results/eval_results/**", steps["Upload the eval results"].With["path"])

	// The kinds the expression tells apart are the fan-out's.
	row := func(kind matrix.Kind, eval bool) *matrix.Row {
		r := &matrix.Row{Kind: kind, ConfigKey: "k", ExpName: "x", Model: "Qwen/Qwen3.5-397B-A17B-FP8", Runner: "mi355x",
			Framework: "sglang", Precision: "fp8", Parallelism: configs.Parallelism{TP: 8, EP: 1}, Conc: 4}
		if eval {
			r.RunEval, r.EvalOnly = new(true), new(true)
		}
		return r
	}
	first := func(r *matrix.Row) string { return point(r).Artifacts[0] }
	assert.True(t, strings.HasPrefix(first(row(matrix.AgenticSingleNode, false)), agenticResultArtifact))
	assert.True(t, strings.HasPrefix(first(row(matrix.FixedSingleNode, false)), resultArtifact))
	assert.False(t, strings.HasPrefix(first(row(matrix.FixedSingleNode, false)), agenticResultArtifact))
	eval := point(row(matrix.AgenticSingleNode, true))
	assert.Equal(t, "eval_x_"+eval.ResultFilename, eval.Artifacts[0], "eval_<exp-name>_<RESULT_FILENAME>")
	var config struct {
		ExpName string `json:"exp-name"`
	}
	require.NoError(t, json.Unmarshal(pointJob(row(matrix.AgenticSingleNode, true), Mode{}).Config, &config))
	assert.Equal(t, "x", config.ExpName, "the job's config holds exp-name")
}

// TestWorkflowRunsOneJobPerPoint: sweep.yml's fan-out is one job per point
// (no --per arm): sweep-point.yml uploads the one result file a job of
// one point writes, results/<RESULT_FILENAME>.json, under the point's
// artifact names. A job of several points (--per arm) writes each point
// into results/<RESULT_FILENAME>/ and would upload none of them.
func TestWorkflowRunsOneJobPerPoint(t *testing.T) {
	var matrixRuns int
	for _, s := range readWorkflow(t, "sweep.yml").Jobs["setup"].Steps {
		if strings.Contains(s.Run, "ci matrix") {
			matrixRuns++
			assert.NotContains(t, s.Run, "--per", "%s: one job per point", s.Name)
		}
	}
	assert.Equal(t, 1, matrixRuns)
	var upload bool
	for _, s := range readWorkflow(t, "sweep-point.yml").Jobs["point"].Steps {
		if s.Name == "Upload the result" {
			upload = true
			assert.Equal(t, "results/${{ steps.run.outputs.result-filename }}.json", s.With["path"])
		}
	}
	assert.True(t, upload, "sweep-point.yml uploads the result")
}
