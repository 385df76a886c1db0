# Generates the aggregation cases from the real aiperf 0.12.0 reference runs and the
# built-in client's runs of the same points (/work/shared/conformance/real-aiperf/)
# by running InferenceX 843c6254f's own aggregator and validator with the point's
# facts and the trace set's hub cache given (see testdata/README.md). Not run by tests.
import json, os, shutil
import ixaggregate
HERE = os.path.dirname(os.path.abspath(__file__))
REF = os.environ.get("REAL_AIPERF", os.path.join(HERE, "..", "..", "..", "shared", "conformance", "real-aiperf"))  # ../shared from the repository
TRACES = os.path.join(HERE, "..", "traces", "agentic-small.jsonl")
OUT = os.environ.get("OUT", "/tmp/realaiperf-cases")
REPO = "datasets--semianalysisai--cc-traces-weka-062126-256k"

def strip(o):  # histogram timeslices: the aggregator does not read them (checked: same output)
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k != "timeslices"}
    if isinstance(o, list):
        return [strip(x) for x in o]
    return o

cases = {
    "real-aiperf-0.12.0-c4": ("try5", "The real aiperf 0.12.0 against sweep run --simulate --sim-clock wall --time-scale 1 (MI325X Qwen3.5 TP8 EP8 MTP, c4, 60 s): OSL-1 priming records, http_req_* metrics, no full_response_* (full_response_itl/intvty empty); HF trace cache present so output_expected is filled."),
    "builtin-c4": ("builtin-wall", "sweep's built-in load generator on the same point as real-aiperf-0.12.0-c4 (an earlier build: fork-only full_response_* metrics, so full_response_itl/intvty are filled); HF trace cache present so output_expected is filled."),
}
index = []
for name, (src, about) in cases.items():
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "aiperf_artifacts"))
    art = os.path.join(REF, src, "aiperf_artifacts")
    for f in ("profile_export.jsonl", "profile_export_aiperf.json"):
        shutil.copy(os.path.join(art, f), os.path.join(d, "aiperf_artifacts", f))
    sm = strip(json.load(open(os.path.join(art, "server_metrics_export.json"))))
    json.dump(sm, open(os.path.join(d, "aiperf_artifacts", "server_metrics_export.json"), "w"), indent=2)
    snap = os.path.join(d, "hf_cache", REPO, "snapshots", "0" * 40)
    os.makedirs(snap)
    shutil.copy(TRACES, os.path.join(snap, "traces.jsonl"))
    f = json.load(open(os.path.join(REF, src, "run.json")))["facts"]
    env = dict(AGENTIC_OUTPUT_DIR="<AGENTIC_OUTPUT_DIR>", CONC=str(f["conc"]), DCP_SIZE=str(f["dcp"]),
        DISAGG=str(f["disagg"]).lower(), DP_ATTENTION=f["dp_attention"], EP_SIZE=str(f["ep"]),
        FRAMEWORK=f["framework"], HF_HUB_CACHE="<RESULT_DIR>/hf_cache", IMAGE=f["image"],
        IS_MULTINODE=str(f["is_multinode"]).lower(), KV_OFFLOADING=f["kv_offloading"], MODEL=f["model"],
        MODEL_PREFIX=f["model_prefix"], PCP_SIZE=str(f["pcp"]), PP_SIZE=str(f["pp"]), PRECISION=f["precision"],
        RECIPE_FINGERPRINT=f["recipe_fingerprint"], RESULT_DIR="<RESULT_DIR>", RESULT_FILENAME=f["result_filename"],
        RUNNER_TYPE=f["runner_type"], SPEC_DECODING=f["spec_decoding"], TP=str(f["tp"]))
    json.dump(dict(sorted(env.items())), open(os.path.join(d, "env.json"), "w"), indent=2)
    outdir = os.path.join(OUT + "-out", name); shutil.rmtree(outdir, ignore_errors=True); os.makedirs(outdir)
    p, v, outs = ixaggregate.run(d, env, outdir)
    json.dump(dict(name=name, about=about, source=os.path.join("real-aiperf", src), **ixaggregate.commands(outs)),
        open(os.path.join(d, "case.json"), "w"), indent=2)
    index.append(dict(name=name, process_rc=p.returncode, validate_rc=v.returncode, has_output=bool(outs)))
    print(name, p.returncode, v.returncode, outs, p.stderr[-800:])
json.dump(index, open(os.path.join(OUT, "index-add.json"), "w"), indent=1)
