# Verdicts of aiperf 0.12.0's CLIConfig + converter (c2f5e9d4) for argv lists.
import sys, json, os
from aiperf.config.flags import CLIConfig
from aiperf.config.flags.converter import convert_cli_to_aiperf
from cyclopts import Parameter

names = {}
for field, info in CLIConfig.model_fields.items():
    for m in info.metadata:
        if isinstance(m, Parameter):
            n = m.kwargs.get("name") or ()
            if isinstance(n, str): n = (n,)
            for x in n: names[x] = field
            neg = m.kwargs.get("negative")
            if neg:
                if isinstance(neg, str): neg = (neg,)
                for x in neg: names[x] = "!" + field

def kwargs_of(argv):
    kw = {}
    i = 0
    while i < len(argv):
        a = argv[i]; i += 1
        v = None
        if "=" in a: a, v = a.split("=", 1)
        f = names.get(a) or names.get(a.replace("_", "-"))
        if f is None: raise ValueError(f"oracle: unknown flag {a}")
        if f.startswith("!"):
            kw[f[1:]] = False; continue
        ann = str(CLIConfig.model_fields[f].annotation)
        if v is None:
            if "bool" in ann and "list" not in ann.lower():
                kw[f] = True; continue
            v = argv[i]; i += 1
            if "bool" in ann: pass
        if "bool" in ann and "list" not in ann.lower():
            kw[f] = v.lower() in ("1","true","yes","y","t","on"); continue
        if "list" in ann.lower() and "Any" not in ann:
            vals = v.split(",")
            while i < len(argv) and not argv[i].startswith("-"):
                vals += argv[i].split(","); i += 1
            kw[f] = kw.get(f, []) + vals
        elif "," in v:
            kw[f] = v.split(",")
        else:
            kw[f] = v
    return kw

cases = json.load(open(sys.argv[1]))
out = []
for c in cases:
    argv = c["argv"]
    try:
        kw = kwargs_of(argv)
        cli = CLIConfig(**kw)
        convert_cli_to_aiperf(cli)
        verdict, err = "valid", ""
    except Exception as e:
        verdict, err = "invalid", str(e).split("\n")[0:3]
        err = " ".join(x.strip() for x in err)[:300]
    out.append({"name": c["name"], "argv": argv, "verdict": verdict, "aiperf_error": err})
    print(f'{c["name"]}: {verdict} {err}', file=sys.stderr)
json.dump(out, sys.stdout, indent=1)
