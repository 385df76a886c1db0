# Generates the multi-node aggregation cases by running InferenceX 843c6254f's own
# aggregator and validator (see testdata/README.md). Not run by tests.
import json, os, shutil
import ixaggregate
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sglang-mtp-tp8-dpattn-hicache")
OUT = os.environ.get("OUT", "/tmp/multinode-cases")
base = json.load(open(os.path.join(SRC, "env.json")))
for k in ["TP", "EP_SIZE", "DP_ATTENTION", "PP_SIZE", "DCP_SIZE", "PCP_SIZE", "ROUTER_METADATA"]:
    base.pop(k, None)
common = dict(IS_MULTINODE="true", RECIPE_FINGERPRINT="", TOTAL_CPU_DRAM_GB="2399",
    PREFILL_PP_SIZE="1", PREFILL_DCP_SIZE="1", PREFILL_PCP_SIZE="1", DECODE_PP_SIZE="1", DECODE_DCP_SIZE="1", DECODE_PCP_SIZE="1")
cases = {
  "sglang-disagg-1p1d-multinode": dict(about="Multi-node disaggregated SGLang (AMD sglang-disagg, 1 prefill + 1 decode worker, TP8 EP8 DP-attention each, KV transfer mori): GPU shape from PREFILL_*/DECODE_* (16 GPUs), tp = prefill+decode TP, per-GPU throughput over both; same aiperf artifacts as sglang-mtp-tp8-dpattn-hicache.",
    env=dict(FRAMEWORK="sglang-disagg", DISAGG="true", RUNNER_TYPE="mi355x-amds", IMAGE="lmsysorg/sglang-rocm:v0.5.17-rocm720-mi35x-20260817",
      PREFILL_NUM_WORKERS="1", PREFILL_TP="8", PREFILL_EP="8", PREFILL_DP_ATTN="true",
      DECODE_NUM_WORKERS="1", DECODE_TP="8", DECODE_EP="8", DECODE_DP_ATTN="true", KV_P2P_TRANSFER="mori",
      RESULT_FILENAME="dsv4_p1x8ep8dpa_d1x8ep8dpa_conc48_kvdram-hicache_fp4_sglang-disagg_prefill-tp8-pp1-dcp1-pcp1-ep8-dptrue-nw1_decode-tp8-pp1-dcp1-pcp1-ep8-dptrue-nw1_disagg-true_spec-mtp_conc48_mi355x-amds_00_conc48")),
  "dynamo-agg-multinode": dict(about="Multi-node aggregated Dynamo SGLang (decode num-worker 0): the decode side is dropped from tp/ep (decode_tp 0, decode_ep 0) and the GPU count is the prefill workers' (2 workers x TP8 = 16).",
    env=dict(FRAMEWORK="dynamo-sglang", DISAGG="false", RUNNER_TYPE="gb200", IMAGE="lmsysorg/sglang:v0.5.17-cu130",
      PREFILL_NUM_WORKERS="2", PREFILL_TP="8", PREFILL_EP="8", PREFILL_DP_ATTN="true",
      DECODE_NUM_WORKERS="0", DECODE_TP="8", DECODE_EP="8", DECODE_DP_ATTN="false",
      ROUTER_METADATA='{"name":"dynamo-router","version":"1.3.1"}',
      RESULT_FILENAME="dsv4_agg_conc48_fp4_dynamo-sglang_prefill-tp8-pp1-dcp1-pcp1-ep8-dptrue-nw2_decode-tp8-pp1-dcp1-pcp1-ep8-dpfalse-nw0_disagg-false_spec-mtp_conc48_gb200-nv_0_conc48")),
}
index = []
for name, c in cases.items():
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    shutil.copytree(os.path.join(SRC, "aiperf_artifacts"), os.path.join(d, "aiperf_artifacts"))
    env = dict(base); env.update(common); env.update(c["env"])
    env = dict(sorted(env.items()))
    json.dump(env, open(os.path.join(d, "env.json"), "w"), indent=2); open(os.path.join(d, "env.json"), "a").write("\n")
    outdir = os.path.join(OUT + "-out", name); shutil.rmtree(outdir, ignore_errors=True); os.makedirs(outdir)
    p, v, outs = ixaggregate.run(d, env, outdir)
    json.dump(dict(name=name, about=c["about"], derived_from="sglang-mtp-tp8-dpattn-hicache (same aiperf_artifacts)", **ixaggregate.commands(outs)),
        open(os.path.join(d, "case.json"), "w"), indent=2)
    index.append(dict(name=name, process_rc=p.returncode, validate_rc=v.returncode, has_output=bool(outs)))
    print(name, p.returncode, v.returncode, outs, p.stderr[-500:])
json.dump(index, open(os.path.join(OUT, "index-add.json"), "w"), indent=1)
