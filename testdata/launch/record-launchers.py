#!/usr/bin/env python3
"""Record what InferenceX's single-node launchers run on the host.

Runs runners/launch_<runner>.sh of an InferenceX checkout (commit
843c6254f) for one planned point per runner profile with every external
program (salloc, srun, squeue, scancel, sbcast, enroot, unsquashfs, flock,
docker, tar) replaced by a stub that records its argv and the variables the
launcher exported, and writes launcher-argv-set.json. Nothing is allocated,
imported or run. The points come from `sweep plan --format json` (the rows
InferenceX's workflow gives the launcher); the workflow's environment is
the one of launcher-argv-sample.json's first case with the row's values.

    record-launchers.py --inferencex GIT_DIR --sweep SWEEP_BINARY > launcher-argv-set.json

Values of the recording host are written as placeholders: the workspace
${GITHUB_WORKSPACE} and ${HOME}; mktemp's random part is XXXXXX. The
recording ran as root (uid 0: squeue -u root, /tmp/enroot-runtime-0); the
stubbed job id is 123456.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

COMMIT = "843c6254ff69b567f772f6a5fd97675af3d04431"
JOB_ID = "123456"

# One point per single-node runner profile: (runner name, config key, tp, ep, conc).
CASES = [
    ("mi300x-amds_01", "minimaxm3-fp8-mi300x-vllm-agentic-mtp", None, None, None),
    ("mi325x-amds_03", "glm5.2-fp8-mi325x-sglang-agentic-mtp", None, None, None),
    ("mi355x-amds_2", "qwen3.5-fp4-mi355x-sglang-agentic-mtp", None, None, None),
    ("b300-nv_0", "dsv4-fp4-b300-vllm-agentic-mtp", None, None, None),
    ("b200-dgxc_1", "qwen3.5-fp8-b200-sglang-agentic-mtp", None, None, None),
    ("h200-dgxc-slurm_4", "qwen3.5-fp8-h200-sglang-agentic-mtp", None, None, None),
    ("h100-dgxc-slurm_0", "minimaxm3-fp8-h100-vllm-agentic-mtp", None, None, None),
]

STUBS = ["salloc", "srun", "squeue", "scancel", "sbcast", "enroot", "unsquashfs", "flock", "docker", "tar", "sudo"]

STUB = r"""#!/bin/bash
n=$(ls "$CALLS_DIR" | wc -l)
f="$CALLS_DIR/$(printf %04d "$n")"
printf '%s\0' "$(basename "$0")" "$@" > "$f.argv"
env -0 > "$f.env"
case "$(basename "$0")" in
salloc) echo "salloc: Granted job allocation JOBID" >&2 ;;
squeue) echo "JOBID" ;;
unsquashfs) exit 1 ;;
esac
exit 0
""".replace("JOBID", JOB_ID)

NOISE = {"_", "SHLVL", "PWD", "OLDPWD", "BASH_FUNC_", "CALLS_DIR"}


def workflow_env(base, row, runner_name, result_filename, ws, stub_bin):
    env = dict(base)
    env.update({
        "IMAGE": row["image"], "MODEL": row["model"], "MODEL_PREFIX": row["model-prefix"], "PRECISION": row["precision"],
        "FRAMEWORK": row["framework"], "TP": str(row["tp"]), "EP_SIZE": str(row["ep"]), "PP_SIZE": str(row["pp"]),
        "DCP_SIZE": str(row["dcp-size"]), "PCP_SIZE": str(row["pcp-size"]), "DP_ATTENTION": str(row["dp-attn"]).lower(),
        "CONC": str(row["conc"]), "SPEC_DECODING": row["spec-decoding"], "KV_OFFLOADING": row["kv-offloading"],
        "TOTAL_CPU_DRAM_GB": str(row["total-cpu-dram-gb"]), "DURATION": str(row["duration"]), "EXP_NAME": row["exp-name"],
        "SCENARIO_TYPE": row["scenario-type"], "RUNNER_TYPE": row["runner"], "RUNNER_NAME": runner_name,
        "GPU_COUNT": str(row["tp"] * row["pp"] * row["pcp-size"]), "RESULT_FILENAME": result_filename,
        "RESULT_FILENAME_BASE": result_filename, "IS_MULTINODE": "false",
        "GITHUB_WORKSPACE": ws, "HOME": os.environ["HOME"], "USER": os.environ.get("USER", "root"),
        "LOGNAME": os.environ.get("USER", "root"), "PATH": stub_bin + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    })
    return env


def placeholders(s, ws):
    for real, name in ((ws, "${GITHUB_WORKSPACE}"), (os.environ["HOME"], "${HOME}")):
        s = s.replace(real, name)
    # mktemp's random part
    s = re.sub(r"(/tmp/inferencex-\d+)\.[A-Za-z0-9]{6}(\.tar\.gz)", r"\1.XXXXXX\2", s)
    return re.sub(r"/tmp/enroot-import\.[A-Za-z0-9]{6}", "/tmp/enroot-import.XXXXXX", s)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--inferencex", required=True, help="InferenceX git directory")
    ap.add_argument("--sweep", required=True, help="sweep binary (plans the rows)")
    ap.add_argument("--sample", default=os.path.join(os.path.dirname(__file__), "launcher-argv-sample.json"))
    a = ap.parse_args()
    base = json.load(open(a.sample))[0]["job_env"]
    out = []
    for runner_name, key, *_ in CASES:
        plan = json.loads(subprocess.check_output([a.sweep, "plan", "--config-keys", key, "--runner-name", runner_name, "--format", "json"]))
        point = plan[0]
        row = point["row"]
        with tempfile.TemporaryDirectory() as tmp:
            ws, stub_bin, calls = os.path.join(tmp, "ws"), os.path.join(tmp, "bin"), os.path.join(tmp, "calls")
            os.makedirs(ws)
            os.makedirs(stub_bin)
            os.makedirs(calls)
            archive = subprocess.run(["git", "--git-dir", a.inferencex, "archive", COMMIT], check=True, capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", ws], input=archive, check=True)
            for s in STUBS:
                p = os.path.join(stub_bin, s)
                open(p, "w").write(STUB)
                os.chmod(p, 0o755)
            env = workflow_env(base, row, runner_name, point["result_filename"], ws, stub_bin)
            env["CALLS_DIR"] = calls
            runner = runner_name.rsplit("_", 1)[0]
            r = subprocess.run(["bash", "runners/launch_%s.sh" % runner], cwd=ws, env=env, capture_output=True, text=True, timeout=120)
            rec = {"runner": runner, "runner_name": runner_name, "config_key": key, "row": row, "exit_status": r.returncode,
                   "source_commit": COMMIT, "job_id": JOB_ID, "calls": []}
            for name in sorted(os.listdir(calls)):
                if not name.endswith(".argv"):
                    continue
                argv = open(os.path.join(calls, name), "rb").read().split(b"\0")[:-1]
                argv = [placeholders(x.decode(), ws) for x in argv]
                envs = open(os.path.join(calls, name[:-5] + ".env"), "rb").read().split(b"\0")
                exported = {}
                for kv in envs:
                    k, _, v = kv.decode().partition("=")
                    if not k or k in NOISE or k.startswith("BASH_FUNC_"):
                        continue
                    if env.get(k) != v:
                        exported[k] = placeholders(v, ws)
                rec["calls"].append({"program": argv[0], "argv": argv, "env": exported})
            if r.returncode != 0:
                rec["stderr_tail"] = placeholders(r.stderr, ws).splitlines()[-15:]
            out.append(rec)
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
