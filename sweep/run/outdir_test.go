package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sweep/internal/proc"
	"sweep/metrics/result"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClaimOutDir: two runs with the same --out both reported success with
// one's artifacts overwritten, and a non-empty --out was overwritten
// silently.
func TestClaimOutDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	release, _, err := ClaimOutDir(dir, "p", false)
	require.NoError(t, err, "a new directory")

	_, _, err = ClaimOutDir(dir, "p", false)
	oe, ok := errors.AsType[*OutDirError](err)
	require.True(t, ok, "a second run is refused while the first holds the lock: %v", err)
	assert.Contains(t, oe.Msg, "is running a point or a sweep's server there")
	release()

	require.NoError(t, os.WriteFile(filepath.Join(dir, "server.log"), []byte("x"), 0o644))
	_, _, err = ClaimOutDir(dir, "p", false)
	oe, ok = errors.AsType[*OutDirError](err)
	require.True(t, ok, "%v", err)
	assert.Contains(t, oe.Msg, "not empty (server.log); use --force")

	release, _, err = ClaimOutDir(dir, "p", true)
	require.NoError(t, err, "--force")
	release()

	require.NoError(t, os.WriteFile(filepath.Join(dir, RecordFile), []byte(`{"name":"p","ok":true}`), 0o644))
	_, _, err = ClaimOutDir(dir, "p", false)
	assert.ErrorIs(t, err, ErrAlreadyDone, "the same completed point is a no-op")
	_, _, err = ClaimOutDir(dir, "other", false)
	_, ok = errors.AsType[*OutDirError](err)
	assert.True(t, ok, "another point's directory is refused: %v", err)
}

// TestLeftoversOfAKilledRunAreStopped: kill -9 of sweep run orphaned the
// engine's own children (Pdeathsig reaches direct children only). The
// next start in the same --out finds them by their tag and stops them.
func TestLeftoversOfAKilledRunAreStopped(t *testing.T) {
	dir := t.TempDir()
	tag := proc.NewTag("engine")
	require.NoError(t, recordTag(dir, tag))
	// An engine tree whose parent sweep "died": a shell that left its
	// process group, with a child.
	p, err := proc.Start(context.Background(), proc.Spec{Name: "engine", Tag: tag, Argv: []string{"sh", "-c", "sleep 60 & exec sleep 60"}})
	require.NoError(t, err)
	t.Cleanup(func() { p.Stop(time.Second) })
	require.Eventually(t, func() bool { return countTagged(tag) >= 2 }, 5*time.Second, 20*time.Millisecond)

	release, left, err := ClaimOutDir(dir, "p", false)
	require.NoError(t, err)
	release()
	assert.GreaterOrEqual(t, len(left), 2, "the engine and its child")
	assert.Zero(t, countTagged(tag), "nothing of the earlier run is left")
	assert.NoFileExists(t, filepath.Join(dir, TagsFile))
}

// countTagged counts the live (not zombie) processes carrying tag.
func countTagged(tag string) int {
	n := 0
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && strings.Contains(string(env), proc.TagEnv+"="+tag+"\x00") {
			if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && !strings.Contains(string(st), ") Z ") {
				n++
			}
		}
	}
	return n
}

// TestForceStartsFromAnEmptyPointDirectory: --force kept aiperf_artifacts/,
// so a client that failed at once had the previous run's artifacts
// aggregated into a new result. A forced rerun of a point directory starts
// empty; a directory sweep did not make keeps what sweep never writes;
// nothing outside the directory is touched, even through a symbolic link.
func TestForceStartsFromAnEmptyPointDirectory(t *testing.T) {
	outside := t.TempDir()
	keep := filepath.Join(outside, "keep.txt")
	require.NoError(t, os.WriteFile(keep, []byte("x"), 0o644))

	dir := filepath.Join(t.TempDir(), "point")
	write := func(rel string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, rel), []byte("old"), 0o644))
	}
	write("aiperf_artifacts/profile_export.jsonl")
	write("p.json")
	write("server.log")
	require.NoError(t, os.WriteFile(filepath.Join(dir, RecordFile), []byte(`{"name":"p","ok":false}`), 0o644))
	write("notes.txt")
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "link")))

	release, _, err := ClaimOutDir(dir, "p", true)
	require.NoError(t, err)
	release()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var left []string
	for _, e := range entries {
		if e.Name() != LockFile {
			left = append(left, e.Name())
		}
	}
	assert.Empty(t, left, "a point directory is emptied")
	assert.FileExists(t, keep, "a link is removed, never followed")

	// A directory with no run record: only what a point writes goes.
	other := t.TempDir()
	for _, name := range []string{"server.log", "sglang_command.txt", "p.json", "mine.json", "notes.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(other, name), []byte("x"), 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(other, "aiperf_artifacts"), 0o755))
	release, _, err = ClaimOutDir(other, "p", true)
	require.NoError(t, err)
	release()
	for _, gone := range []string{"server.log", "sglang_command.txt", "p.json", "aiperf_artifacts"} {
		assert.NoFileExists(t, filepath.Join(other, gone))
		assert.NoDirExists(t, filepath.Join(other, gone))
	}
	assert.FileExists(t, filepath.Join(other, "mine.json"))
	assert.FileExists(t, filepath.Join(other, "notes.txt"))
}

// TestServerHoldsItsDirectory: a sweep's server did not hold the lock
// sweep run takes, so sweep run --force on its directory stopped the live
// server as an earlier run's leftovers. A server holds its directory's
// lock until it is stopped: a claim, forced or not, is refused naming
// the holder and stops nothing; once stopped, the directory is free.
func TestServerHoldsItsDirectory(t *testing.T) {
	spec, opts := testSpec(t, "", "")
	srv, _, err := StartServer(t.Context(), spec.ServerSpec, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = srv.Stop() })
	pids := srv.PIDs()
	require.NotEmpty(t, pids)

	_, left, err := ClaimOutDir(opts.OutDir, "p", true)
	oe, ok := errors.AsType[*OutDirError](err)
	require.True(t, ok, "a live server's directory is refused, --force or not: %v", err)
	assert.Contains(t, oe.Msg, fmt.Sprintf("process %d is running a point or a sweep's server there", os.Getpid()))
	assert.Empty(t, left)
	for _, pid := range pids {
		assert.True(t, alivePID(pid), "pid %d of the live server was stopped", pid)
	}
	require.NoError(t, srv.Healthy(t.Context()))

	_, err = srv.Stop()
	require.NoError(t, err)
	release, _, err := ClaimOutDir(opts.OutDir, "p", true)
	require.NoError(t, err, "a stopped server's directory is free")
	release()
}

// TestClaimOutDirRefusesASweep: sweep run's --out on a sweep's directory
// is refused, --force too. It ran the point there, its result beside the
// sweep's point directories, read by knees and compare as a replicate.
func TestClaimOutDirRefusesASweep(t *testing.T) {
	dir := t.TempDir()
	journal := filepath.Join(dir, "journal.jsonl")
	require.NoError(t, os.WriteFile(journal, []byte(`{"event":"sweep_start"}`+"\n"), 0o644))
	for _, force := range []bool{false, true} {
		_, _, err := ClaimOutDir(dir, "p", force)
		var oe *OutDirError
		require.ErrorAs(t, err, &oe, "force %v", force)
		assert.Contains(t, err.Error(), "holds a sweep (journal.jsonl): rerun the sweep's command to run its points, or give sweep run another directory")
	}
	assert.FileExists(t, journal)
	release, err := LockOutDir(dir)
	require.NoError(t, err, "the lock was released")
	release()
}

// TestPointClaimComparesHowThePointIsMade: a real run (ci run-job
// --on-host) took a --simulate result of the same point as "already
// completed" and measured nothing; a rerun of an interrupted arm job was
// refused ("not empty ...; use --force") at the point it was stopped in.
// The same point completed is a no-op only when made the same way; made
// otherwise it is refused naming the difference; an unfinished run of it
// made the same way is cleared and redone.
func TestPointClaimComparesHowThePointIsMade(t *testing.T) {
	sim := &result.Simulation{GPU: "mi355x", Clock: "virtual"}
	builtin := &result.Client{Name: "built-in (aiperf 0.12.0 artifacts)", Schema: "aiperf@0.12.0"}
	engine := func(port string, extra ...string) []string {
		return append([]string{"/bin/sweep", "sim-engine", "--", "python3", "-m", "sglang.launch_server", "--port", port, "--tp-size", "2"}, extra...)
	}
	// The built-in client's argv, as setClient wraps aiperf's profile
	// flags: its URL and artifact directory differ from run to run.
	client := func(port, out string, flags ...string) []string {
		return append([]string{"/bin/sweep", "loadgen", "--aiperf-schema", "aiperf@0.12.0", "--", "profile", "--url", "http://localhost:" + port,
			"--concurrency", "16", "--benchmark-duration", "300", "--warmup-request-count", "16", "--server-metrics", "http://localhost:" + port + "/metrics",
			"--output-artifact-dir", out + "/aiperf_artifacts", "--unsafe-override"}, flags...)
	}
	simMade := Made{Simulated: true, Simulation: sim, Client: builtin, ClientName: ClientProcess, ClientArgv: client("16042", "/o"),
		EngineName: "engine", Engine: engine("16042"), Image: "img:1"}
	record := func(ok bool, stages ...Stage) *Record {
		return &Record{Name: "p", OK: ok, Stages: stages, Simulation: sim, Client: builtin, Facts: &result.RunFacts{Image: "img:1"},
			Processes: map[string]*ProcessOutcome{"engine": {Argv: engine("16042")}, ClientProcess: {Argv: client("16042", "/o")}}}
	}
	// setFlag is argv with flag's value set to v, or without flag ("").
	setFlag := func(argv []string, flag, v string) []string {
		i := slices.Index(argv, flag)
		if v == "" {
			return slices.Delete(slices.Clone(argv), i, i+1)
		}
		out := slices.Clone(argv)
		out[i+1] = v
		return out
	}
	with := func(f func(m *Made)) *Made {
		m := simMade
		f(&m)
		return &m
	}
	cancelled := Stage{Name: StageEngine, Outcome: outcomeCancelled}
	for _, tc := range []struct {
		name string
		rec  *Record
		made *Made
		// want: "done", "redo", or the refusal's text
		want string
	}{
		{"1 same point, same make", record(true), &simMade, "done"},
		{"2 another port is the same make", record(true), with(func(m *Made) { m.Engine = engine("20001") }), "done"},
		{"3 a simulated result is not a real run's", record(true), &Made{EngineName: "engine", Engine: engine("1")[3:], Image: "img:1"},
			"holds point p, completed, made otherwise than this run makes it (engine: simulated on mi355x, virtual clock, now a real engine); use --force"},
		{"4 another client", record(true), with(func(m *Made) {
			m.Client = &result.Client{Name: "aiperf 0.12.0", Program: "aiperf", Schema: "aiperf@0.12.0"}
		}),
			"(client: built-in (aiperf 0.12.0 artifacts) for aiperf@0.12.0, now aiperf 0.12.0 (aiperf) for aiperf@0.12.0)"},
		{"5 another engine flag", record(true), with(func(m *Made) { m.Engine = engine("16042", "--mem-fraction-static", "0.7") }),
			"(engine flag --mem-fraction-static: absent, now 0.7)"},
		{"6 another time scale", record(true), with(func(m *Made) {
			m.Simulation = &result.Simulation{GPU: "mi355x", Clock: "wall", TimeScale: 10}
		}), "(simulated clock: virtual, now wall)"},
		{"7 another image", record(true), with(func(m *Made) { m.Image = "img:2" }), "(image: img:1, now img:2)"},
		{"8 an interrupted run of it is redone", record(false, cancelled), &simMade, "redo"},
		{"9 an interrupted run made otherwise is refused", record(false, cancelled), with(func(m *Made) { m.Simulated, m.Simulation = false, nil }),
			"holds point p, an unfinished run, made otherwise than this run makes it (engine: simulated on mi355x, virtual clock, now a real engine)"},
		{"10 the make not given: an unfinished run is refused", record(false, cancelled), nil, "not empty (run.json, server.log); use --force"},
		// Before, the client's command was not compared: sweep run at
		// 3600 s took a 300 s point (or a discovery's 1200 s point, or an
		// adaptive search's 180 s probe) as done.
		{"12 another benchmark duration", record(true), with(func(m *Made) {
			m.ClientArgv = setFlag(setFlag(m.ClientArgv, "--benchmark-duration", "3600"), "--unsafe-override", "")
		}), "(client flag --benchmark-duration: 300, now 3600; client flag --unsafe-override: set, now absent)"},
		{"13 another warm-up", record(true), with(func(m *Made) { m.ClientArgv = setFlag(m.ClientArgv, "--warmup-request-count", "160") }),
			"(client flag --warmup-request-count: 16, now 160)"},
		{"14 an unfinished run at another length is refused", record(false, cancelled), with(func(m *Made) {
			m.ClientArgv = setFlag(m.ClientArgv, "--benchmark-duration", "600")
		}), "holds point p, an unfinished run, made otherwise than this run makes it (client flag --benchmark-duration: 300, now 600)"},
		{"15 another port and directory are the same client command", record(true), with(func(m *Made) { m.ClientArgv = client("20001", "/elsewhere") }), "done"},
		{"16 aiperf's program is the client's name, not a flag", record(true), with(func(m *Made) {
			m.Client = &result.Client{Name: "aiperf 0.12.0", Program: "aiperf", Schema: "aiperf@0.12.0"}
			m.ClientArgv = append([]string{"/usr/bin/aiperf"}, client("16042", "/o")[5:]...)
		}), "(client: built-in (aiperf 0.12.0 artifacts) for aiperf@0.12.0, now aiperf 0.12.0 (aiperf) for aiperf@0.12.0); use --force"},
		// Before, the client's flags were read as spelt: aiperf reads
		// --benchmark_duration as --benchmark-duration, and a rerun
		// spelling it so was "made otherwise".
		{"17 aiperf's underscore spelling is the same flag", record(true), with(func(m *Made) {
			m.ClientArgv = slices.Clone(m.ClientArgv)
			m.ClientArgv[slices.Index(m.ClientArgv, "--benchmark-duration")] = "--benchmark_duration"
		}), "done"},
		{"18 a flag differs by its canonical name however spelt", record(true), with(func(m *Made) {
			m.ClientArgv = setFlag(m.ClientArgv, "--benchmark-duration", "600")
			m.ClientArgv[slices.Index(m.ClientArgv, "--benchmark-duration")] = "--benchmark_duration"
		}), "(client flag --benchmark-duration: 300, now 600); use --force"},
		// Before, a run.json that did not parse was "not empty (run.json, server.log)".
		{"11 a run.json that does not read is refused at its position", nil, &simMade,
			"its run.json does not read, so what point it holds and how it was made is unknown: DIR/run.json:2:9: the JSON ends early: want the run.json sweep run writes; use --force"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			b := []byte("{\"name\": \"p\",\n \"ok\": t")
			if tc.rec != nil {
				var err error
				b, err = json.Marshal(tc.rec)
				require.NoError(t, err)
			}
			require.NoError(t, os.WriteFile(filepath.Join(dir, RecordFile), b, 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "server.log"), []byte("x"), 0o644))
			c, err := PointClaim{Dir: dir, Name: "p", Made: tc.made}.Claim()
			switch tc.want {
			case "done":
				assert.ErrorIs(t, err, ErrAlreadyDone)
			case "redo":
				require.NoError(t, err)
				c.Release()
				require.NotNil(t, c.Redone)
				assert.False(t, c.Redone.OK)
				assert.NoFileExists(t, filepath.Join(dir, "server.log"), "the unfinished run's files are cleared")
				assert.NoFileExists(t, filepath.Join(dir, RecordFile))
			default:
				oe, ok := errors.AsType[*OutDirError](err)
				require.True(t, ok, "got %v, want a refusal", err)
				assert.Contains(t, oe.Msg, strings.ReplaceAll(tc.want, "DIR", dir))
				assert.FileExists(t, filepath.Join(dir, "server.log"), "nothing is cleared")
			}
		})
	}
}

// A refused claim leaves the directory as it found it (no lock file of its
// own), and a directory holding only a failed launch's plan of this point,
// or only the files of a Slurm allocation that never ran the point, is
// redone, not refused as non-empty.
func TestClaimRefusalWritesNothingAndFailedLaunchRedone(t *testing.T) {
	const plan = ".sweep-launch/plan.json"
	allocFiles := func(e string) bool { return e == "slurm-alloc.sh" || e == "slurm-alloc-65.out" }
	for _, tc := range []struct {
		name        string
		files       map[string]string
		launchPlan  string
		allocFiles  func(string) bool
		wantErr     string
		wantRedone  bool
		wantAlloc   bool     // RedoneAllocation
		wantEntries []string // after a refusal
	}{
		{name: "a stranger's file: refused, no lock file left", files: map[string]string{"notes.txt": "hi"},
			wantErr: "not empty (notes.txt)", wantEntries: []string{"notes.txt"}},
		{name: "a lock file already there stays", files: map[string]string{"notes.txt": "hi", LockFile: ""},
			wantErr: "not empty (notes.txt)", wantEntries: []string{LockFile, "notes.txt"}},
		{name: "a failed launch of this point: redone", files: map[string]string{plan: `{"result_filename": "p1"}`},
			launchPlan: plan, wantRedone: true},
		{name: "a failed launch of another point: refused", files: map[string]string{plan: `{"result_filename": "p2"}`},
			launchPlan: plan, wantErr: "not empty (.sweep-launch)", wantEntries: []string{".sweep-launch"}},
		{name: "a launch plan and more: refused", files: map[string]string{plan: `{"result_filename": "p1"}`, "x.txt": ""},
			launchPlan: plan, wantErr: "not empty (.sweep-launch, x.txt)", wantEntries: []string{".sweep-launch", "x.txt"}},
		{name: "not a launched run: a plan directory is not its own", files: map[string]string{plan: `{"result_filename": "p1"}`},
			wantErr: "not empty (.sweep-launch)", wantEntries: []string{".sweep-launch"}},
		{name: "an allocation still pending at its start timeout: redone", files: map[string]string{"slurm-alloc.sh": "#!/bin/sh"},
			allocFiles: allocFiles, wantAlloc: true},
		{name: "an allocation that ended before the run: redone", files: map[string]string{"slurm-alloc.sh": "#!/bin/sh", "slurm-alloc-65.out": "cancelled"},
			allocFiles: allocFiles, wantAlloc: true},
		{name: "an allocation's files and more: refused", files: map[string]string{"slurm-alloc.sh": "#!/bin/sh", "x.txt": ""},
			allocFiles: allocFiles, wantErr: "not empty (slurm-alloc.sh, x.txt)", wantEntries: []string{"slurm-alloc.sh", "x.txt"}},
		{name: "no allocation of its own: an allocation's files are not its own", files: map[string]string{"slurm-alloc.sh": "#!/bin/sh"},
			wantErr: "not empty (slurm-alloc.sh)", wantEntries: []string{"slurm-alloc.sh"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range tc.files {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
			}
			c, err := PointClaim{Dir: dir, Name: "p1", Made: &Made{}, LaunchPlan: tc.launchPlan, AllocFiles: tc.allocFiles}.Claim()
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				var got []string
				entries, rerr := os.ReadDir(dir)
				require.NoError(t, rerr)
				for _, e := range entries {
					got = append(got, e.Name())
				}
				assert.Equal(t, tc.wantEntries, got)
				return
			}
			require.NoError(t, err)
			defer c.Release()
			assert.Equal(t, tc.wantRedone, c.RedoneLaunch)
			assert.Equal(t, tc.wantAlloc, c.RedoneAllocation)
			assert.NoDirExists(t, filepath.Join(dir, ".sweep-launch"))
			assert.NoFileExists(t, filepath.Join(dir, "slurm-alloc.sh"))
		})
	}
}

// TestPointClaimOtherPoint: sweep run of a key's kv:dram row into the
// --out of its kv:none row said only "not empty (... and 10 more); use
// --force", and --force deleted the kv:none result silently. Now the
// refusal names the point there, its layout and KV offloading and its
// result, and a forced claim returns that record (Replaced) so the run
// says what it deleted.
func TestPointClaimOtherPoint(t *testing.T) {
	const old, asked = "m_tp4_conc32_kvnone", "m_tp4_conc32_kvdram-lmcache"
	for _, tc := range []struct {
		name string
		ok   bool
		want string
	}{
		{"completed", true, "holds point " + old + " (tp4 ep1 conc32 kv-offloading none; completed, with its result file), not point " + asked +
			" this run makes: give this run another --out, or --force to delete that run and its result"},
		{"unfinished", false, "holds point " + old + " (tp4 ep1 conc32 kv-offloading none; a run that did not complete), not point " + asked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			rec := &Record{Name: old, OK: tc.ok, Facts: &result.RunFacts{TP: 4, EP: 1, Conc: 32, KVOffloading: "none"}}
			if tc.ok {
				rec.ResultFile = filepath.Join(dir, result.FileName(old))
			}
			b, err := json.Marshal(rec)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, RecordFile), b, 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, result.FileName(old)), []byte("{}"), 0o644))
			made := Made{EngineName: "engine", Engine: []string{"vllm", "serve"}}

			_, err = PointClaim{Dir: dir, Name: asked, Made: &made}.Claim()
			oe, ok := errors.AsType[*OutDirError](err)
			require.True(t, ok, "got %v, want a refusal", err)
			assert.Equal(t, tc.want, oe.Msg[:len(tc.want)])
			assert.FileExists(t, filepath.Join(dir, result.FileName(old)), "a refusal deletes nothing")

			c, err := PointClaim{Dir: dir, Name: asked, Made: &made, Force: true}.Claim()
			require.NoError(t, err)
			c.Release()
			require.NotNil(t, c.Replaced, "--force returns what it deleted")
			assert.Equal(t, old, c.Replaced.Name)
			assert.NoFileExists(t, filepath.Join(dir, result.FileName(old)))
		})
	}
}
