#!/usr/bin/env python3
"""Time InferenceX's Python generator in-process, for comparison with the
matrix package's Go benchmarks (configs/matrix/matrix_bench_test.go).

usage: bench_python.py INFERENCEX_CHECKOUT [SECONDS]

INFERENCEX_CHECKOUT is a work tree (or `git archive` of utils/) of
SemiAnalysisAI/InferenceX at the commit named in ../inferencex/README.md;
PyYAML and pydantic must be installed. This script is the project's own
harness: it imports InferenceX's utils/matrix_logic modules and only calls
them. It times, on ../inferencex/configs/{amd,nvidia}-master.yaml and
runners.yaml:

  load      validation.load_config_files(both masters) + load_runner_file
            (YAML parsing and pydantic validation), vs BenchmarkLoadMasters
  generate  what generate_sweep_configs.py main does for
            "test-config --config-keys <every key of both masters>" after
            loading: generate_test_config_sweep + mark_eval_entries (default
            eval policy), no JSON, vs BenchmarkFullCorpusGenerate
  json      generate plus json.dumps of the rows, vs BenchmarkFullCorpus

Each figure is the median of repeated runs (at least 5, for about SECONDS
seconds each, default 10). Run it next to the Go benchmarks, under the same
load, e.g.:

  python3 testdata/sweep/bench_python.py /tmp/ix &
  go test -run '^$' -bench 'FullCorpus|LoadMasters' -count 5 ./configs/matrix/
"""
import argparse, json, os, statistics, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
IX_DATA = os.path.join(HERE, '..', 'inferencex', 'configs')


def median_ms(fn, seconds, min_runs=5):
    times = []
    deadline = time.perf_counter() + seconds
    while len(times) < min_runs or time.perf_counter() < deadline:
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3, len(times)


def main():
    ix = os.path.abspath(sys.argv[1])
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
    sys.path.insert(0, os.path.join(ix, 'utils', 'matrix_logic'))
    import generate_sweep_configs as g
    import validation as v

    masters = [os.path.join(IX_DATA, f) for f in ('amd-master.yaml', 'nvidia-master.yaml')]
    runners_file = os.path.join(IX_DATA, 'runners.yaml')
    data = v.load_config_files(masters)
    runners = v.load_runner_file(runners_file)
    # The namespace argparse builds for test-config with every key.
    args = argparse.Namespace(
        command='test-config', config_files=masters, runner_config=runners_file,
        config_keys=list(data.keys()), conc=None, seq_lens=None, no_evals=False,
        evals_only=False, all_evals=False, runner_node_filter=None, scenario_type=None)

    def generate():
        rows = g.generate_test_config_sweep(args, data, runners)
        return g.mark_eval_entries(rows, include_agentic=False)

    # The generator must not change its inputs: every run gives the same rows.
    first = json.dumps(generate())
    assert json.dumps(generate()) == first
    n = len(json.loads(first))

    load_ms, load_n = median_ms(lambda: (v.load_config_files(masters), v.load_runner_file(runners_file)), seconds)
    gen_ms, gen_n = median_ms(generate, seconds)
    json_ms, json_n = median_ms(lambda: json.dumps(generate()), seconds)
    print(f'python {sys.version.split()[0]}, {len(data)} keys, {n} rows')
    print(f'load      {load_ms:9.2f} ms  (median of {load_n})')
    print(f'generate  {gen_ms:9.2f} ms  (median of {gen_n})')
    print(f'json      {json_ms:9.2f} ms  (median of {json_n})')


if __name__ == '__main__':
    main()
