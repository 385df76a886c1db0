# Shared by the gen_*.py case generators: runs InferenceX 843c6254f's own
# aggregator and validator on one case directory and records what they said.
# Not run by tests.
import os, subprocess, sys, json
IX = os.environ.get("INFERENCEX", "/tmp/inferencex")  # git archive 843c6254f utils, unpacked
AGGREGATE = ["-m", "utils.agentic.aggregation.process_agentic_result"]
VALIDATE = ["-m", "utils.agentic.validation.validate_agentic_result"]
THRESHOLD = ["--failed-request-threshold", "0.10"]


def run(d, env, outdir):
    """Aggregates and validates case directory d with env (<RESULT_DIR> and
    <AGENTIC_OUTPUT_DIR> placeholders filled in), writing process.json,
    validate.json and expected.json (the aggregate, or null) into d; returns
    (aggregate, validate, output file names)."""
    real = {k: v.replace("<RESULT_DIR>", d).replace("<AGENTIC_OUTPUT_DIR>", outdir) for k, v in env.items()}
    real.update(PATH=os.environ["PATH"], HOME=os.environ["HOME"], LANG="C.UTF-8")
    p = subprocess.run([sys.executable] + AGGREGATE, cwd=IX, env=real, capture_output=True, text=True)
    v = subprocess.run([sys.executable] + VALIDATE + [os.path.join(d, "aiperf_artifacts")] + THRESHOLD, cwd=IX, env=real, capture_output=True, text=True)
    fix = lambda s: s.replace(outdir, "<AGENTIC_OUTPUT_DIR>").replace(d, "<RESULT_DIR>")
    for r, f in ((p, "process.json"), (v, "validate.json")):
        json.dump(dict(exit_code=r.returncode, stdout=fix(r.stdout), stderr=fix(r.stderr)), open(os.path.join(d, f), "w"), indent=2)
    outs = [x for x in os.listdir(outdir) if x.endswith(".json")]
    with open(os.path.join(d, "expected.json"), "w") as fh:
        fh.write(open(os.path.join(outdir, outs[0])).read() if outs else "null")
    return p, v, outs


def commands(outs):
    """The case.json entries that say how the case was made."""
    return dict(aggregate_command="python3 " + " ".join(AGGREGATE), aggregate_cwd="<INFERENCEX>",
        aggregate_output="<AGENTIC_OUTPUT_DIR>/" + (outs[0] if outs else ""),
        validate_command="python3 " + " ".join(VALIDATE + ["<RESULT_DIR>/aiperf_artifacts"] + THRESHOLD))
