package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/internal/cli"
	"sweep/internal/simproto"
	"sweep/sweep/abgate"
	"sweep/sweep/abgate/bfclsim"
	"sweep/sweep/abgate/leg"
	"sweep/sweep/gha"
	"sweep/sweep/run"
)

const abLegsDir = "../../testdata/ab/legs"

// TestABRunSimulated runs simulated legs end to end: both arms' servers
// (arm b behind a router) through sweep/run, sim-bfcl in place of bfcl
// per arm in fresh roots, the comparison, the report files and the exit
// code. Each leg plants its verdict in the stand-in's case model.
func TestABRunSimulated(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	tests := []struct {
		leg     string
		exit    int
		verdict abgate.Decision
		planted float64 // Δ in points
		cases   int     // of the primary metric
	}{
		{"regression", exitABRegression, abgate.Regression, -4, 4441},
		{"pass", exitOK, abgate.Passed, 0, 4441},
		{"inconclusive", exitABInconclusive, abgate.Inconclusive, -1.5, 200},
		{"incomplete", exitABIncomplete, abgate.Incomplete, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.leg, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "leg")
			code, stdout, stderr := runCLI(t, "ab", "run", filepath.Join(abLegsDir, tc.leg+".yaml"), "--simulate", "--out", out, "--stop-grace", "3s", "--format", "json")
			require.Equal(t, tc.exit, code, "stderr:\n%s", stderr)
			var rep abgate.Report
			require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
			assert.Equal(t, tc.verdict, rep.Verdict)
			file, err := os.ReadFile(filepath.Join(out, "report.json"))
			require.NoError(t, err)
			assert.JSONEq(t, stdout, string(file), "stdout is report.json")
			table, err := os.ReadFile(filepath.Join(out, "report.md"))
			require.NoError(t, err)
			assert.Contains(t, string(table), "verdict: "+string(tc.verdict))
			// The report says it was simulated, and of which leg, model and roots.
			require.NotNil(t, rep.Simulated)
			assert.True(t, *rep.Simulated)
			assert.Equal(t, tc.leg, rep.Leg)
			assert.Equal(t, "MiniMaxAI/MiniMax-M3-MXFP8-FC", rep.Model)
			assert.Equal(t, abgate.ReportRoots{A: []string{filepath.Join(out, "a", "bfcl-r1")}, B: []string{filepath.Join(out, "b", "bfcl-r1")}}, rep.Roots)
			// The report records what each arm's server ran, from its plan.
			require.Len(t, rep.Servers, 2)
			for i, s := range rep.Servers {
				assert.Equal(t, []string{[]string{"a", "b"}[i], "minimaxm3-fp8-mi325x-vllm-agentic-mtp", "fp8", "vllm/vllm-openai-rocm:v0.27.1", "MiniMaxAI/MiniMax-M3-MXFP8", "MiniMaxAI/MiniMax-M3-MXFP8"},
					[]string{s.Arm, s.ConfigKey, s.Precision, s.Image, s.ModelPath, s.ServedModel})
				assert.Equal(t, []string{"vllm", "serve", "MiniMaxAI/MiniMax-M3-MXFP8"}, s.EngineArgv[:3])
			}
			assert.Nil(t, rep.Servers[0].RouterArgv)
			assert.Equal(t, []string{"python3", "-m", "smg.launch_router"}, rep.Servers[1].RouterArgv[:3])
			require.NotNil(t, rep.Servers[1].RouterParsers)
			assert.Equal(t, "minimax_m2", rep.Servers[1].RouterParsers.ToolCall)
			assert.Contains(t, string(table), "\nArms as launched:\n- A (vllm): config key minimaxm3-fp8-mi325x-vllm-agentic-mtp (fp8)")
			assert.Contains(t, string(table), " (SIMULATED)\n\n**Simulated**: sweep's simulated engines and router, and sweep sim-bfcl in place of bfcl")
			assert.Contains(t, string(table), "Simulated: yes.")
			for _, arm := range []string{"a", "b"} {
				root := filepath.Join(out, arm, "bfcl-r1")
				assert.DirExists(t, filepath.Join(root, "score", "MiniMaxAI_MiniMax-M3-MXFP8-FC"))
				gen, err := os.ReadFile(filepath.Join(out, arm, "bfcl-r1-generate.log"))
				require.NoError(t, err)
				n := len(rep.Categories)
				assert.Contains(t, string(gen), "answered "+itoa(n)+" of "+itoa(n), "every category asked the arm's server")
				var srv run.Record
				data, err := os.ReadFile(filepath.Join(out, arm, "server", run.ServerRecordFile))
				require.NoError(t, err)
				require.NoError(t, json.Unmarshal(data, &srv))
				assert.True(t, srv.OK, "%s's server record: %+v", arm, srv.Stages)
				for name, p := range srv.Processes {
					assert.ErrorIs(t, syscall.Kill(-p.PID, 0), syscall.ESRCH, "%s %s survived the leg", arm, name)
				}
				_, router := srv.Processes["router"]
				assert.Equal(t, arm == "b", router, "arm b runs behind the router")
				// bfcl takes no part in the virtual clock: the engine runs
				// on the compressed wall clock, as every simulation whose
				// client is not the built-in load generator does.
				cmds, err := os.ReadFile(filepath.Join(out, arm, "server", "server_command.txt"))
				require.NoError(t, err)
				assert.Contains(t, string(cmds), "SWEEP_SIM_TIME_SCALE=150")
				assert.NotContains(t, string(cmds), "SWEEP_SIM_CLOCK=virtual")
			}
			if tc.verdict == abgate.Incomplete {
				require.NotEmpty(t, rep.Problems)
				assert.Equal(t, abgate.ReasonInfraErrorRate, rep.Problems[0].Reason)
				assert.Equal(t, "b", rep.Problems[0].Arm)
				return
			}
			require.Empty(t, rep.Problems)
			n := 0
			for _, c := range rep.Categories {
				n += c.Cases
			}
			assert.Equal(t, tc.cases, n)
			// Within 3 SDs of the run noise (3 % flips per arm and run).
			sd := 100 * math.Sqrt(2*0.03*0.97/float64(n))
			assert.InDelta(t, tc.planted, *rep.Primary.Delta, 3*sd, "planted Δ")
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestABRunRunFailed: a leg whose servers cannot start (no engine on
// this machine) is INCOMPLETE with run-failed problems naming each arm,
// never a silent zero.
func TestABRunRunFailed(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	out := filepath.Join(t.TempDir(), "leg")
	code, stdout, stderr := runCLI(t, "ab", "run", filepath.Join(abLegsDir, "inconclusive.yaml"), "--out", out,
		"--bfcl", filepath.Join(t.TempDir(), "no-bfcl"), "--port", "1", "--ready-timeout", "1s", "--format", "json")
	require.Equal(t, exitABIncomplete, code, "stderr:\n%s", stderr)
	var rep abgate.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
	var arms []string
	for _, p := range rep.Problems {
		if p.Reason == abgate.ReasonRunFailed {
			arms = append(arms, p.Arm)
		}
	}
	assert.Equal(t, []string{"a", "b"}, arms, "one run-failed problem per arm: %+v", rep.Problems)
}

// TestABRunServerDies: an arm's engine that crashes during bfcl generate
// is a run-failed problem of that replicate, listed first, naming the
// process, its exit status, the line of its log that says why and the
// log; the replicates after it are not run against the dead server (each
// is run-failed), and the inference errors it caused are still listed.
func TestABRunServerDies(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	t.Setenv(simproto.EnvFault, "crash:10")
	base, err := os.ReadFile(filepath.Join(abLegsDir, "pass.yaml"))
	require.NoError(t, err)
	legFile := filepath.Join(t.TempDir(), "dies.yaml")
	require.NoError(t, os.WriteFile(legFile, append(base, "replicates: 2\n"...), 0o644))
	out := filepath.Join(t.TempDir(), "leg")
	code, stdout, stderr := runCLI(t, "ab", "run", legFile, "--simulate", "--out", out, "--stop-grace", "3s", "--format", "json")
	require.Equal(t, exitABIncomplete, code, "stderr:\n%s", stderr)
	var rep abgate.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
	require.Greater(t, len(rep.Problems), 4, "%+v", rep.Problems)
	cause := "engine exited (exit code 1); from its log: sweep: sim-engine: simulated engine crash after 10 finished requests"
	for i, arm := range []string{"a", "a", "b", "b"} {
		p := rep.Problems[i]
		log := filepath.Join(out, arm, "server", "server.log")
		want := abgate.Problem{Arm: arm, Root: filepath.Join(out, arm, "bfcl-r1"), Category: "*", Reason: abgate.ReasonRunFailed,
			Detail: "the server died before bfcl generate ended: " + cause + " (log: " + log + ")"}
		if i%2 == 1 {
			want.Root = filepath.Join(out, arm, "bfcl-r2")
			want.Detail = "not run: the server died before replicate 2: " + cause + " (log: " + log + ")"
		}
		assert.Equal(t, want, p, "problem %d", i)
	}
	for _, arm := range []string{"a", "b"} {
		assert.True(t, slices.ContainsFunc(rep.Problems[4:], func(p abgate.Problem) bool {
			return p.Arm == arm && p.Root == filepath.Join(out, arm, "bfcl-r1") && p.Reason == abgate.ReasonInfraErrorRate
		}), "arm %s: the inference errors the crash caused are listed after it: %+v", arm, rep.Problems)
	}
	for _, arm := range []string{"a", "b"} {
		assert.NoDirExists(t, filepath.Join(out, arm, "bfcl-r2"), "replicate 2 of arm %s ran against a dead server", arm)
	}
}

func TestABRunFlags(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("model: Org/M-FC\nrunner: x\ncategories: [parallel, simple]\narms:\n  a: {config-key: nope, tp: 8, conc: 4}\n  b: {config-key: minimaxm3-fp8-mi325x-vllm-agentic-mtp, tp: 8, conc: 3}\n"), 0o644))
	used := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(used, "x"), nil, 0o644))
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"ab", "run"}, []string{"takes one leg", "minimaxm3-mi325x-smg"}},
		{[]string{"ab", "run", "no-such-leg"}, []string{`"no-such-leg": not a shipped leg`}},
		{[]string{"ab", "run", bad}, []string{
			"bad.yaml:3:24: categories[1]: category \"simple\" is not a BFCL v4 category",
			"bad.yaml:5:19: arms.a.config-key: \"nope\" is not a master config key",
			"bad.yaml:6:6: arms.b: minimaxm3-fp8-mi325x-vllm-agentic-mtp has no point tp 8, ep 1, dp-attn false, conc 3; pick one of:",
		}},
		// --out is named as the flag it is, never as a BFCL root, with the fix.
		{[]string{"ab", "run", "minimaxm3-mi325x-smg", "--simulate", "--out", used}, []string{"--out " + used + ": not empty (holds x): ", "give another --out, or drop --out for the default"}},
		{[]string{"ab", "calibrate", "minimaxm3-mi325x-smg", "--simulate", "--out", used}, []string{"--out " + used + ": not empty (holds x): "}},
		{[]string{"ab", "run", "minimaxm3-mi325x-smg", "--simulate", "--out", filepath.Join(used, "x")}, []string{"--out " + filepath.Join(used, "x") + ": it is a file, not a directory: give a directory that does not exist yet or is empty"}},
		{[]string{"ab", "calibrate", "minimaxm3-mi325x-smg", "--simulate", "--out", filepath.Join(used, "x", "y")}, []string{"--out " + filepath.Join(used, "x", "y") + ": a parent of it is a file"}},
		{[]string{"ab", "run", "minimaxm3-mi325x-smg", "--simulate", "--bfcl", "x"}, []string{"--bfcl cannot be combined with --simulate"}},
		{[]string{"ab", "run", "minimaxm3-mi325x-smg", "--time-scale", "5"}, []string{"--time-scale needs --simulate"}},
		{[]string{"ab", "run", "minimaxm3-mi325x-smg", "--format", "xml"}, []string{"--format \"xml\""}},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		assert.Equal(t, exitUsage, code, "%v: %s", tc.args, stderr)
		for _, w := range tc.want {
			assert.Contains(t, stderr, w, tc.args)
		}
		assert.NotContains(t, stderr, "bfcl root", tc.args)
	}
}

// TestABRunKVOffloading: a config-key arm at a point where its key has a
// kv:none and a kv:dram row (MI355X MiniMax-M3 FP4, tp4 conc32) was run
// on the kv:none row with no word; without kv-offloading the leg is now
// refused at the arm (exit 2) listing both rows with the kv-offloading
// that picks each, before anything is written, and a kv-offloading that
// is no mode is refused at its position.
func TestABRunKVOffloading(t *testing.T) {
	arm := "{config-key: minimaxm3-fp4-mi355x-vllm-agentic-mtp, tp: 4, conc: 32%s}"
	leg := func(b string) string {
		return "model: Org/M-FC\nrunner: cluster:mi355x-amds\ncategories: [multiple]\narms:\n  a: " + fmt.Sprintf(arm, "") + "\n  b: " + fmt.Sprintf(arm, b) + "\n"
	}
	for _, tc := range []struct {
		name, b string
		want    []string
	}{
		{"the rows of the point are refused without kv-offloading", ", kv-offloading: dram", []string{
			"leg.yaml:5:6: arms.a: minimaxm3-fp4-mi355x-vllm-agentic-mtp has 2 points tp 4, ep 1, dp-attn false, conc 32 that differ in KV offloading; " +
				"add to the arm the kv-offloading that picks one of them: kv-offloading: none (minimaxm3_tp4_conc32_kvnone_spec-mtp), kv-offloading: dram (minimaxm3_tp4_conc32_kvdram-lmcache_spec-mtp)"}},
		{"a kv-offloading that is no mode", ", kv-offloading: ssd", []string{
			`leg.yaml:6:90: arms.b.kv-offloading: "ssd": want one of none, dram`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "leg.yaml")
			require.NoError(t, os.WriteFile(file, []byte(leg(tc.b)), 0o644))
			out := filepath.Join(t.TempDir(), "out")
			code, _, stderr := runCLI(t, "ab", "run", file, "--simulate", "--out", out)
			assert.Equal(t, exitUsage, code, stderr)
			for _, w := range tc.want {
				assert.Contains(t, stderr, w)
			}
			assert.NoDirExists(t, out, "nothing is written for a leg that does not plan")
		})
	}
}

// TestABRunTemperatureWarning: a positive temperature below vLLM's 0.01
// clamp is warned about, at the leg's position.
func TestABRunTemperatureWarning(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(abLegsDir, "inconclusive.yaml"))
	require.NoError(t, err)
	leg := filepath.Join(t.TempDir(), "warm.yaml")
	require.NoError(t, os.WriteFile(leg, []byte(strings.Replace(string(data), "temperature: 0,", "temperature: 0.001,", 1)), 0o644))
	used := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(used, "x"), nil, 0o644))
	code, _, stderr := runCLI(t, "ab", "run", leg, "--simulate", "--out", used)
	assert.Equal(t, exitUsage, code, stderr) // stops at the used --out, after planning
	assert.Contains(t, stderr, "warning: "+leg+":4:25: sampling.temperature: arm a (vLLM): temperature 0.001: vLLM clamps")
}

// TestABLegs: the shipped legs plan, and a leg whose runner label has no
// registered runner is skipped with a notice.
func TestABLegs(t *testing.T) {
	code, stdout, stderr := runCLI(t, "ab", "legs")
	require.Equal(t, 0, code, stderr)
	var got gha.ABLegMatrix
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	require.Equal(t, 13, got.Count, "SMG's six nightly legs, six AMD legs and the MiniMax-M3 leg")
	byName := map[string]gha.ABLeg{}
	for _, l := range got.Legs {
		byName[l.Name] = l
	}
	assert.Equal(t, gha.ABLeg{Name: "gpt-oss-mi325x", File: "configs/ab/gpt-oss-mi325x.yaml", Model: "openai/gpt-oss-120b-FC", Runner: "mi325x",
		Schedule: "nightly", GPU: "mi325x"}, byName["gpt-oss-mi325x"])
	assert.Equal(t, "manual", byName["qwen3-0.6b-mi355x"].Schedule)
	assert.Empty(t, got.Skipped)

	code, stdout, stderr = runCLI(t, "ab", "legs", "--schedule", "manual")
	require.Equal(t, 0, code, stderr)
	got = gha.ABLegMatrix{}
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	var manual []string
	for _, l := range got.Legs {
		manual = append(manual, l.Name)
	}
	assert.Equal(t, []string{"gpt-oss-mi355x", "qwen3-0.6b-mi355x", "qwen3-0.6b-mi355x-rust", "qwen3.8-mi355x"}, manual)

	code, stdout, stderr = runCLI(t, "ab", "legs", "--only", "minimaxm3-mi325x-smg")
	require.Equal(t, 0, code, stderr)
	got = gha.ABLegMatrix{}
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	require.Equal(t, 1, got.Count)
	assert.Equal(t, "cluster:mi325x-amds", got.Legs[0].Runner)

	online := filepath.Join(t.TempDir(), "online.txt")
	require.NoError(t, os.WriteFile(online, []byte("h100-cw_00\n"), 0o644))
	code, stdout, stderr = runCLI(t, "ab", "legs", "--only", "minimaxm3-mi325x-smg", "--online-runners", online)
	require.Equal(t, 0, code, stderr)
	got = gha.ABLegMatrix{}
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	assert.Equal(t, 0, got.Count)
	require.Len(t, got.Skipped, 1)
	assert.Contains(t, got.Skipped[0].Reason, `no runner of label "cluster:mi325x-amds" is online`)
	assert.Contains(t, stderr, "::notice title=ab-nightly: minimaxm3-mi325x-smg skipped::")

	// A missing or truncated file of online runners is an input mistake
	// (exit 2), the JSON's at its line and column.
	truncated := filepath.Join(t.TempDir(), "online.json")
	require.NoError(t, os.WriteFile(truncated, []byte("[\"h100-cw_00\",\n  \"h100"), 0o644))
	for f, want := range map[string]string{
		truncated:                          "--online-runners: " + truncated + ":2:8: the JSON ends early: want a JSON list of runner names",
		filepath.Join(t.TempDir(), "none"): "no such file or directory",
	} {
		code, _, stderr = runCLI(t, "ab", "legs", "--online-runners", f)
		assert.Equal(t, exitUsage, code, stderr)
		assert.Contains(t, stderr, want)
	}

	runners := filepath.Join(t.TempDir(), "runners.yaml")
	require.NoError(t, os.WriteFile(runners, []byte("labels:\n  h100: [h100-cw_00]\n"), 0o644))
	code, stdout, stderr = runCLI(t, "ab", "legs", "--runner-config", runners)
	require.Equal(t, 0, code, stderr)
	got = gha.ABLegMatrix{}
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	var ran []string
	for _, l := range got.Legs {
		ran = append(ran, l.Name)
	}
	assert.Equal(t, []string{"gpt-oss-h100", "qwen3.6-h100"}, ran, "only the H100 legs have a registered runner")
	require.Len(t, got.Skipped, 11)
	assert.Contains(t, got.Skipped[0].Reason, "has no registered runner in runners.yaml")
	assert.Contains(t, stderr, "::notice title=ab-nightly: gpt-oss-mi325x skipped::")

	code, _, stderr = runCLI(t, "ab", "legs", "--only", "nope")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `--only "nope": no such leg`)
	code, _, stderr = runCLI(t, "ab", "legs", "--schedule", "weekly")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `--schedule "weekly"`)
}

// TestABShippedLegsSimulated: shipped legs run end to end against the
// simulated engine, gateway and bfcl and pass; the concurrent legs start
// both arms' servers before either stops. One leg of each kind runs here
// (concurrent on CUDA GPUs, concurrent on ROCm without SMG parsers,
// sequential on a whole node, SMG's Rust servicer), about 9 s each under
// the race detector; TestABLegs plans every shipped leg, and
// "sweep ab run LEG --simulate" runs any of them (13 legs, 2.4-4.4 s each).
func TestABShippedLegsSimulated(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	for _, name := range []string{"qwen3.6-h100", "gpt-oss-mi325x", "glm-5.2-b200", "qwen3-0.6b-mi355x-rust"} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "leg")
			code, stdout, stderr := runCLI(t, "ab", "run", name, "--simulate", "--out", out, "--stop-grace", "3s")
			require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			assert.Contains(t, stdout, "verdict: PASS")
			l, err := configs.DefaultABLeg(name)
			require.NoError(t, err)
			if l.Mode == configs.ABConcurrent {
				bStart := strings.Index(stderr, "arm b (smg): starting the server")
				aStop := strings.Index(stderr, "arm a: server stopped")
				require.True(t, bStart >= 0 && aStop >= 0, stderr)
				assert.Less(t, bStart, aStop, "both arms serve at once")
			}
		})
	}
}

// TestABRunCategoryRegression: a planted 30-point loss in live_multiple
// alone is a REGRESSION of the leg, and live_multiple's row shows it.
func TestABRunCategoryRegression(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	out := filepath.Join(t.TempDir(), "leg")
	code, stdout, stderr := runCLI(t, "ab", "run", filepath.Join(abLegsDir, "category-regression.yaml"), "--simulate", "--out", out, "--stop-grace", "3s", "--format", "json")
	require.Equal(t, exitABRegression, code, "stderr:\n%s", stderr)
	var rep abgate.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	assert.Equal(t, abgate.Regression, rep.Verdict)
	for _, c := range rep.Categories {
		require.NotNil(t, c.Delta, c.Category)
		if c.Category == "live_multiple" {
			assert.Less(t, *c.Delta, -25.0)
		} else {
			assert.Greater(t, *c.Delta, -8.0, "%s: nothing planted", c.Category)
		}
	}
}

// TestABRunInterrupt: SIGTERM (a runner's preemption) while arm b runs
// stops the leg (exit 130), leaves no server process behind and names
// the complete replicates and how to resume, on stderr and in an
// INCOMPLETE report (report.json, report.md and stdout), so the nightly
// tells a leg preempted after arm a from one never started; an
// interrupted leg used to write no report. Rerunning the command then
// resumed nothing (the --out
// was refused as not empty): now it keeps arm a's complete replicate
// (its files untouched, its server not started), runs arm b's in a
// fresh root and writes the whole report. A replicate whose record says
// complete but whose root lost a file is run again; the directory run
// as another leg (other categories) is refused naming the difference.
// The resumed arm b's server keeps the interrupted one's files: they are
// moved to b/server.1 (then b/server.2), no longer replaced.
func TestABRunInterrupt(t *testing.T) {
	out := filepath.Join(t.TempDir(), "leg")
	args := []string{"ab", "run", filepath.Join(abLegsDir, "regression.yaml"), "--simulate", "--out", out, "--stop-grace", "3s"}
	var stdout1 bytes.Buffer
	log, sent, err := signalAtLine(t, args, &stdout1, "arm b: server ready", syscall.SIGTERM)
	require.True(t, sent, "arm b never became ready:\n%s", log)
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, log)
	assert.Equal(t, exitCancelled, ee.ExitCode(), log)
	interruption := "interrupted by SIGTERM before the report; complete replicates: a/bfcl-r1; not complete: b/bfcl-r1; " +
		"run the same command with --out " + out + " to resume: it keeps the complete replicates and runs the others in fresh roots"
	var incomplete abgate.Report
	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	require.NoError(t, err, "the interrupted leg's report:\n%s", log)
	require.NoError(t, json.Unmarshal(data, &incomplete), string(data))
	assert.Equal(t, abgate.Incomplete, incomplete.Verdict)
	assert.Equal(t, "regression", incomplete.Leg)
	assert.Equal(t, []abgate.Problem{{Arm: "*", Root: out, Category: "*", Reason: abgate.ReasonInterrupted, Detail: interruption}}, incomplete.Problems)
	assert.Equal(t, []string{filepath.Join(out, "a", "bfcl-r1")}, incomplete.Roots.A)
	// Arm b's root is named once its replicate made it: the signal came
	// as its server was ready, so it may not have been made yet.
	if assert.LessOrEqual(t, len(incomplete.Roots.B), 1, "%v", incomplete.Roots.B) && len(incomplete.Roots.B) == 1 {
		assert.Equal(t, filepath.Join(out, "b", "bfcl-r1"), incomplete.Roots.B[0])
		assert.DirExists(t, incomplete.Roots.B[0], "the report names only directories that exist")
	}
	assert.Len(t, incomplete.Servers, 2, "what each arm's server ran, from the plan")
	// What arm a's complete replicate measured, per category, labelled
	// partial: no verdict, no overall result (before, no category at all).
	assert.Equal(t, &abgate.Partial{Complete: abgate.ReportRoots{A: []string{filepath.Join(out, "a", "bfcl-r1")}, B: []string{}}, Incomplete: []string{"b/bfcl-r1"}}, incomplete.Partial)
	require.NotEmpty(t, incomplete.Categories)
	for _, c := range incomplete.Categories {
		assert.True(t, c.A != nil && c.B == nil && c.Delta == nil, "%s: arm a measured, arm b not: %+v", c.Category, c)
	}
	assert.Nil(t, incomplete.Primary.Delta, "no overall result")
	table, err := os.ReadFile(filepath.Join(out, "report.md"))
	require.NoError(t, err)
	assert.Contains(t, string(table), "**Partial, no verdict**: the leg was interrupted; the rows are what its complete replicates alone measured (A: "+filepath.Join(out, "a", "bfcl-r1")+"; B: none), not the leg's result. Not complete: b/bfcl-r1.\n")
	assert.Regexp(t, `\n\| live_simple \| \d+ \| \d+\.\d\d \| – \| – \|`, string(table))
	assert.Contains(t, string(table), "- interrupted: the leg ("+out+"): "+interruption+"\n")
	assert.True(t, strings.HasSuffix(string(table), "\nverdict: INCOMPLETE: 1 problem; no overall result is computed from incomplete data\n"), string(table))
	assert.Equal(t, string(table), stdout1.String(), "stdout holds the report too")
	assert.Contains(t, log, "report: "+filepath.Join(out, "report.md")+", "+filepath.Join(out, "report.json")+"\n")
	// Written first as soon as the signal came, before the servers stopped.
	assert.Contains(t, log, "] interrupted: the INCOMPLETE report is written ("+filepath.Join(out, "report.md")+", "+filepath.Join(out, "report.json")+") while the leg stops\n")
	for _, arm := range []string{"a", "b"} {
		var srv run.Record
		data, err := os.ReadFile(filepath.Join(out, arm, "server", run.ServerRecordFile))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &srv))
		require.NotEmpty(t, srv.Processes)
		for name, p := range srv.Processes {
			assert.ErrorIs(t, syscall.Kill(-p.PID, 0), syscall.ESRCH, "%s %s survived the interrupt", arm, name)
		}
	}
	assert.Contains(t, log, "ab run regression: "+interruption+"\nsweep: cancelled\n")

	t.Setenv(asCLIEnv, "1")
	armA := filesOf(t, filepath.Join(out, "a"))
	firstLog, err := os.ReadFile(filepath.Join(out, "b", "server", "server.log"))
	require.NoError(t, err)
	code, stdout, errOut := runCLI(t, append(args, "--format", "json")...)
	require.Equal(t, exitABRegression, code, "stderr:\n%s", errOut)
	// The interrupted server's log is kept aside, not replaced by the new one's.
	assert.Contains(t, errOut, "] arm b: the earlier server's files moved to b/server.1\n")
	keptLog, err := os.ReadFile(filepath.Join(out, "b", "server.1", "server.log"))
	require.NoError(t, err)
	assert.Equal(t, string(firstLog), string(keptLog), "b/server.1 holds the interrupted server's log")
	assert.FileExists(t, filepath.Join(out, "b", "server", run.ServerRecordFile), "the new server writes b/server")
	assert.Contains(t, errOut, "] arm a: replicate 1: kept a/bfcl-r1: complete\n")
	assert.Contains(t, errOut, "] arm a (vllm): every replicate kept: its server is not started\n")
	assert.NotContains(t, errOut, "arm a: replicate 1: bfcl generate")
	assert.Equal(t, armA, filesOf(t, filepath.Join(out, "a")), "arm a's replicate and server files, as the interrupted run left them")
	var rep abgate.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
	assert.Empty(t, rep.Problems)
	assert.Equal(t, []string{"report.md.1", "report.json.1", "b/server.1"}, rep.MovedAside, "the report lists what the resumed run moved aside and kept")
	require.Len(t, rep.Roots.B, 1)
	rootB := rep.Roots.B[0]
	assert.Equal(t, abgate.ReportRoots{A: []string{filepath.Join(out, "a", "bfcl-r1")}, B: []string{rootB}}, rep.Roots)
	if _, err := os.Stat(filepath.Join(out, "b", "bfcl-r1.json")); err == nil {
		// the interrupt came after replicate 1 of arm b started: it runs again in a fresh root
		assert.Equal(t, filepath.Join(out, "b", "bfcl-r1.try2"), rootB)
		assert.Contains(t, errOut, "] arm b: replicate 1: not complete: b/bfcl-r1 (interrupted: it did not end): runs again in b/bfcl-r1.try2\n")
	}
	for _, c := range rep.Categories {
		assert.True(t, c.A != nil && c.B != nil, "%s: both arms measured", c.Category)
	}
	assert.Less(t, *rep.Primary.Delta, -2.0, "the planted regression")

	// A root that lost a file is not complete: its replicate runs again.
	cats, err := abgate.ExpandCategories([]string{"live_simple"})
	require.NoError(t, err)
	lost := filepath.Join(rootB, filepath.FromSlash(abgate.ScorePath(rep.Model, cats[0])))
	require.NoError(t, os.Remove(lost))
	code, _, errOut = runCLI(t, args...)
	require.Equal(t, exitABRegression, code, "stderr:\n%s", errOut)
	assert.Contains(t, errOut, "] arm a: replicate 1: kept a/bfcl-r1: complete\n")
	assert.Regexp(t, `\] arm b: replicate 1: not complete: .*`+regexp.QuoteMeta(filepath.Base(rootB)+" ("+lost+" does not exist): runs again in b/bfcl-r1.try"), errOut)
	assert.Contains(t, errOut, "] arm b: the earlier server's files moved to b/server.2\n", "the next free number")
	keptLog, err = os.ReadFile(filepath.Join(out, "b", "server.1", "server.log"))
	require.NoError(t, err)
	assert.Equal(t, string(firstLog), string(keptLog), "b/server.1 is left as it was")
	assert.NoFileExists(t, lost, "the incomplete root is left as it was")

	// Another leg on the directory is refused before anything starts.
	code, _, errOut = runCLI(t, append(args, "--categories", "simple_python")...)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "sweep: --out "+out+" holds a leg made otherwise than this one (leg.json): arms a and b: bfcl generate flag --test-category: simple_python,")
	assert.Contains(t, errOut, ", now simple_python: give another --out, or run the leg as it was made to resume it\n")
}

// TestABRunResumeRepairs reruns a complete leg on its --out after
// each damage the leg's report rejects, and checks that the rerun keeps
// exactly what that report accepts:
//   - a second run while one holds the directory is refused before
//     anything starts (exit 2), naming the process, and touches nothing;
//   - a resumed run moves the earlier report aside before it starts
//     work, so one killed with SIGKILL leaves no stale PASS report.md;
//   - a result file that lost a line, a score file that lost a failed
//     case and a replicate record that does not read are not complete:
//     the replicate runs again in a fresh root and the leg PASSes, the
//     damaged files left as they are;
//   - the arm whose replicates were all kept reports the server its
//     record names (ports by name), not ports no server used, marked
//     kept from an earlier run.
func TestABRunResumeRepairs(t *testing.T) {
	out := filepath.Join(t.TempDir(), "leg")
	args := []string{"ab", "run", filepath.Join(abLegsDir, "pass.yaml"), "--simulate", "--out", out, "--stop-grace", "3s", "--format", "json"}
	t.Setenv(asCLIEnv, "1")
	code, _, errOut := runCLI(t, args...)
	require.Equal(t, exitOK, code, "stderr:\n%s", errOut)
	passTable, err := os.ReadFile(filepath.Join(out, "report.md"))
	require.NoError(t, err)

	// Another run holds the directory (its lock, as sweep run's): refused.
	release, err := run.LockOutDir(out)
	require.NoError(t, err)
	before := filesOf(t, out)
	code, _, errOut = runCLI(t, args...)
	release()
	assert.Equal(t, exitUsage, code, errOut)
	assert.Contains(t, errOut, fmt.Sprintf("sweep: --out %s: process %d is running this leg: wait for it to end, or give another --out\n", out, os.Getpid()))
	assert.NotContains(t, errOut, "replicate 1")
	assert.Equal(t, before, filesOf(t, out), "the refused run touched nothing")

	cats, err := abgate.ExpandCategories([]string{"simple_python"})
	require.NoError(t, err)
	model := "MiniMaxAI/MiniMax-M3-MXFP8-FC"
	resultOf := func(root string) string {
		return filepath.Join(root, filepath.FromSlash(abgate.ResultPath(model, cats[0])))
	}
	scoreOf := func(root string) string {
		return filepath.Join(root, filepath.FromSlash(abgate.ScorePath(model, cats[0])))
	}
	dropLine := func(file string, n int) { // n: 1-based; 0 the last
		t.Helper()
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
		if n == 0 {
			n = len(lines)
		}
		lines = slices.Delete(lines, n-1, n)
		require.NoError(t, os.WriteFile(file, []byte(strings.Join(lines, "")), 0o644))
	}
	rootA := func(n int) string {
		if n == 1 {
			return filepath.Join(out, "a", "bfcl-r1")
		}
		return filepath.Join(out, "a", fmt.Sprintf("bfcl-r1.try%d", n))
	}

	// A resumed run killed (SIGKILL) before it writes any report leaves
	// none: the earlier PASS report was moved aside before work began.
	dropLine(resultOf(rootA(1)), 0)
	log, killed, _ := signalAtLine(t, args, nil, "arm a: replicate 1: not complete", syscall.SIGKILL)
	require.True(t, killed, "the rerun never found arm a's replicate incomplete:\n%s", log)
	assert.Contains(t, log, "] the earlier report report.md moved to report.md.1: this run writes its own\n")
	assert.Contains(t, log, "] the earlier report report.json moved to report.json.1: this run writes its own\n")
	assert.NoFileExists(t, filepath.Join(out, "report.md"), "no stale report of the earlier state")
	assert.NoFileExists(t, filepath.Join(out, "report.json"))
	kept, err := os.ReadFile(filepath.Join(out, "report.md.1"))
	require.NoError(t, err)
	assert.Equal(t, string(passTable), string(kept), "the earlier report, kept aside")

	rec1, err := os.ReadFile(filepath.Join(out, "b", "bfcl-r1.json"))
	require.NoError(t, err)
	var recB leg.Replicate
	require.NoError(t, json.Unmarshal(rec1, &recB))
	for _, tc := range []struct {
		name   string
		damage func(root string) // of arm a's last attempt
		why    string            // its not-complete reason, a regexp
	}{
		{"result file lost a line", nil, // damaged above
			regexp.QuoteMeta(scoreOf(rootA(1))+":1: total_count is ") + `\d+` + regexp.QuoteMeta(" but "+resultOf(rootA(1))+" has ") + `\d+ rows`},
		{"score file lost a failed case", func(root string) { dropLine(scoreOf(root), 2) },
			regexp.QuoteMeta(scoreOf(rootA(2))+":1: total_count - correct_count is ") + `\d+ but the file lists \d+ failed cases`},
		{"record does not read", func(root string) {
			require.NoError(t, os.WriteFile(root+".json", []byte(`{"format":1,`+"\n"), 0o644))
		}, regexp.QuoteMeta("its record does not read: " + rootA(3) + ".json:2:1: the JSON ends early: want the replicate record sweep ab run writes")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 1
			for ; ; n++ {
				if _, err := os.Stat(rootA(n + 1)); err != nil {
					break
				}
			}
			if tc.damage != nil {
				tc.damage(rootA(n))
			}
			damaged := contentsOf(t, filepath.Join(out, "a"))
			code, stdout, errOut := runCLI(t, args...)
			require.Equal(t, exitOK, code, "stderr:\n%s", errOut)
			rel := strings.TrimPrefix(rootA(n), out+"/")
			assert.Regexp(t, `\] arm a: replicate 1: not complete: (.*; )?`+regexp.QuoteMeta(rel)+` \(`+tc.why+`\): runs again in `+regexp.QuoteMeta(strings.TrimPrefix(rootA(n+1), out+"/"))+"\n", errOut)
			assert.Contains(t, errOut, "] arm b: replicate 1: kept b/bfcl-r1: complete\n")
			var rep abgate.Report
			require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
			assert.Equal(t, abgate.Passed, rep.Verdict, "%+v", rep.Problems)
			assert.Equal(t, abgate.ReportRoots{A: []string{rootA(n + 1)}, B: []string{filepath.Join(out, "b", "bfcl-r1")}}, rep.Roots)
			for path, was := range damaged {
				if !strings.HasPrefix(path, filepath.Join(out, "a", "bfcl-r1")) {
					continue // the server's files, moved aside
				}
				now, err := os.ReadFile(path)
				if assert.NoError(t, err, "%s is kept", path) {
					assert.Equal(t, was, string(now), "%s is left as it was", path)
				}
			}
			// Arm b started no server: its server is the one its record
			// names, ports by name, not the ports this run drew for it.
			require.Len(t, rep.Servers, 2)
			keptB := recB.Made.Server
			keptB.Kept = true // and the report says so
			assert.Equal(t, keptB, rep.Servers[1])
			assert.Contains(t, rep.Servers[1].RouterArgv, "{port}")
			assert.NotContains(t, rep.Servers[0].EngineArgv, "{port}", "arm a's server ran now, on the ports drawn")
		})
	}
}

// contentsOf is every file under dir with its content.
func contentsOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		files[path] = string(data)
		return err
	}))
	return files
}

// filesOf is every file under dir with its modification time and content.
func filesOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		files[path] = st.ModTime().String() + " " + string(data)
		return err
	}))
	require.NotEmpty(t, files)
	return files
}

// TestSimBFCLRegistration: the stand-in knows the leg's model only through
// the registration sweep ab run writes, as bfcl does: without it, models
// leaves the model out (and says why on stderr) and generate refuses it.
func TestSimBFCLRegistration(t *testing.T) {
	const model = "Org/M-FC"
	arm := bfclsim.Arm{Model: model, Seed: 1, Name: "a", Accuracy: 0.85}
	for k, v := range arm.Env(0) {
		t.Setenv(k, v)
	}
	t.Setenv("BFCL_PROJECT_ROOT", t.TempDir())
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	reg := abgate.Registry{Name: model, Dir: filepath.Join(t.TempDir(), "py")}
	require.NoError(t, reg.Write())
	for k, v := range reg.Env("") {
		t.Setenv(k, v)
	}
	code, stdout, stderr := runCLI(t, "sim-bfcl", "--", "models")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, strings.Split(stdout, "\n"), model)

	t.Setenv("PYTHONPATH", t.TempDir()+":"+reg.Dir) // not first: Python would load another sitecustomize, or none
	code, stdout, stderr = runCLI(t, "sim-bfcl", "--", "models")
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, strings.Split(stdout, "\n"), model)
	assert.Contains(t, stderr, "sim-bfcl: no registry entry added: the first PYTHONPATH entry")
	code, _, stderr = runCLI(t, "sim-bfcl", "--", "generate", "--model", model, "--test-category", "multiple")
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, "sim-bfcl generate: Unknown model_name 'Org/M-FC' (no registry entry added: the first PYTHONPATH entry")
}

// fullWriter is a stdout on a full disk: every write fails with ENOSPC.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestABNoVerdictExit2: an ab command that draws no verdict for an
// operational reason (here a stdout that cannot be written, as
// `> /dev/full`) exits 2, never 1, which is REGRESSION's alone; the
// report files a leg wrote before stay.
func TestABNoVerdictExit2(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	for _, tc := range []struct {
		name string
		args []string
		file string // written before stdout
	}{
		{"ab run", []string{"ab", "run", filepath.Join(abLegsDir, "regression.yaml"), "--simulate", "--categories", "simple_python,multiple", "--stop-grace", "3s"}, "report.json"},
		{"ab calibrate", []string{"ab", "calibrate", filepath.Join(abLegsDir, "pass.yaml"), "--simulate", "--runs", "2", "--categories", "simple_python", "--stop-grace", "3s"}, abgate.CalibrationFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "leg")
			var errOut bytes.Buffer
			code := mainRun(t.Context(), &IOStreams{In: strings.NewReader(""), Out: fullWriter{}, ErrOut: &errOut}, append(tc.args, "--out", out))
			assert.Equal(t, exitUsage, code, "stderr:\n%s", errOut.String())
			assert.Contains(t, errOut.String(), "no space left on device")
			assert.NotContains(t, errOut.String(), "run with --help", "no usage hint for a disk")
			assert.FileExists(t, filepath.Join(out, tc.file))
		})
	}
}

// TestABReportOnStdoutOnly: ab run on a disk that filled as the report was
// written exited 2 with "no space left on device" and the report was lost:
// stdout was printed from the file. The report is printed from memory, in
// the format asked for, and the error says what was drawn, which file was
// not written, that the disk is full, and exits 2; a report written prints
// as before and names its files.
func TestABReportOnStdoutOnly(t *testing.T) {
	dir := t.TempDir()
	out := &leg.Output{Table: filepath.Join(dir, leg.ReportTable), JSON: filepath.Join(dir, leg.ReportJSON),
		TableText: []byte("## BFCL A/B\n"), JSONText: []byte("{\"verdict\": \"REGRESSION\"}\n")}
	write := &fs.PathError{Op: "write", Path: filepath.Join(dir, ".report.json.sweep-1.tmp"), Err: syscall.ENOSPC}
	notWritten := &leg.NotWrittenError{File: out.JSON, Written: []string{out.Table},
		Err: &run.DiskFullError{Dir: dir, Free: 0, Err: fmt.Errorf("write %s: %w", out.JSON, write)}}
	const drawn = "ab run regression: verdict: REGRESSION: weighted Δ -5.33 pp"
	for _, tc := range []struct {
		name, format string
		notWritten   error
		stdout       string
		stderr       string
		code         int
	}{
		{"written", "table", nil, "## BFCL A/B\n", "report: " + out.Table + ", " + out.JSON + "\n", exitOK},
		{"table", "table", notWritten, "## BFCL A/B\n", "", exitUsage},
		{"json", "json", notWritten, "{\"verdict\": \"REGRESSION\"}\n", "", exitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := printLegOutput(&IOStreams{Out: &stdout, ErrOut: &stderr}, tc.format, "report", out, tc.notWritten, drawn)
			assert.Equal(t, tc.stdout, stdout.String(), "the report is printed whole")
			assert.Equal(t, tc.stderr, stderr.String())
			var exit bytes.Buffer
			assert.Equal(t, tc.code, cli.ExitCode(t.Context(), &exit, abNoVerdict(err)))
			if tc.notWritten == nil {
				return
			}
			assert.Equal(t, "sweep: "+drawn+", but the report was not written whole (stdout holds it): report.json not written: write "+out.JSON+": write "+write.Path+
				": no space left on device: the disk holding "+dir+" is full (0 B free); report.md written\n", exit.String())
		})
	}
}
