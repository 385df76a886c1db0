#!/usr/bin/env bash
# sim-agreement.sh OUT_DIR [KEY...]: runs a simulated discovery of the
# official conc-lists of every planned agentic key (or the KEYs given), one
# key at a time, and counts the keys whose simulated arms agree with the
# official windows: every point green, and each arm with three or more
# points has its knee (sweep knees: ok or ambiguous) above the window's
# first point and at most its last; "by peak" keys agree by InferenceX's
# own word for a knee instead, the peak (ok, ambiguous or saturated-at-min
# with its peak above the window's first point and at most its last;
# TestAgreementWithOfficialWindows counts both, and a third, by the
# Pareto frontier, which this script does not). Keys discover cannot simulate
# (multi-node and disaggregated ones) are listed as skipped, not counted.
# Needs jq. Takes about 1-3 min a key on
# 2 cores; a key's results are reused when OUT_DIR/KEY/summary.json exists.
# go test ./simengine -run TestAgreementWithOfficialWindows judges the
# same windows in seconds from the capacity model's steady state (its
# verdicts: testdata/simengine/agreement.golden); this script is the
# full discovery behind it.
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
agree=0
bypeak=0
counted=0
for k in "${keys[@]}"; do
	if [ ! -e "$out/$k/summary.json" ]; then
		timeout 900 "$sweep" discover --simulate --builtin-client --config-keys "$k" --no-report --out "$out/$k" >"$out/$k.log" 2>&1 || true
	fi
	if [ ! -e "$out/$k/summary.json" ]; then
		echo "skip      $k: $(grep -m1 '^sweep:' "$out/$k.log" || tail -n1 "$out/$k.log")"
		continue
	fi
	counted=$((counted + 1))
	failed=$(jq '[.points[] | select(.status != "ok")] | length' "$out/$k/summary.json")
	knees=$("$sweep" knees --format json "$out/$k")
	verdict=$(jq -r '
		[.[] | [.points[].conc] as $c
		 | if ($c | length) < 3 then "ok"
		   elif (.status == "ok" or .status == "ambiguous") and .knee_conc > ($c | min) and .knee_conc <= ($c | max) then "ok"
		   else "tp\(.arm.tp)ep\(.arm.ep) kv=\(.arm.kv_offloading): \(.status) knee c\(.knee_conc // 0) window \($c | min)-\($c | max)" end]
		| map(select(. != "ok")) | join("; ")' <<<"$knees")
	peakmiss=$(jq -r '
		[.[] | [.points[].conc] as $c
		 | select(($c | length) >= 3)
		 | select((.status == "ok" or .status == "ambiguous" or .status == "saturated-at-min")
		          and .peak_conc > ($c | min) and .peak_conc <= ($c | max) | not)] | length' <<<"$knees")
	if [ "$failed" = 0 ] && [ -z "$verdict" ]; then
		agree=$((agree + 1))
		bypeak=$((bypeak + 1))
		echo "agree     $k"
	elif [ "$failed" = 0 ] && [ "$peakmiss" = 0 ]; then
		bypeak=$((bypeak + 1))
		echo "by peak   $k: $verdict"
	else
		echo "disagree  $k: $failed failed point(s)${verdict:+; $verdict}"
	fi
done
echo "$agree of $counted keys agree; $bypeak with InferenceX's knee, the peak, inside every window"
