package point

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/internal/usage"
	"sweep/recipes"
	"sweep/sweep/launch"
	"sweep/sweep/run"
)

// generator is a matrix generator over the built-in configs.
func generator(t *testing.T) *matrix.Generator {
	t.Helper()
	m, r, err := configs.Load(nil, "")
	require.NoError(t, err)
	return &matrix.Generator{Masters: m, Runners: r}
}

// TestRunRowCarriesTheRecipeFingerprint: recipe_fingerprint was empty in
// results and RESULT_FILENAME lacked InferenceX's _recipe-<fp> suffix.
func TestRunRowCarriesTheRecipeFingerprint(t *testing.T) {
	k := Key{ConfigKey: "qwen3.5-fp8-mi325x-sglang-agentic-mtp", TP: 2, EP: 2, Conc: 1}
	g := generator(t)
	row, err := k.SelectRow(g)
	require.NoError(t, err)
	assert.Equal(t, matrix.Fingerprint(row), row.RecipeFingerprint)
	// The changelog's throughput rows of this key carry the same value.
	rows, err := g.TestConfig(matrix.TestConfigOptions{ConfigKeys: []string{k.ConfigKey}, EvalOptions: matrix.EvalOptions{NoEvals: true}})
	require.NoError(t, err)
	for _, r := range rows {
		if r.TP == 2 && r.EP == 2 && r.Conc == 4 {
			assert.Equal(t, row.RecipeFingerprint, matrix.Fingerprint(r), "concurrency is not part of the fingerprint")
		}
	}
}

// TestRunPlanFileGivesTheSameCommands: a point planned elsewhere
// (`sweep plan --format json`, one element) runs with byte-identical argv
// and environment to the same point run by flags.
func TestRunPlanFileGivesTheSameCommands(t *testing.T) {
	out := t.TempDir()
	r := &Request{Key: Key{ConfigKey: "qwen3.5-fp8-mi325x-sglang-agentic-mtp", TP: 8, EP: 8, Conc: 32, DPAttn: false}}
	r.Plan.Port = 18888
	byFlags, err := r.PlanRow(generator(t), out)
	require.NoError(t, err)
	b, err := json.Marshal([]*recipes.Point{byFlags})
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "point.json")
	require.NoError(t, os.WriteFile(file, b, 0o644))
	fromFile, err := ReadPlanFile(file, out)
	require.NoError(t, err)

	setup := run.Setup{Simulate: true, TimeScale: 50, Executable: "/bin/sweep", AiperfSchema: "aiperf@0.12.0",
		Environ: func(string) (string, bool) { return "", false }}
	a, err := run.FromPlan(byFlags, setup)
	require.NoError(t, err)
	c, err := run.FromPlan(fromFile, setup)
	require.NoError(t, err)
	assert.Equal(t, a.Engine.Argv, c.Engine.Argv)
	assert.Equal(t, a.Engine.Env, c.Engine.Env)
	require.NotNil(t, a.Client)
	assert.Equal(t, a.Client.Argv, c.Client.Argv)
	assert.Equal(t, a.Client.Env, c.Client.Env)
	assert.Equal(t, a.Name, c.Name)

	// A plan for another directory is refused, naming both.
	_, err = ReadPlanFile(file, t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--result-dir")
}

func TestRunMistypedKeyNamesTheClosest(t *testing.T) {
	r := &Request{Key: Key{ConfigKey: "qwen3.5-fp8-mi325x-sglang-agentc-mtp", TP: 2, EP: 2, Conc: 1}}
	_, err := r.PlanRow(generator(t), t.TempDir())
	var ue *usage.Error
	require.ErrorAs(t, err, &ue)
	assert.ErrorContains(t, err, `--config-key: config key "qwen3.5-fp8-mi325x-sglang-agentc-mtp" not found in the master configs (`)
	assert.ErrorContains(t, err, "; closest: qwen3.5-fp8-mi325x-sglang-agentic-mtp")
}

// TestInnerRunArgs: the container's `sweep run --plan` gets the
// simulation, the client and the point options, and --stop-grace only
// when given (no grace as 0s).
func TestInnerRunArgs(t *testing.T) {
	r := &Request{Mode: run.Mode{Simulate: true, SimClock: run.ClockWall, TimeScale: 1.5, SimFault: "crash:3", Builtin: true},
		Point: run.Options{ReadyTimeout: 90 * time.Second, FailedRequestThreshold: 0.1, ALTolerance: 0.05, StopGrace: run.NoGrace}}
	assert.Equal(t, []string{"--simulate", "--sim-clock", "wall", "--time-scale", "1.5", "--sim-fault", "crash:3", "--builtin-client",
		"--ready-timeout", "1m30s", "--failed-request-threshold", "0.1", "--al-tolerance", "0.05"}, r.innerRunArgs())
	r.StopGraceSet = true
	assert.Equal(t, []string{"--stop-grace", "0s"}, r.innerRunArgs()[len(r.innerRunArgs())-2:])
	r = &Request{Mode: run.Mode{Aiperf: "/opt/aiperf", SimGPU: "h200"}, Point: run.Options{StopGrace: 5 * time.Second}, StopGraceSet: true}
	assert.Equal(t, []string{"--aiperf", "/opt/aiperf", "--ready-timeout", "0s", "--failed-request-threshold", "0", "--al-tolerance", "0", "--stop-grace", "5s"}, r.innerRunArgs())
}

// TestReadPlanFileRefusals: not JSON, no point and a point without a row
// are usage errors naming the file.
func TestReadPlanFileRefusals(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct{ data, want string }{
		"garbage": {"{", ".json:1:2: the JSON ends early: want a planned point"},
		"array":   {"[1]", ": a JSON number where an object belongs: want a planned point"},
		"none":    {"[]", "holds no point; give one"},
		"no row":  {"{}", `planned point: no "row"`},
	} {
		file := filepath.Join(dir, name+".json")
		require.NoError(t, os.WriteFile(file, []byte(tc.data), 0o644))
		_, err := ReadPlanFile(file, dir)
		_, ok := errors.AsType[*usage.Error](err)
		assert.True(t, ok, "%s: %v", name, err)
		assert.ErrorContains(t, err, "--plan")
		assert.ErrorContains(t, err, file)
		assert.ErrorContains(t, err, tc.want)
	}
}

// TestReadPlanFileTwoKVRows: a plan of a point whose key has a kv:none
// and a kv:dram row there holds both; run --plan said only "holds 2
// points; give one (e.g. jq '.[i]')". Now it lists each with its index
// and KV offloading and names sweep plan's --kv-offloading.
func TestReadPlanFileTwoKVRows(t *testing.T) {
	out := t.TempDir()
	var pts []*recipes.Point
	for _, kv := range []string{"none", "dram"} {
		r := &Request{Key: Key{ConfigKey: "minimaxm3-fp4-mi355x-vllm-agentic-mtp", TP: 4, EP: 1, Conc: 32, KVOffloading: kv}}
		p, err := r.PlanRow(generator(t), out)
		require.NoError(t, err)
		pts = append(pts, p)
	}
	b, err := json.Marshal(pts)
	require.NoError(t, err)
	file := filepath.Join(out, "plan.json")
	require.NoError(t, os.WriteFile(file, b, 0o644))
	_, err = ReadPlanFile(file, out)
	require.Error(t, err)
	assert.True(t, usage.IsRefusal(err), "exit 2 naming its fix: %v", err)
	assert.Equal(t, "--plan "+file+" holds 2 points; give one: they are one point's rows that differ in KV offloading: plan one with sweep plan --kv-offloading none or dram, or pick one with jq '.[i]':\n"+
		"  [0] minimaxm3_tp4_conc32_kvnone_spec-mtp (tp4 ep1 conc32 kv-offloading none)\n"+
		"  [1] minimaxm3_tp4_conc32_kvdram-lmcache_spec-mtp (tp4 ep1 conc32 kv-offloading dram)", err.Error())
}

// TestReadPlanFileChecksEdits: an edited plan is checked as planning
// checks a point: an engine flag its recipe's schema does not have (it
// reached the engine, which failed at engine-ready), a parser name the
// engine does not register and a value of the wrong type are usage errors
// at the file's line and column of the argv token, naming the schema.
func TestReadPlanFileChecksEdits(t *testing.T) {
	out := t.TempDir()
	r := &Request{Key: Key{ConfigKey: "qwen3.5-fp8-mi325x-sglang-agentic-mtp", TP: 8, EP: 8, Conc: 32}}
	p, err := r.PlanRow(generator(t), out)
	require.NoError(t, err)
	b, err := json.MarshalIndent([]*recipes.Point{p}, "", "  ")
	require.NoError(t, err)
	plan := string(b)
	concAt := strings.Count(plan[:strings.Index(plan, `"conc": 32`)], "\n") + 1
	// at is the file:line:col of the first occurrence of token in data.
	at := func(data, token string) string {
		i := strings.Index(data, token)
		require.GreaterOrEqual(t, i, 0, token)
		return fmt.Sprintf(".json:%d:%d: ", strings.Count(data[:i], "\n")+1, i-strings.LastIndex(data[:i], "\n"))
	}
	bogus := strings.Replace(plan, `"--model-path"`, `"--bogus-flag", "--model-path"`, 1)
	parser := strings.Replace(plan, `"qwen3_coder"`, `"qwen3_codr"`, 1)
	// A value given to a bool flag is a stray token: refused at it, not
	// at the argv's opening line (before, "engine.argv: ...").
	boolValue := strings.Replace(plan, `"--enable-metrics"`, `"--enable-metrics", "yes"`, 1)
	enableMetrics := slices.Index(p.Engine.Argv, "--enable-metrics")
	require.GreaterOrEqual(t, enableMetrics, 0)
	tests := []struct {
		name, data, want string
	}{
		{"as planned", plan, ""},
		{"unknown engine flag", bogus,
			at(bogus, `"--bogus-flag"`) + "engine.argv[3]: engine command, checked with the sglang v0.5.16 flag schema of recipe qwen3.5_fp8_mi325x_mtp:\nsglang v0.5.16 has no flag --bogus-flag"},
		{"misspelt tool-call parser", parser,
			at(parser, `"qwen3_codr"`) + "engine.argv["},
		{"a bool flag given a value", boolValue,
			at(boolValue, `"yes"`) + fmt.Sprintf("engine.argv[%d]: engine command, checked with the sglang v0.5.16 flag schema of recipe qwen3.5_fp8_mi325x_mtp:\nsglang v0.5.16: unrecognized arguments: yes", enableMetrics+1)},
		{"misspelt tool-call parser, named", parser, `--tool-call-parser: "qwen3_codr" is not one of: `},
		{"misspelt tool-call parser, closest", parser, "(did you mean qwen3_coder?)\nedit the plan's engine argv"},
		{"engine flag of the wrong type", regexp.MustCompile(`("--tp-size",\s*)"8"`).ReplaceAllString(plan, `${1}"eight"`), "--tp-size"},
		{"row value of the wrong type", strings.Replace(plan, `"conc": 32`, `"conc": "32"`, 1),
			fmt.Sprintf(".json:%d:7: conc: a JSON string where an integer belongs", concAt)},
		// A null golden on an MTP point ran valid, "golden n/a:
		// no_golden": its acceptance length never judged.
		{"golden removed", strings.Replace(plan, `"golden_al": 3.39`, `"golden_al": null`, 1),
			"golden_al null, but recipe qwen3.5_fp8_mi325x_mtp plans 3.39 for this point: the point's acceptance length is judged against its recipe's golden; restore golden_al 3.39, or plan the point again (sweep plan --format json)"},
		{"golden edited", strings.Replace(plan, `"golden_al": 3.39`, `"golden_al": 2.5`, 1),
			"golden_al 2.5, but recipe qwen3.5_fp8_mi325x_mtp plans 3.39 for this point"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.want != "" {
				require.NotEqual(t, plan, tt.data, "the edit applies")
			}
			file := filepath.Join(t.TempDir(), "point.json")
			require.NoError(t, os.WriteFile(file, []byte(tt.data), 0o644))
			_, err := ReadPlanFile(file, out)
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			_, ok := errors.AsType[*usage.Error](err)
			assert.True(t, ok, "%v", err)
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

// TestReadPlanFileChecksSidecars: an edited plan's sidecar command (an
// LMCache server) is checked against its program's flag schema as
// planning checks it: a flag the schema does not have is a usage error at
// the file's line and column of the argv token, naming the sidecar, the
// schema and the fix. Before, it reached the simulated engine, which
// failed at its start, or the real server.
func TestReadPlanFileChecksSidecars(t *testing.T) {
	out := t.TempDir()
	r := &Request{Key: Key{ConfigKey: "minimaxm3-fp8-mi300x-vllm-agentic-mtp", TP: 8, EP: 1, Conc: 16}}
	p, err := r.PlanRow(generator(t), out)
	require.NoError(t, err)
	require.Len(t, p.Sidecars, 8, "the LMCache point: one server a TP rank")
	b, err := json.MarshalIndent(p, "", "  ")
	require.NoError(t, err)
	plan := string(b)
	first := strings.Index(plan, `"--l1-size-gb"`)
	second := first + 1 + strings.Index(plan[first+1:], `"--l1-size-gb"`)
	bad := plan[:second] + `"--l1-size"` + plan[second+len(`"--l1-size-gb"`):]
	line := strings.Count(bad[:second], "\n") + 1
	col := second - strings.LastIndex(bad[:second], "\n")
	for _, tc := range []struct{ name, data, want string }{
		{"as planned", plan, ""},
		{"unknown server flag", bad, fmt.Sprintf(".json:%d:%d: sidecars[1].command.argv[10]: sidecar lmcache-1's command, checked with the lmcache@0.5.3 flag schema:\n"+
			"lmcache 0.5.3 has no flag --l1-size (did you mean --l1-size-gb?)\n"+
			"lmcache 0.5.3: --l1-size-gb: the L1 size is required (--l1-size-gb GB)\n"+
			"edit the plan's sidecar argv to flags the schema has (sweep schema show lmcache@0.5.3), or plan the point again; "+
			"lmcache@0.5.3 is partial, the flags sweep's recipes pass: a flag the server takes belongs in recipes/schema/data/lmcache@0.5.3.yaml", line, col)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "point.json")
			require.NoError(t, os.WriteFile(file, []byte(tc.data), 0o644))
			_, err := ReadPlanFile(file, out)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			_, ok := errors.AsType[*usage.Error](err)
			assert.True(t, ok, "%v", err)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// TestPlanFileEngineWritesOnlyUnderOut: an edited plan's engine command
// that writes outside --out (a crash dump folder, a metrics file
// directory: the schema's write-path flags) is refused, exit 2, at the
// argv token's line and column in the plan file, naming the flag, the
// path and the fix; written under the point's directory it reads fine,
// and a path the engine only reads (the model) is not held to it.
func TestPlanFileEngineWritesOnlyUnderOut(t *testing.T) {
	out := t.TempDir()
	r := &Request{Key: Key{ConfigKey: "qwen3.5-fp8-mi325x-sglang-agentic-mtp", TP: 8, EP: 8, Conc: 4}}
	p, err := r.PlanRow(generator(t), out)
	require.NoError(t, err)
	fix := ": give it a path under " + out + ", or plan the point again for its directory (sweep plan --format json --result-dir " + out + ")"
	for _, tc := range []struct {
		name  string
		extra []string
		token string // the argv token the refusal points at; "": the plan reads fine
		want  string
	}{
		{"crash dumps under the point", []string{"--crash-dump-folder", out + "/crash"}, "", ""},
		{"crash dumps elsewhere", []string{"--crash-dump-folder", "/tmp/elsewhere"}, `"/tmp/elsewhere"`,
			"engine.argv[%d]: engine command: --crash-dump-folder /tmp/elsewhere writes outside the point's result directory " + out + fix},
		{"metrics files, = form", []string{"--export-metrics-to-file", "--export-metrics-to-file-dir=/var/metrics"}, `"--export-metrics-to-file-dir=/var/metrics"`,
			"engine command: --export-metrics-to-file-dir /var/metrics writes outside"},
		{"a relative path, an abbreviated flag", []string{"--spec-trace", "traces"}, `"traces"`,
			"engine command: --spec-trace-dir traces writes outside"},
		{"the point's parent", []string{"--debug-tensor-dump-output-folder", out + "/.."}, `"` + out + `/.."`,
			"engine command: --debug-tensor-dump-output-folder " + out + "/.. writes outside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := *p
			q.Engine.Argv = append(slices.Clone(p.Engine.Argv), tc.extra...)
			b, err := json.MarshalIndent([]*recipes.Point{&q}, "", "  ")
			require.NoError(t, err)
			file := filepath.Join(t.TempDir(), "point.json")
			require.NoError(t, os.WriteFile(file, b, 0o644))
			_, err = ReadPlanFile(file, out)
			if tc.token == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			plan := string(b)
			at := strings.Index(plan, tc.token)
			require.GreaterOrEqual(t, at, 0)
			line, col := strings.Count(plan[:at], "\n")+1, at-strings.LastIndex(plan[:at], "\n")
			want := tc.want
			if strings.Contains(want, "%d") {
				want = fmt.Sprintf(want, len(q.Engine.Argv)-1)
			}
			assert.ErrorContains(t, err, fmt.Sprintf("--plan: %s:%d:%d: ", file, line, col))
			assert.ErrorContains(t, err, want)
			assert.True(t, usage.IsRefusal(err), "exit 2, naming its fix: %v", err)
		})
	}
}

// TestSelectRowEvals: --eval picks the points InferenceX evaluates by
// default, the highest concurrency per model and runner (tp8 ep1 conc80
// for this key); under the all-evals label every agentic point is an eval
// point, and `ci run-job` runs such a job with AllEvals. Before AllEvals,
// 31 of the 32 sweep-agentic-evals jobs of this key under all-evals were
// refused ("has no point tp2 ep2 dp-attn=false conc1; its eval points are:
// --tp 8 --ep 1 --conc 80") on a GPU runner.
func TestSelectRowEvals(t *testing.T) {
	const key = "qwen3.5-fp8-mi325x-sglang-agentic-mtp"
	g := generator(t)
	for _, tc := range []struct {
		name string
		k    Key
		err  string // "": the row, an eval row when k.Eval
	}{
		{"the default eval point", Key{ConfigKey: key, TP: 8, EP: 1, Conc: 80, Eval: true}, ""},
		{"another point is no default eval point", Key{ConfigKey: key, TP: 2, EP: 2, Conc: 1, Eval: true},
			"has no point tp2 ep2 dp-attn=false conc1; its eval points are:\n  --tp 8 --ep 1 --conc 80"},
		{"with all-evals every point is one", Key{ConfigKey: key, TP: 2, EP: 2, Conc: 1, Eval: true, AllEvals: true}, ""},
		{"with all-evals the default one too", Key{ConfigKey: key, TP: 8, EP: 1, Conc: 80, Eval: true, AllEvals: true}, ""},
		{"all-evals alone is no eval", Key{ConfigKey: key, TP: 2, EP: 2, Conc: 1, AllEvals: true}, ""},
		{"all-evals is no wider than the key", Key{ConfigKey: key, TP: 2, EP: 2, Conc: 3, Eval: true, AllEvals: true},
			"has no point tp2 ep2 dp-attn=false conc3; its eval points are:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row, err := tc.k.SelectRow(g)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []int{tc.k.TP, tc.k.EP, tc.k.Conc}, []int{row.TP, row.EP, row.Conc})
			assert.Equal(t, tc.k.Eval, row.IsEval() && row.EvalOnly != nil && *row.EvalOnly)
		})
	}
}

// TestReleased: a docker run that failed (exit 125, say) before making
// its container was followed by "container ... removed" for a container
// that never existed; the release now says none was left, and says
// "removed" only when a run's container is gone.
func TestReleased(t *testing.T) {
	docker := &launch.Plan{ContainerName: "bmk-server-mi325x-tw_4-69863f02"}
	slurmPlan := &launch.Plan{}
	runErr := errors.New("launch run (docker run): exit status 125")
	for _, tc := range []struct {
		name   string
		pl     *launch.Plan
		res    launch.Result
		runErr error
		want   string
	}{
		{"docker run failed, no container", docker, launch.Result{NoContainer: true}, runErr, "no container bmk-server-mi325x-tw_4-69863f02 left to remove"},
		{"docker run's --rm removed it", docker, launch.Result{NoContainer: true}, nil, "container bmk-server-mi325x-tw_4-69863f02 removed"},
		{"docker rm -f removed it", docker, launch.Result{}, runErr, "container bmk-server-mi325x-tw_4-69863f02 removed"},
		{"docker unreachable", docker, launch.Result{ReleaseErr: errors.New("daemon down")}, nil,
			"container bmk-server-mi325x-tw_4-69863f02 could NOT be removed (remove it with docker rm -f bmk-server-mi325x-tw_4-69863f02 once docker answers): daemon down"},
		{"allocation", slurmPlan, launch.Result{JobID: "389"}, runErr, "allocation 389 released"},
		{"allocation not released", slurmPlan, launch.Result{JobID: "389", ReleaseErr: errors.New("scancel: timeout")}, nil, "allocation 389 release FAILED: scancel: timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, released(tc.pl, tc.res, tc.runErr))
		})
	}
}

// TestPlanFileClientWritesOnlyUnderOut: a plan file whose result_dir was
// edited to --out but whose client still wrote into another point's
// aiperf_artifacts/ ran, wrote there (the other point's completed
// artifacts changed) and failed "nothing to aggregate" in its own
// directory. The client's written paths are checked before anything
// runs: its artifact directory must be the one the run reads, and no
// other path it writes may lie outside --out; a path it only reads may.
func TestPlanFileClientWritesOnlyUnderOut(t *testing.T) {
	out, other := t.TempDir(), t.TempDir()
	r := &Request{Key: Key{ConfigKey: "qwen3.5-fp8-mi325x-sglang-agentic-mtp", TP: 8, EP: 8, Conc: 4}}
	p, err := r.PlanRow(generator(t), out)
	require.NoError(t, err)
	setup := run.Setup{Simulate: true, TimeScale: 50, Executable: "/bin/sweep", AiperfSchema: "aiperf@0.12.0",
		Environ: func(string) (string, bool) { return "", false }}
	artifacts := out + "/aiperf_artifacts"
	edit := func(from, to string, more ...string) func([]string) []string {
		return func(argv []string) []string {
			i := slices.Index(argv, from)
			require.GreaterOrEqual(t, i, 0, "%s in %q", from, argv)
			argv = slices.Clone(argv)
			argv[i+1] = to
			return append(argv, more...)
		}
	}
	for _, tc := range []struct {
		name string
		edit func([]string) []string
		want string // "": runs, its artifacts read where the client writes them
	}{
		{"as planned", func(a []string) []string { return a }, ""},
		{"a trace file read elsewhere", func(a []string) []string { return append(slices.Clone(a), "--input-file", "/data/traces.jsonl") }, ""},
		{"another point's artifacts", edit("--output-artifact-dir", other+"/aiperf_artifacts"),
			"client command: --output-artifact-dir " + other + "/aiperf_artifacts: the point's artifacts are read from " + artifacts + " (its result directory's aiperf_artifacts/); plan the point again for its directory (sweep plan --format json --result-dir " + out + ") or edit the path"},
		{"a subdirectory", edit("--output-artifact-dir", artifacts+"/sub"), "client command: --output-artifact-dir " + artifacts + "/sub: the point's artifacts are read from " + artifacts},
		{"by its alias", func(a []string) []string {
			a = edit("--output-artifact-dir", other)(a)
			a[slices.Index(a, "--output-artifact-dir")] = "--artifact-dir"
			return a
		}, "client command: --artifact-dir " + other + ": the point's artifacts are read from " + artifacts},
		{"no artifact directory", func(a []string) []string {
			i := slices.Index(a, "--output-artifact-dir")
			return slices.Delete(slices.Clone(a), i, i+2)
		}, "client command has no --output-artifact-dir: the client would write its artifacts into its working directory, not " + artifacts},
		{"a socket outside", edit("--output-artifact-dir", artifacts, "--zmq-ipc-path", other),
			"client command: --zmq-ipc-path " + other + " writes outside the point's result directory " + out + "; plan the point again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := *p
			q.Client = &recipes.Command{Argv: tc.edit(p.Client.Argv), Env: p.Client.Env}
			b, err := json.Marshal([]*recipes.Point{&q})
			require.NoError(t, err)
			file := filepath.Join(t.TempDir(), "point.json")
			require.NoError(t, os.WriteFile(file, b, 0o644))
			fromFile, err := ReadPlanFile(file, out)
			require.NoError(t, err)
			spec, err := run.FromPlan(fromFile, setup)
			if tc.want == "" {
				require.NoError(t, err)
				assert.Equal(t, artifacts, spec.ArtifactDir)
				return
			}
			assert.ErrorContains(t, err, tc.want)
			assert.True(t, usage.IsRefusal(err), "exit 2, naming its fix: %v", err)
		})
	}
}

// TestSelectRowKVOffloading: the FP4 MI355X key has a kv:none and a
// kv:dram point at tp4 conc32. `sweep run --config-key K --tp 4 --conc 32`
// silently took the kv:none one and nothing selected the other; now the
// choice is refused listing both with the --kv-offloading that picks
// each, and a point of one row (conc40, kv:dram only; conc28, kv:none
// only) needs no flag, as scripts call it.
func TestSelectRowKVOffloading(t *testing.T) {
	const key = "minimaxm3-fp4-mi355x-vllm-agentic-mtp"
	g := generator(t)
	for _, tc := range []struct {
		name string
		k    Key
		kv   string // the row's; "" when refused
		err  string
	}{
		{"two rows, no flag", Key{ConfigKey: key, TP: 4, EP: 1, Conc: 32}, "",
			key + " has 2 points tp4 ep1 dp-attn=false conc32 that differ in KV offloading: add the --kv-offloading that picks one of them:\n" +
				"  --kv-offloading none  (minimaxm3_tp4_conc32_kvnone_spec-mtp)\n" +
				"  --kv-offloading dram  (minimaxm3_tp4_conc32_kvdram-lmcache_spec-mtp)"},
		{"two rows, dram", Key{ConfigKey: key, TP: 4, EP: 1, Conc: 32, KVOffloading: "dram"}, "dram", ""},
		{"two rows, none", Key{ConfigKey: key, TP: 4, EP: 1, Conc: 32, KVOffloading: "none"}, "none", ""},
		{"one dram row, no flag", Key{ConfigKey: key, TP: 4, EP: 1, Conc: 40}, "dram", ""},
		{"one none row, no flag", Key{ConfigKey: key, TP: 4, EP: 1, Conc: 28}, "none", ""},
		{"one dram row, none asked", Key{ConfigKey: key, TP: 4, EP: 1, Conc: 40, KVOffloading: "none"}, "",
			key + "'s point tp4 ep1 dp-attn=false conc40 is a kv-offloading dram point only, not none (minimaxm3_tp4_conc40_kvdram-lmcache_spec-mtp): drop --kv-offloading, or give --kv-offloading dram"},
		{"one none row, dram asked", Key{ConfigKey: key, TP: 4, EP: 1, Conc: 28, KVOffloading: "dram"}, "",
			key + "'s point tp4 ep1 dp-attn=false conc28 is a kv-offloading none point only, not dram"},
		{"a key without dram rows", Key{ConfigKey: "glm5.2-fp8-mi325x-sglang-agentic-mtp", TP: 8, EP: 1, Conc: 999, KVOffloading: "dram"}, "",
			"glm5.2-fp8-mi325x-sglang-agentic-mtp has no point tp8 ep1 dp-attn=false conc999 kv-offloading=dram (it has no kv-offloading dram point at all: drop --kv-offloading); its points are:\n  --tp "},
		{"no such mode", Key{ConfigKey: key, TP: 4, EP: 1, Conc: 32, KVOffloading: "ssd"}, "",
			`--kv-offloading "ssd": want one of none, dram`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row, err := tc.k.SelectRow(g)
			if tc.err != "" {
				require.Error(t, err)
				assert.True(t, strings.HasPrefix(err.Error(), tc.err), "got %s\nwant %s...", err, tc.err)
				_, isUsage := errors.AsType[*usage.Error](err)
				assert.True(t, isUsage, "a usage error (exit 2): %v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []any{4, 1, tc.k.Conc, tc.kv}, []any{row.TP, row.EP, row.Conc, row.KVOffloading})
			assert.NotEmpty(t, row.RecipeFingerprint)
		})
	}
	// A point that does not exist lists the two rows of conc32 with the
	// flag that picks each, and the others without it.
	_, err := Key{ConfigKey: key, TP: 4, EP: 1, Conc: 33}.SelectRow(g)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "\n  --tp 4 --ep 1 --conc 32 --kv-offloading none\n")
	assert.Contains(t, err.Error(), "\n  --tp 4 --ep 1 --conc 32 --kv-offloading dram\n")
	assert.True(t, strings.HasSuffix(err.Error(), "\n  --tp 4 --ep 1 --conc 40"), "got %s", err)
	// With --kv-offloading given, every point is listed with its mode:
	// what differs may be the mode asked for.
	_, err = Key{ConfigKey: key, TP: 4, EP: 1, Conc: 33, KVOffloading: "none"}.SelectRow(g)
	require.Error(t, err)
	assert.True(t, strings.HasSuffix(err.Error(), "\n  --tp 4 --ep 1 --conc 40 --kv-offloading dram"), "got %s", err)
}
