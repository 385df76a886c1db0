package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/campaign"
	"sweep/sweep/testkit/synth"
)

// TestInputErrorsExitTwo: the same kind of input error exits 2 from every
// command (they exited 1 from knees, sim calibrate, sim agreement and
// plan --site, 2 from report): a result file cut short, a results
// directory that is not there, a --site value a launcher cannot carry, a
// config image holding shell text (at its file:line:col; sweep validate
// exited 1 for it), a runner that does not exist.
func TestInputErrorsExitTwo(t *testing.T) {
	const key = "qwen3.5-fp8-mi325x-sglang-agentic-mtp"
	dir := t.TempDir()
	cut := filepath.Join(dir, "cut")
	require.NoError(t, os.MkdirAll(filepath.Join(cut, key), 0o755))
	for _, d := range []string{cut, filepath.Join(cut, key)} {
		require.NoError(t, os.WriteFile(filepath.Join(d, "r_conc4.json"), []byte(`{"conc": 4, "request_metrics": {`), 0o644))
	}
	missing := filepath.Join(dir, "missing")
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.Mkdir(empty, 0o755))
	master, err := os.ReadFile("../../configs/amd-master.yaml")
	require.NoError(t, err)
	const image = "image: lmsysorg/sglang:v0.5.16-rocm720-mi30x"
	i := strings.Index(string(master), image)
	require.GreaterOrEqual(t, i, 0)
	line := strings.Count(string(master[:i]), "\n") + 1
	bad := filepath.Join(dir, "amd-master.yaml")
	require.NoError(t, os.WriteFile(bad, []byte(strings.Replace(string(master), image, `image: "lmsysorg/sglang:v0.5.16 $(id)"`, 1)), 0o644))
	badAt := bad + ":" + strconv.Itoa(line) + ":"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"knees: cut result", []string{"knees", cut}, "the JSON ends early"},
		{"knees: missing dir", []string{"knees", missing}, "does not exist"},
		// A directory with nothing to show: knees exited 0, report 2.
		{"knees: empty dir", []string{"knees", empty}, "no result files under " + empty},
		{"knees: empty dir, json", []string{"knees", empty, "--format", "json"}, "no result files under " + empty},
		{"report: empty dir", []string{"report", empty, "--out", filepath.Join(dir, "rep-empty")}, "no result files under " + empty},
		{"report: cut result", []string{"report", cut, "--out", filepath.Join(dir, "rep")}, "the JSON ends early"},
		{"sim calibrate: cut result", []string{"sim", "calibrate", cut, "--out", filepath.Join(dir, "cal.json")}, "the JSON ends early"},
		{"sim calibrate: missing dir", []string{"sim", "calibrate", missing, "--out", filepath.Join(dir, "cal.json")}, "no such file or directory"},
		{"sim agreement: cut result", []string{"sim", "agreement", cut, key}, "the JSON ends early"},
		{"sim agreement: missing dir", []string{"sim", "agreement", missing, key}, "OUT_DIR: "},
		{"plan: --site value", []string{"plan", "--config-keys", key, "--tp", "8", "--conc", "16", "--runner-name", "mi325x-amds_00", "--site", `squash-dir=/tmp/a"b`}, `squash directory "/tmp/a\"b"`},
		{"plan: unknown runner", []string{"plan", "--config-keys", key, "--tp", "8", "--conc", "16", "--runner-name", "nosuch"}, "--runner-name nosuch is not a runner of " + key},
		{"plan: image with shell text", []string{"plan", "--config-files", bad, "--config-keys", key, "--tp", "8", "--conc", "16"}, badAt},
		{"validate: image with shell text", []string{"validate", "--config-files", bad}, badAt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			assert.Equal(t, exitUsage, code, stderr)
			assert.Contains(t, stdout+stderr, tc.want)
		})
	}
}

// TestOutRefusalsPrintNoUsageHint: a command refused for its output
// directory exits 2 with a message that names what is wrong and the fix,
// and ends there; it ended with "run with --help for usage" as a mistyped
// flag does, which the help cannot fix. Every command's refusal of its
// --out is checked: a sweep's (discover, official: a directory holding
// something else, another sweep, one in use, a file, one it cannot
// make), a point's (run: also another --out than its --plan's), a
// report's and an A/B leg's; so is discover --launch's refusal of a
// runner its --executor cannot launch (a Slurm runner with local, a
// docker runner with slurm), which names the other executor. A mistake
// in the command line's shape (an unknown flag, a missing argument)
// keeps the hint.
func TestOutRefusalsPrintNoUsageHint(t *testing.T) {
	const key = "qwen3.5-fp8-mi325x-sglang-agentic-mtp"
	dir := t.TempDir()
	used := filepath.Join(dir, "used") // holds an unrelated file
	require.NoError(t, os.MkdirAll(used, 0o755))
	file := filepath.Join(used, "notes.txt")
	require.NoError(t, os.WriteFile(file, []byte("x\n"), 0o644))
	other := filepath.Join(dir, "other") // another sweep's directory
	require.NoError(t, os.MkdirAll(other, 0o755))
	require.NoError(t, synth.WriteJournal(other, campaign.Record{Event: campaign.EventSweepStart, Identity: &campaign.Identity{Command: "official"}}))
	busy := filepath.Join(dir, "busy") // a sweep's directory in use
	require.NoError(t, os.MkdirAll(busy, 0o755))
	lock, err := os.Create(filepath.Join(busy, ".lock"))
	require.NoError(t, err)
	defer lock.Close()
	require.NoError(t, syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
	_, err = lock.WriteString("4242\n")
	require.NoError(t, err)
	link := filepath.Join(dir, "link") // a report's --out through a link
	require.NoError(t, os.Symlink(used, link))
	unmakeable := "/proc/sweep-test-no-such-dir" // procfs makes no directory, not even for root
	planned := filepath.Join(dir, "planned")     // a plan's result directory
	code, planJSON, stderr := runCLI(t, "plan", "--config-keys", key, "--tp", "8", "--ep", "8", "--conc", "4", "--format", "json", "--result-dir", planned)
	require.Equal(t, 0, code, stderr)
	plan := filepath.Join(dir, "plan.json")
	require.NoError(t, os.WriteFile(plan, []byte(planJSON), 0o644))
	noGolden := filepath.Join(dir, "no-golden.json") // an MTP point's golden removed
	require.NoError(t, os.WriteFile(noGolden, []byte(strings.Replace(planJSON, `"golden_al": 3.39`, `"golden_al": null`, 1)), 0o644))
	sweepArgs := func(command, out string) []string {
		return []string{command, "--simulate", "--config-keys", key, "--tp", "8", "--ep", "8", "--conc-list", "4", "--out", out}
	}
	runArgs := []string{"run", "--simulate", "--config-key", key, "--tp", "8", "--ep", "8", "--conc", "4", "--out"}
	for _, tc := range []struct {
		name string
		args []string
		want string // the message's end: the fix
		hint bool
	}{
		{"discover: holds a file", sweepArgs("discover", used), "give --out an empty or new directory (or, to resume a sweep, the directory holding its journal.jsonl)", false},
		{"discover --dry-run: holds a file", append(sweepArgs("discover", used), "--dry-run"), "the directory holding its journal.jsonl)", false},
		{"official: holds a file", sweepArgs("official", used), "the directory holding its journal.jsonl)", false},
		{"discover: another sweep", sweepArgs("discover", other), "use another --out, or the command that started it to resume", false},
		{"discover: in use", sweepArgs("discover", busy), "is in use by another sweep (pid 4242): wait for it or stop it", false},
		{"discover: not makeable", sweepArgs("discover", unmakeable), "no such file or directory; give --out a directory this user can make and write", false},
		{"discover: a file", sweepArgs("discover", file), "it is a file, not a directory: give a directory (one that does not exist yet is made)", false},
		{"official: parent missing", sweepArgs("official", filepath.Join(dir, "typo", "d")), "does not exist: make it first, or give a path under a directory that exists", false},
		{"run: holds a file", append(runArgs, used), "not empty (notes.txt); use --force to overwrite it, or a new directory", false},
		{"run: a sweep's directory", append(runArgs, other), "holds a sweep (journal.jsonl): rerun the sweep's command to run its points, or give sweep run another directory", false},
		{"run: not makeable", append(runArgs, unmakeable), "no such file or directory; give --out a directory this user can make and write", false},
		{"run: a file", append(runArgs, file), "it is a file, not a directory: give a directory (one that does not exist yet is made)", false},
		{"run --plan: another --out", []string{"run", "--plan", plan, "--simulate", "--out", filepath.Join(dir, "elsewhere")}, "plan it with --result-dir " + filepath.Join(dir, "elsewhere") + ", or run it with --out " + planned, false},
		{"run --plan: a golden not its recipe's", []string{"run", "--plan", noGolden, "--simulate", "--out", planned}, "golden_al null, but recipe qwen3.5_fp8_mi325x_mtp plans 3.39 for this point: the point's acceptance length is judged against its recipe's golden; restore golden_al 3.39, or plan the point again (sweep plan --format json)", false},
		{"report: a file", []string{"report", "../../testdata/knee/cases/v0004", "--out", file}, "give --out a directory for the report (index.html, summary.md, charts/)", false},
		{"report: a link", []string{"report", "../../testdata/knee/cases/v0004", "--out", link}, "not through a link to another; remove the link, or give --out a directory", false},
		{"ab run: holds a file", []string{"ab", "run", "minimaxm3-mi325x-smg", "--simulate", "--out", used}, "give another --out, or drop --out for the default ./ab-runs/<LEG>-<UTC time>", false},
		{"ab calibrate: a file", []string{"ab", "calibrate", "minimaxm3-mi325x-smg", "--simulate", "--out", file}, "it is a file, not a directory: give a directory that does not exist yet or is empty", false},
		{"discover --launch: a Slurm runner with --executor local", append(sweepArgs("discover", filepath.Join(dir, "launch-local")), "--launch", "--dry-run"),
			"launch: runner mi325x-amds launches through Slurm (runners/launch_mi325x-amds.sh): run its arms with --executor slurm", false},
		{"discover --launch: a docker runner with --executor slurm", append(sweepArgs("discover", filepath.Join(dir, "launch-slurm")), "--launch", "--dry-run", "--config-files", relabelledKey(t, "cluster:mi325x-tw"), "--executor", "slurm"),
			"launch: runner mi325x-tw runs docker on its node (runners/launch_mi325x-tw.sh), not Slurm jobs: run its arms with --executor local", false},
		{"unknown flag", []string{"discover", "--prot", "1"}, "unknown flag: --prot; did you mean --port?", true},
		{"missing argument", []string{"report"}, "report takes one directory, got 0 arguments", true},
		{"missing flag", []string{"discover", "--config-keys", key}, "missing --out DIR (the sweep directory; rerun the same command on it to resume)", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			assert.Equal(t, exitUsage, code, stderr)
			want := tc.want + "\n"
			if tc.hint {
				want += "run with --help for usage\n"
			}
			assert.True(t, strings.HasSuffix(stderr, want), "stderr ends:\n%s\nwant it to end:\n%s", stderr[max(0, len(stderr)-400):], want)
		})
	}
	assert.NoFileExists(t, filepath.Join(used, campaign.JournalFile), "nothing written")
	assert.NoDirExists(t, unmakeable)
}
