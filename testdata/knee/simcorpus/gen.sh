#!/bin/sh
# Regenerates the simulated-engine corpus of the adaptive search's
# benchmark (README.md here): a full-grid simulated discovery of each key
# for each seed, its points at agentx-fast's 1200 s and again at a 180 s
# probe's length, then the compact per-point table: simcorpus.csv on the
# keys' official conc-lists, simcorpus-doubling.csv on the doubling grid
# 1-256 (doubling.yaml: the same keys with that grid).
#
#   testdata/knee/simcorpus/gen.sh [WORKDIR [official|doubling]]   (from the repository root)
#
# $SEEDS and $KEYS (space-separated) replace the seeds and keys;
# $SIMCORPUS_OUT names the table written instead (simcorpus-keys.csv);
# $PROBE_SECONDS replaces the probes' 180 s (an experiment's table: the
# benchmark reads probes of 180 s).
set -eu
work=${1:-$(mktemp -d)}
grid=${2:-official}
set -- # the discoveries' extra arguments
case $grid in
official) ;;
doubling) set -- --config-files testdata/knee/simcorpus/doubling.yaml ;;
*) echo "gen.sh: grid $grid, want official or doubling" >&2; exit 2 ;;
esac
keys=${KEYS:-"qwen3.5-fp8-mi325x-sglang-agentic-mtp qwen3.5-fp4-mi355x-sglang-agentic-mtp
qwen3.5-fp8-mi300x-sglang-agentic-mtp minimaxm3-fp8-mi325x-vllm-agentic-mtp
glm5.2-fp8-mi325x-sglang-agentic-mtp minimaxm3-fp4-mi355x-vllm-agentic-mtp
qwen3.5-fp8-h200-sglang-agentic-mtp dsv4-fp4-mi355x-sglang-agentic-mtp"}
seeds=${SEEDS:-1 2 3 4 5 6 7 8}
mkdir -p "$work/full" "$work/probe"
go build -o "$work/sweep" ./cmd/sweep
for seed in $seeds; do
	for key in $keys; do
		SWEEP_SIM_SEED=$seed "$work/sweep" discover --simulate --builtin-client --no-report "$@" \
			--config-keys "$key" --out "$work/full/$key.s$seed" >"$work/full-$key.s$seed.log" 2>&1 || true
		SWEEP_SIM_SEED=$seed "$work/sweep" discover --simulate --builtin-client --no-report "$@" \
			--official-durations --duration "${PROBE_SECONDS:-180}" \
			--config-keys "$key" --out "$work/probe/$key.s$seed" >"$work/probe-$key.s$seed.log" 2>&1 || true
		# The table reads the result files only: aiperf's artifacts are
		# most of a discovery's scratch space.
		find "$work/full/$key.s$seed" "$work/probe/$key.s$seed" -depth -type d -name aiperf_artifacts -exec rm -rf {} + 2>/dev/null || true
	done
done
SIMCORPUS_FROM=$work SIMCORPUS_GRID=$grid go test ./sweep/knee -run TestWriteSimCorpus -count 1
