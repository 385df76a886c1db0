#!/usr/bin/env bash
# sim-agreement.sh OUT_DIR [KEY...]: runs a simulated discovery of the
# official conc-lists of every planned agentic key (or the KEYs given), one
# key at a time (at most 900 s a key; a key's discovery is reused when
# OUT_DIR/KEY/summary.json exists), then judges them all with
# `sweep sim agreement --frontier OUT_DIR KEY...`: a key agrees when every
# point is green and each arm with three or more points has its knee
# (ok or ambiguous) above its window's first point and at most its last;
# "by peak" by InferenceX's own word for a knee instead, the peak; "by
# frontier" when each arm whose knee misses its window is a segment of the
# key's Pareto frontier (the command runs each such arm's one extra
# simulated point, at its frontier step, into OUT_DIR/KEY.frontier/, reused
# when there). Each key's line starts with where its official windows came
# from (configs/window-provenance.csv: knee, cap, ...). The counts line
# gives the three counts, and the last line the same for the keys whose
# windows InferenceX chose at a measured knee apart from the others (as
# agreement.golden ends). Multi-node keys are
# listed as skipped without a discovery, and so are keys whose discovery
# failed or timed out; neither is counted. About half a minute a key on 2
# cores. go test ./simengine -run
# TestAgreementWithOfficialWindows judges the same windows with the same
# rules in seconds from the capacity model's steady state (its verdicts:
# testdata/simengine/agreement.golden); this script is the full discovery
# behind it.
set -euo pipefail
out=${1:?usage: sim-agreement.sh OUT_DIR [KEY...]}
shift
sweep=${SWEEP:-sweep}
if [ $# -gt 0 ]; then
	keys=("$@")
else
	mapfile -t keys < <("$sweep" plan --coverage | awk '$2 == "planned" {print $1}')
fi
mkdir -p "$out"
discovered=()
for k in "${keys[@]}"; do
	# sweep sim agreement judges single-node arms only: a multi-node key's
	# simulated discovery (minutes a point on the compressed wall clock)
	# is not run.
	if [[ $("$sweep" plan --config-keys "$k" 2>&1 || true) == *"agentic-coding multi-node"* ]]; then
		printf '%-10s%-17s %s: %s\n' '' skip "$k" "multi-node (sweep sim agreement judges single-node arms)"
		continue
	fi
	if [ ! -e "$out/$k/summary.json" ]; then
		timeout 900 "$sweep" discover --simulate --builtin-client --config-keys "$k" --no-report --out "$out/$k" >"$out/$k.log" 2>&1 || true
	fi
	if [ ! -e "$out/$k/summary.json" ]; then
		printf '%-10s%-17s %s: %s\n' '' skip "$k" "$(grep -m1 '^sweep:' "$out/$k.log" || tail -n1 "$out/$k.log")"
		continue
	fi
	discovered+=("$k")
done
if [ ${#discovered[@]} -eq 0 ]; then
	echo "no key was discovered" >&2
	exit 1
fi
"$sweep" sim agreement --frontier "$out" "${discovered[@]}" 2>"$out/agreement.log"
