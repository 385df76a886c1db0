package power

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the cases name zones such as America/New_York

	"sweep/metrics/aiperf"
)

// powerCase is case.json of a conformance case (testdata/README.md).
type powerCase struct {
	Name         string            `json:"name"`
	PowerCommand []string          `json:"power_command"`
	PowerEnv     map[string]string `json:"power_env"`
	Expected     *int              `json:"expected_num_gpus"`
	Inputs       []string          `json:"inputs"`
	AdapterWrote []string          `json:"adapter_wrote"`
	// InputDirs are directories made before the run (a directory where
	// the adapter writes a file makes that write fail).
	InputDirs []string `json:"input_dirs"`
}

type processOut struct {
	ExitCode int    `json:"exit_code"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
}

// TestConformance runs every case InferenceX's adapter was run on (the
// four shared cases and the synthesized ones) and compares the patched
// aggregate, both sidecars, the files written, the messages and the exit
// status; numbers agree to a relative 1e-12, keys in order.
func TestConformance(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/conformance/*/case.json")
	synth, _ := filepath.Glob("testdata/cases/*/case.json")
	dirs = append(dirs, synth...)
	if len(dirs) < 4 {
		t.Fatalf("found %d cases", len(dirs))
	}
	for _, c := range dirs {
		dir := filepath.Dir(c)
		t.Run(filepath.Base(dir), func(t *testing.T) { runCase(t, dir, false) })
		// The same case with the records handed over as the point runner
		// does (already read for the aggregate): the same outcome.
		t.Run(filepath.Base(dir)+"/records-given", func(t *testing.T) { runCase(t, dir, true) })
	}
}

func runCase(t *testing.T, dir string, recordsGiven bool) {
	var pc powerCase
	readJSON(t, filepath.Join(dir, "case.json"), &pc)
	var want processOut
	readJSON(t, filepath.Join(dir, "process.json"), &want)

	resultDir := filepath.Join(t.TempDir(), "result")
	for _, in := range pc.Inputs {
		if filepath.Base(in) == "server_metrics_export.json" {
			continue // only the aggregation reads it; not copied into testdata
		}
		copyFile(t, filepath.Join(dir, in), filepath.Join(resultDir, in))
	}
	for _, d := range append([]string{"."}, pc.InputDirs...) {
		if err := os.MkdirAll(filepath.Join(resultDir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	agg := filepath.Join(t.TempDir(), "agg.json")
	if _, err := os.Stat(filepath.Join(dir, "agg_input.json")); err == nil {
		copyFile(t, filepath.Join(dir, "agg_input.json"), agg)
	}
	before := listFiles(t, resultDir)

	zone := time.Local
	if tz, ok := pc.PowerEnv["TZ"]; ok {
		var err error
		if zone, err = time.LoadLocation(tz); err != nil {
			t.Fatal(err)
		}
	}
	require := slices.Contains(pc.PowerCommand, "--require-power") || truthy(pc.PowerEnv["REQUIRE_POWER"])
	var records []aiperf.Record
	if recordsGiven {
		f, err := os.Open(filepath.Join(aiperf.ResolveArtifactDir(resultDir), aiperf.RecordsFile))
		if err != nil {
			t.Skip("no records file: a caller has no records to give")
		}
		records, err = aiperf.ReadRecords(f, "records")
		f.Close()
		if err != nil || records == nil {
			t.Skip("records unreadable or none: a caller has none to give")
		}
	}
	var stdout, stderr bytes.Buffer
	out := Adapt(Options{
		ResultDir: resultDir, Aggregate: FilePatcher(agg), AggregateName: agg,
		ExpectedGPUs: pc.Expected, RequirePower: require, Zone: zone,
		Stdout: &stdout, Stderr: &stderr, Records: records,
	})
	placeholders := strings.NewReplacer(resultDir, "<RESULT_DIR>", agg, "<AGG_RESULT>")
	if out.ExitCode != want.ExitCode {
		t.Errorf("exit code %d, want %d", out.ExitCode, want.ExitCode)
	}
	if got := placeholders.Replace(stdout.String()); got != want.Stdout {
		t.Errorf("stdout %q\nwant   %q", got, want.Stdout)
	}
	if got := placeholders.Replace(stderr.String()); exceptionText(got) != exceptionText(want.Stderr) {
		t.Errorf("stderr %q\nwant   %q", got, want.Stderr)
	}
	var wrote, wantWrote []string
	for _, f := range listFiles(t, resultDir) {
		if !slices.Contains(before, f) {
			wrote = append(wrote, f)
		}
	}
	for _, f := range pc.AdapterWrote {
		// A failed Python atomic write leaves its .tmp file; ours leave none.
		if !strings.HasSuffix(f, ".tmp") {
			wantWrote = append(wantWrote, f)
		}
	}
	if !slices.Equal(wrote, wantWrote) {
		t.Errorf("wrote %v, want %v", wrote, wantWrote)
	}
	compareOutput(t, filepath.Join(dir, "expected.json"), agg, placeholders)
	compareOutput(t, filepath.Join(dir, "validation.json"), filepath.Join(resultDir, ValidationFile), placeholders)
	compareOutput(t, filepath.Join(dir, "power_window.json"), filepath.Join(resultDir, WindowFile), placeholders)
}

// exceptionText cuts the text of a Python exception from the messages
// that print one: its wording is Python's, not part of the contract.
func exceptionText(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		for _, p := range []string{"[aggregate_power] Failed to patch ", "[agentx_power] Failed to record adapter failure:"} {
			if strings.HasPrefix(l, p) {
				lines[i] = p
			}
		}
	}
	return strings.Join(lines, "\n")
}

func truthy(s string) bool {
	switch strings.ToLower(s) {
	case "1", "true", "yes":
		return true
	}
	return false
}

// compareOutput compares a produced file with the reference's ("null":
// the file must not exist).
func compareOutput(t *testing.T, wantPath, gotPath string, ph *strings.Replacer) {
	t.Helper()
	wantData, err := os.ReadFile(wantPath)
	if err != nil {
		t.Fatal(err)
	}
	gotData, err := os.ReadFile(gotPath)
	if strings.TrimSpace(string(wantData)) == "null" {
		if err == nil {
			t.Errorf("%s written, the reference wrote none", filepath.Base(gotPath))
		}
		return
	}
	if err != nil {
		t.Errorf("%s: %v", filepath.Base(wantPath), err)
		return
	}
	want, err := parseValue(wantData)
	if err != nil { // the reference left a file that is not JSON as it was
		if string(gotData) != string(wantData) {
			t.Errorf("%s: %q, want %q", filepath.Base(gotPath), gotData, wantData)
		}
		return
	}
	got, err := parseValue([]byte(ph.Replace(string(gotData))))
	if err != nil {
		t.Fatalf("%s: %v", gotPath, err)
	}
	if ph.Replace(string(gotData)) != string(wantData) {
		t.Logf("%s: not byte-identical to the reference (numbers compared with a tolerance below)", filepath.Base(wantPath))
	}
	if diff := diffValues(want, got, "$"); diff != "" {
		t.Errorf("%s differs from the reference: %s", filepath.Base(wantPath), diff)
	}
}

// diffValues names the first difference: kinds, key order, strings, and
// numbers beyond a relative 1e-12 (an integer must stay an integer).
func diffValues(want, got *value, path string) string {
	if want.kind != got.kind {
		return path + ": kind " + string(dumps(got)) + ", want " + string(dumps(want))
	}
	switch want.kind {
	case kindObject:
		if !slices.Equal(want.keys, got.keys) {
			return path + ": keys " + strings.Join(got.keys, ",") + "\nwant " + strings.Join(want.keys, ",")
		}
		for i, k := range want.keys {
			if d := diffValues(want.vals[i], got.vals[i], path+"."+k); d != "" {
				return d
			}
		}
	case kindArray:
		if len(want.vals) != len(got.vals) {
			return path + ": " + string(dumps(got)) + ", want " + string(dumps(want))
		}
		for i := range want.vals {
			if d := diffValues(want.vals[i], got.vals[i], path); d != "" {
				return d
			}
		}
	case kindNumber:
		wantInt, gotInt := !strings.ContainsAny(want.num, ".eEIN"), !strings.ContainsAny(got.num, ".eEIN")
		if wantInt != gotInt {
			return path + ": " + got.num + ", want " + want.num
		}
		w, _ := jsonNumber(want.num)
		g, _ := jsonNumber(got.num)
		if math.Abs(w-g) > 1e-12*math.Max(math.Abs(w), 1e-300) && w != g {
			return path + ": " + got.num + ", want " + want.num
		}
	default:
		if string(dumps(want)) != string(dumps(got)) {
			return path + ": " + string(dumps(got)) + ", want " + string(dumps(want))
		}
	}
	return ""
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}
