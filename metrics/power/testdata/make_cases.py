#!/usr/bin/env python3
"""Synthesize power conformance cases and record what InferenceX's adapter does with them.

Usage: python3 make_cases.py INFERENCEX_CHECKOUT  (run from this directory; InferenceX at 843c6254f)

Each case starts from one small base result directory (aiperf artifacts of three requests, a
2-GPU nvidia-smi stream around the window, the offset file, an aggregate) and changes one thing;
the adapter (python3 -m utils.agentic.aggregation.power_adapter) runs on a copy, and its outputs
are stored in the layout of ../../../shared conformance cases (see testdata/README.md).
"""
import json, os, shutil, subprocess, sys, tempfile
from datetime import datetime, timedelta, timezone

IX = os.path.abspath(sys.argv[1])
OUT = os.path.abspath("cases")
START = datetime(2026, 11, 3, 14, 20, 5, 250000)  # local wall clock of the base window
DURATION = 6.5


def record(isl, osl, phase="profiling", error=None, drop=None):
    metrics = {"input_sequence_length": {"value": isl, "unit": "tokens"},
               "output_sequence_length": {"value": osl, "unit": "tokens"}}
    if drop:
        metrics.pop(drop)
    rec = {"metadata": {"benchmark_phase": phase}, "metrics": metrics}
    if error:
        rec["error"] = {"type": error, "message": error}
    return json.dumps(rec)


def nvidia_rows(t0, n, gpus, step=1.0, watts=(300.0, 450.0)):
    rows = []
    for i in range(n):
        t = t0 + timedelta(seconds=i * step)
        for g in range(gpus):
            w = watts[0] + (watts[1] - watts[0]) * ((i * 7 + g * 3) % 10) / 10
            rows.append(f"{t.strftime('%Y/%m/%d %H:%M:%S.%f')[:-3]}, {g}, {w:.2f} W, 50, 1980 MHz, 3201 MHz, 90 %, 40 %")
    return rows


HEADER = ("timestamp, index, power.draw [W], temperature.gpu, clocks.current.sm [MHz], "
          "clocks.current.memory [MHz], utilization.gpu [%], utilization.memory [%]")


def base(d, start=START):
    os.makedirs(f"{d}/aiperf_artifacts")
    end = start + timedelta(seconds=DURATION)
    with open(f"{d}/aiperf_artifacts/profile_export_aiperf.json", "w") as f:
        json.dump({"start_time": start.isoformat(), "end_time": end.isoformat()}, f)
    with open(f"{d}/aiperf_artifacts/profile_export.jsonl", "w") as f:
        f.write("\n".join([record(1200, 40, phase="warmup"), record(30000, 200), record(41000, 310),
                           record(12000, 95), record(9000, 0, error="ReadTimeout")]) + "\n")
    write_csv(d, [HEADER] + nvidia_rows(start - timedelta(seconds=2.6), 12, 2))
    with open(f"{d}/agentic_power_timezone_offset.txt", "w") as f:
        f.write("+0000\n")
    with open(f"{d}/agg.json", "w") as f:
        json.dump({"hw": "h100", "conc": 4, "tp": 2, "num_requests_successful": 3,
                   "note": "caf\u00e9 <&>", "ratio": 0.10, "big": 1e16, "warnings": []}, f, indent=2)


def write_csv(d, lines, name="gpu_metrics.csv"):
    with open(f"{d}/{name}", "w", newline="") as f:
        f.write("\n".join(lines) + "\n")


def edit_json(path, fn):
    with open(path) as f:
        data = json.load(f)
    fn(data)
    with open(path, "w") as f:
        json.dump(data, f)


def rows_of(d):
    with open(f"{d}/gpu_metrics.csv") as f:
        return f.read().splitlines()


CASES = []


def case(name, about, gpus=2, env=None, extra=()):
    def wrap(fn):
        CASES.append((name, about, fn, gpus, env or {"TZ": "UTC"}, list(extra)))
        return fn
    return wrap


@case("base-valid", "Two NVIDIA GPUs sampled every second around a 6.5 s window: valid.")
def _(d): pass

@case("no-expected-gpus", "No --expected-num-gpus: the GPU count is not checked.", gpus=None)
def _(d): pass

@case("require-power-env-valid", "REQUIRE_POWER=1 with valid telemetry: exit 0.", env={"TZ": "UTC", "REQUIRE_POWER": "1"})
def _(d): pass

@case("require-power-env-invalid", "REQUIRE_POWER=true and no telemetry: exit 1 after the sidecar is written.", env={"TZ": "UTC", "REQUIRE_POWER": "true"})
def _(d):
    os.remove(f"{d}/gpu_metrics.csv")

@case("require-power-env-window-failure", "REQUIRE_POWER=yes and no aiperf summary: exit 1.", env={"TZ": "UTC", "REQUIRE_POWER": "yes"})
def _(d):
    os.remove(f"{d}/aiperf_artifacts/profile_export_aiperf.json")

@case("tp4-on-8-gpu-node", "The monitor records all 8 GPUs of the node, TP4 expects 4: expected_gpu_count_mismatch (InferenceX's behaviour).", gpus=4)
def _(d):
    write_csv(d, [HEADER] + nvidia_rows(START - timedelta(seconds=2.6), 12, 8))

@case("profile-artifacts-invalid", "A broken line in profile_export.jsonl.")
def _(d):
    with open(f"{d}/aiperf_artifacts/profile_export.jsonl", "a") as f:
        f.write("{not json\n")

@case("profile-window-missing", "profile_export_aiperf.json has no end_time.")
def _(d):
    edit_json(f"{d}/aiperf_artifacts/profile_export_aiperf.json", lambda a: a.pop("end_time"))

@case("profile-timezone-offset-missing", "Naive aiperf times and no offset file.")
def _(d):
    os.remove(f"{d}/agentic_power_timezone_offset.txt")

@case("profile-timezone-offset-invalid", "The offset file says +2500.")
def _(d):
    with open(f"{d}/agentic_power_timezone_offset.txt", "w") as f:
        f.write("+2500\n")

@case("aware-times-no-offset-file", "aiperf times carry an offset (+00:00), so the offset file is not needed.")
def _(d):
    os.remove(f"{d}/agentic_power_timezone_offset.txt")
    edit_json(f"{d}/aiperf_artifacts/profile_export_aiperf.json",
              lambda a: a.update(start_time=a["start_time"] + "+00:00", end_time=a["end_time"] + "Z"))

@case("epoch-number-times", "aiperf times as epoch numbers.")
def _(d):
    s = START.replace(tzinfo=timezone.utc).timestamp()
    edit_json(f"{d}/aiperf_artifacts/profile_export_aiperf.json",
              lambda a: a.update(start_time=s, end_time=s + DURATION))

@case("profile-window-invalid", "end_time before start_time.")
def _(d):
    edit_json(f"{d}/aiperf_artifacts/profile_export_aiperf.json",
              lambda a: a.update(start_time=a["end_time"], end_time=a["start_time"]))

@case("successful-request-count-invalid", "Every record is a warm-up or failed.")
def _(d):
    with open(f"{d}/aiperf_artifacts/profile_export.jsonl", "w") as f:
        f.write(record(10, 10, phase="warmup") + "\n" + record(10, 0, error="Boom") + "\n")

@case("incomplete-token-accounting", "One successful record lacks output_sequence_length.")
def _(d):
    with open(f"{d}/aiperf_artifacts/profile_export.jsonl", "a") as f:
        f.write(record(500, 9, drop="output_sequence_length") + "\n")

@case("power-window-unwritable", "agentic_power_window.json is a directory.")
def _(d):
    os.makedirs(f"{d}/agentic_power_window.json")

@case("telemetry-file-missing", "No gpu_metrics.csv (no SMI tool on the node).")
def _(d):
    os.remove(f"{d}/gpu_metrics.csv")

@case("telemetry-file-empty", "gpu_metrics.csv is empty.")
def _(d):
    open(f"{d}/gpu_metrics.csv", "w").close()

@case("telemetry-file-unreadable", "A CSV field longer than Python's csv field limit.")
def _(d):
    write_csv(d, rows_of(d) + ["x" * 140000])

@case("columns-missing", "A header with none of the needed columns.")
def _(d):
    write_csv(d, ["a,b,c", "1,2,3"])

@case("invalid-timestamp-sample", "One row's timestamp is garbage.")
def _(d):
    write_csv(d, rows_of(d) + ["yesterday, 0, 300.00 W, 50, 1980 MHz, 3201 MHz, 90 %, 40 %"])

@case("invalid-power-sample", "One in-window row reads [N/A] W, another -5 W.")
def _(d):
    r = rows_of(d)
    r[7] = r[7].replace(r[7].split(", ")[2], "[N/A]")
    r[9] = r[9].replace(r[9].split(", ")[2], "-5.00 W")
    write_csv(d, r)

@case("gpu-identity-missing", "One in-window row has an empty index.")
def _(d):
    r = rows_of(d)
    cells = r[8].split(", ")
    cells[1] = ""
    r[8] = ", ".join(cells)
    write_csv(d, r)

@case("no-usable-power-samples", "Every sample is an hour before the window.")
def _(d):
    write_csv(d, [HEADER] + nvidia_rows(START - timedelta(hours=1), 12, 2))

@case("insufficient-power-samples", "GPU 1 has one sample near the window.")
def _(d):
    r = rows_of(d)
    keep = [r[0]] + [x for x in r[1:] if x.split(", ")[1] == "0"] + [r[10]]
    write_csv(d, keep)

@case("window-not-bracketed", "The monitor stopped before the window ended and no final sample was appended.")
def _(d):
    write_csv(d, [HEADER] + nvidia_rows(START - timedelta(seconds=2.6), 8, 2))

@case("invalid-expected-gpu-count", "--expected-num-gpus 0.", gpus=0)
def _(d): pass

@case("aggregate-result-missing", "The aggregate file does not exist.")
def _(d):
    os.remove(f"{d}/agg.json")

@case("aggregate-result-unwritable", "The aggregate file is not JSON.")
def _(d):
    with open(f"{d}/agg.json", "w") as f:
        f.write("{broken")

@case("missing-window-aggregate-missing", "No aiperf summary and no aggregate: nothing is written.")
def _(d):
    os.remove(f"{d}/aiperf_artifacts/profile_export_aiperf.json")
    os.remove(f"{d}/agg.json")

@case("duplicate-timestamps-averaged", "AMD-like integer-second stamps: two readings of one GPU in one second are averaged.")
def _(d):
    r = rows_of(d)
    extra = [x.replace(" W,", "1 W,", 1) for x in r[5:9]]
    write_csv(d, r[:9] + extra + r[9:])

@case("new-york-local-times", "TZ America/New_York, offset -0500 captured, nvidia-smi local times.", env={"TZ": "America/New_York"})
def _(d):
    with open(f"{d}/agentic_power_timezone_offset.txt", "w") as f:
        f.write("-0500\n")

@case("zone-mismatch", "The offset file says +0200 but the process runs in UTC: the window lands 2 h away from the samples.")
def _(d):
    with open(f"{d}/agentic_power_timezone_offset.txt", "w") as f:
        f.write("+02:00\n")

@case("amd-accumulator-variants", "AMD stream with integer epoch stamps, an end snapshot without total_energy_consumption.")
def _(d):
    t0 = int(START.replace(tzinfo=timezone.utc).timestamp()) - 3
    lines = ["timestamp,gpu,socket_power,gfx_0_clk\r"]
    for i in range(13):
        lines += [f"{t0 + i},0,{400 + 13 * (i % 5)},2100\r", ""]
    write_csv(d, lines)
    write_csv(d, ["gpu,socket_power,total_energy_consumption", "0,180,50346140.5", "1,170,1000.0"], "gpu_metrics_energy_start.csv")
    write_csv(d, ["gpu,socket_power", "0,180"], "gpu_metrics_energy_end.csv")

@case("amd-accumulator-negative", "AMD energy counters: GPU 0 counts backwards, GPU 1 only in the start snapshot.", gpus=1)
def _(d):
    t0 = int(START.replace(tzinfo=timezone.utc).timestamp()) - 3
    lines = ["timestamp,gpu,socket_power,gfx_0_clk"]
    for i in range(13):
        lines += [f"{t0 + i},0,{400 + 13 * (i % 5)},2100", ""]
    write_csv(d, lines)
    write_csv(d, ["gpu,socket_power,total_energy_consumption", "0,180,50346140.5", "1,170,1000.0"], "gpu_metrics_energy_start.csv")
    write_csv(d, ["gpu,socket_power,total_energy_consumption", "0,180,50340000.25"], "gpu_metrics_energy_end.csv")

@case("amd-accumulator-missing-end", "Only the start energy snapshot exists.", gpus=1)
def _(d):
    t0 = int(START.replace(tzinfo=timezone.utc).timestamp()) - 3
    write_csv(d, ["timestamp,gpu,socket_power"] + [f"{t0 + i},0,{500 + i}" for i in range(13)])
    write_csv(d, ["gpu,total_energy_consumption", "0,100.0"], "gpu_metrics_energy_start.csv")


def listing(d):
    out = []
    for root, _, files in os.walk(d):
        for f in files:
            out.append(os.path.relpath(os.path.join(root, f), d))
    return sorted(out)


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    for name, about, fn, gpus, env, _ in CASES:
        work = tempfile.mkdtemp()
        rd, aggdir = f"{work}/RESULT_DIR", f"{work}/AGG"
        os.makedirs(aggdir)
        base(rd)
        fn(rd)
        agg = f"{aggdir}/agg.json"
        has_agg = os.path.exists(f"{rd}/agg.json")
        if has_agg:
            shutil.move(f"{rd}/agg.json", agg)
        inputs = listing(rd)
        input_dirs = [x for x in os.listdir(rd) if os.path.isdir(f"{rd}/{x}") and x != "aiperf_artifacts"]
        dest = f"{OUT}/{name}"
        shutil.copytree(rd, dest, ignore=shutil.ignore_patterns("agentic_power_window.json"))
        if has_agg:
            shutil.copy(agg, f"{dest}/agg_input.json")
        cmd = ["python3", "-m", "utils.agentic.aggregation.power_adapter", "--result-dir", rd, "--agg-result", agg]
        if gpus is not None:
            cmd += ["--expected-num-gpus", str(gpus)]
        run_env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8", **env}
        p = subprocess.run(cmd, cwd=IX, env=run_env, capture_output=True, text=True)
        ph = lambda s: s.replace(rd, "<RESULT_DIR>").replace(agg, "<AGG_RESULT>")
        after = listing(rd)

        def out(src, dst):
            if os.path.isfile(src):
                with open(src) as f:
                    text = f.read()
            else:
                text = "null"
            with open(f"{dest}/{dst}", "w") as f:
                f.write(ph(text))
        out(agg, "expected.json")
        out(f"{rd}/power_validation.json", "validation.json")
        out(f"{rd}/agentic_power_window.json", "power_window.json")
        with open(f"{dest}/process.json", "w") as f:
            json.dump({"exit_code": p.returncode, "stdout": ph(p.stdout), "stderr": ph(p.stderr)}, f, indent=2)
        pc = ["python3", "-m", "utils.agentic.aggregation.power_adapter", "--result-dir", "<RESULT_DIR>",
              "--agg-result", "<AGG_RESULT>"] + (["--expected-num-gpus", str(gpus)] if gpus is not None else [])
        with open(f"{dest}/case.json", "w") as f:
            json.dump({"name": name, "about": about, "power_command": pc, "power_env": env,
                       "expected_num_gpus": gpus, "inputs": [i for i in inputs if os.path.isfile(f"{rd}/{i}")],
                       "input_dirs": sorted(x for x in os.listdir(rd) if x in input_dirs),
                       "adapter_wrote": sorted(set(after) - set(inputs))}, f, indent=2)
        shutil.rmtree(work)
        print(name, p.returncode, p.stderr.strip().splitlines()[-1:] if p.stderr else p.stdout.strip())


main()
