package matrix

import (
	"os"
	"runtime/debug"
	"testing"

	"sweep/configs"
)

// The benchmarks use InferenceX's own master configs (208 keys, 1,820
// matrix rows). testdata/sweep/bench_python.py times the Python generator
// on the same files doing the same work; run both side by side (see the
// sweep section of testdata/README.md).

const ixConfigs = "../../testdata/inferencex/configs/"

func readSources(b testing.TB) ([]configs.Source, configs.Source) {
	b.Helper()
	var masters []configs.Source
	for _, f := range []string{"amd-master.yaml", "nvidia-master.yaml"} {
		data, err := os.ReadFile(ixConfigs + f)
		if err != nil {
			b.Fatal(err)
		}
		masters = append(masters, configs.Source{Name: f, Data: data})
	}
	data, err := os.ReadFile(ixConfigs + "runners.yaml")
	if err != nil {
		b.Fatal(err)
	}
	return masters, configs.Source{Name: "runners.yaml", Data: data}
}

func corpusGenerator(b testing.TB) *Generator {
	b.Helper()
	ms, rs := readSources(b)
	m, err := configs.ParseMasters(ms...)
	if err != nil {
		b.Fatal(err)
	}
	r, err := configs.ParseRunners(rs)
	if err != nil {
		b.Fatal(err)
	}
	return &Generator{Masters: m, Runners: r}
}

// BenchmarkFullCorpus generates the matrix of every key of both master
// files with the default eval policy and writes it as JSON: what
// "generate_sweep_configs.py test-config --config-keys <all keys>" does
// after loading its inputs.
func BenchmarkFullCorpus(b *testing.B) {
	g := corpusGenerator(b)
	opts := TestConfigOptions{ConfigKeys: g.Masters.Keys()}
	var buf []byte
	for b.Loop() {
		rows, err := g.TestConfig(opts)
		if err != nil {
			b.Fatal(err)
		}
		buf = rows.AppendJSON(buf[:0])
	}
	b.ReportMetric(float64(len(buf)), "json-bytes")
}

// BenchmarkFullCorpusGenerate is the speed requirement's figure: the
// matrix of every key of both master files (amd-master.yaml and
// nvidia-master.yaml, already loaded), as "generate_sweep_configs.py
// test-config --config-keys <all 208 keys>" computes it with no other
// option: expand every config key (generate_test_config_sweep, which also
// validates each row) and apply the default eval policy
// (mark_eval_entries), giving 1,820 rows. Loading and JSON are left out;
// BenchmarkLoadMasters and BenchmarkFullCorpus cover them. The Python
// counterpart is the "generate" figure of testdata/sweep/bench_python.py.
func BenchmarkFullCorpusGenerate(b *testing.B) {
	g := corpusGenerator(b)
	opts := TestConfigOptions{ConfigKeys: g.Masters.Keys()}
	n := 0
	for b.Loop() {
		rows, err := g.TestConfig(opts)
		if err != nil {
			b.Fatal(err)
		}
		n = len(rows)
	}
	b.ReportMetric(float64(n), "rows")
}

// cliGCPercent is the collector target the sweep CLI runs its batch
// commands with (batchGCPercent in cmd/sweep).
const cliGCPercent = 400

// BenchmarkFullCorpusGenerateCLI is BenchmarkFullCorpusGenerate under the
// collector setting the sweep CLI runs its batch commands with: the cost a
// user of `sweep matrix` pays.
func BenchmarkFullCorpusGenerateCLI(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(cliGCPercent))
	g := corpusGenerator(b)
	opts := TestConfigOptions{ConfigKeys: g.Masters.Keys()}
	n := 0
	for b.Loop() {
		rows, err := g.TestConfig(opts)
		if err != nil {
			b.Fatal(err)
		}
		n = len(rows)
	}
	b.ReportMetric(float64(n), "rows")
}

// BenchmarkFullCorpusAllEvals generates every key with --all-evals, the
// widest eval selection (row merging, parallelism keys).
func BenchmarkFullCorpusAllEvals(b *testing.B) {
	g := corpusGenerator(b)
	opts := TestConfigOptions{ConfigKeys: g.Masters.Keys(), EvalOptions: EvalOptions{AllEvals: true}}
	for b.Loop() {
		if _, err := g.TestConfig(opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadMasters parses and checks both master files and
// runners.yaml: the "load" figure of testdata/sweep/bench_python.py
// (load_config_files and load_runner_file, YAML and pydantic checks).
func BenchmarkLoadMasters(b *testing.B) {
	ms, rs := readSources(b)
	for b.Loop() {
		if _, err := configs.ParseMasters(ms...); err != nil {
			b.Fatal(err)
		}
		if _, err := configs.ParseRunners(rs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFullCorpusEndToEnd loads the files and generates and writes
// the full matrix: the whole work of one generator invocation.
func BenchmarkFullCorpusEndToEnd(b *testing.B) {
	ms, rs := readSources(b)
	var buf []byte
	for b.Loop() {
		m, err := configs.ParseMasters(ms...)
		if err != nil {
			b.Fatal(err)
		}
		r, err := configs.ParseRunners(rs)
		if err != nil {
			b.Fatal(err)
		}
		g := &Generator{Masters: m, Runners: r}
		rows, err := g.TestConfig(TestConfigOptions{ConfigKeys: m.Keys()})
		if err != nil {
			b.Fatal(err)
		}
		buf = rows.AppendJSON(buf[:0])
	}
}

// BenchmarkChangelogEveryKey processes a changelog entry selecting every
// key ("*") with trim-conc: throughput, evals, fingerprints and JSON.
func BenchmarkChangelogEveryKey(b *testing.B) {
	g := corpusGenerator(b)
	base, err := os.ReadFile(ixConfigs + "perf-changelog.yaml")
	if err != nil {
		b.Fatal(err)
	}
	head := append(append([]byte{}, base...), "\n- config-keys:\n    - \"*\"\n  description:\n    - \"every key\"\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/9999\n"...)
	opts := ChangelogOptions{
		Base: configs.Source{Name: "base", Data: base}, Head: configs.Source{Name: "head", Data: head},
		TrimConc: true,
	}
	var buf []byte
	for b.Loop() {
		cl, err := g.ProcessChangelog(opts)
		if err != nil {
			b.Fatal(err)
		}
		buf = cl.AppendJSON(buf[:0])
	}
}
