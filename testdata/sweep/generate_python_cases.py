#!/usr/bin/env python3
"""Regenerate python-cases.json: run InferenceX's own generator and
changelog processor on this directory's inputs and record what they print.

usage: generate_python_cases.py INFERENCEX_CHECKOUT [COMMIT]

INFERENCEX_CHECKOUT is a work tree of SemiAnalysisAI/InferenceX at the
commit named in ../inferencex/README.md (needs pyyaml and pydantic).
This script is the project's own harness; it only calls InferenceX's code.
"""
import contextlib, copy, hashlib, io, json, os, shutil, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
IX_DATA = os.path.join(HERE, '..', 'inferencex', 'configs')
CUSTOM = os.path.join(HERE, 'custom-master.yaml')
PR = 'https://github.com/SemiAnalysisAI/InferenceX/pull/9999'


def sha(s):
    return hashlib.sha256(s.encode()).hexdigest()


def matrix_cases(ix):
    sys.path.insert(0, os.path.join(ix, 'utils', 'matrix_logic'))
    import generate_sweep_configs as g
    import validation as v
    cache = {}

    def load(files, validate=True):
        k = tuple(files)
        if k not in cache:
            cache[k] = v.load_config_files(files)
        return copy.deepcopy(cache[k])
    rcache = {}

    def load_runner(f, validate=True):
        if f not in rcache:
            rcache[f] = v.load_runner_file(f)
        return copy.deepcopy(rcache[f])
    g.load_config_files, g.load_runner_file = load, load_runner
    files = [os.path.join(IX_DATA, 'amd-master.yaml'), os.path.join(IX_DATA, 'nvidia-master.yaml'), CUSTOM]
    base = ['--config-files', *files, '--runner-config', os.path.join(IX_DATA, 'runners.yaml')]
    keys = list(load(files).keys())
    modes = [[], ['--no-evals'], ['--evals-only'], ['--all-evals'], ['--all-evals', '--evals-only']]
    cases = []
    for k in keys:
        for m in modes:
            cases.append(('test-config', ['--config-keys', k] + m))
    for m in modes:
        cases.append(('test-config', ['--config-keys'] + keys + m))
        cases.append(('full-sweep', m))
    full = [['--model-prefix', 'dsr1', '--max-conc', '8'], ['--max-conc', '3'], ['--min-conc', '64'],
            ['--min-conc', '2', '--max-conc', '40'], ['--max-tp', '4', '--max-ep', '2'], ['--max-ep', '0'],
            ['--max-tp', '0'], ['--step-size', '3'], ['--step-size', '8', '--multi-node'], ['--multi-node'],
            ['--single-node', '--seq-lens', '1k1k'], ['--runner-node-filter', 'amds_0'],
            ['--runner-node-filter', 'nv'], ['--runner-node-filter', 'zzz'], ['--scenario-type', 'agentic-coding'],
            ['--scenario-type', 'fixed-seq-len', '--precision', 'fp8'],
            ['--runner-type', 'cluster:mi355x-amds', 'b200'], ['--runner-type', 'bogus'], ['--step-size', '1'],
            ['--min-conc', '8', '--max-conc', '4'], ['--framework', 'vllm', 'trt', '--min-conc', '0'],
            ['--max-conc', '0'], ['--max-conc', '-1'], ['--min-conc', '-3'],
            ['--model-prefix', 'glm', 'kimi', 'zz', '--all-evals'],
            ['--model-prefix', 'qwen', 'zz', '--evals-only', '--runner-node-filter', '_0'],
            ['--model-prefix', 'zz', '--step-size', '3', '--min-conc', '5', '--max-conc', '50']]
    for a in full:
        for m in [[], ['--no-evals'], ['--all-evals']]:
            if ('--all-evals' in a or '--evals-only' in a) and m:
                continue
            cases.append(('full-sweep', a + m))
    for a in [['--config-keys', 'dsr1-*', '--conc', '16', '64'], ['--config-keys', '*-agentic*', '--conc', '4', '--all-evals'],
              ['--config-keys', '?sr1-fp4-b200-sglang'], ['--config-keys', 'dsr1-fp[48]-b200-*', '--seq-lens', '8k1k'],
              ['--config-keys', '*mi355x*', '--runner-node-filter', 'amds_0'],
              ['--config-keys', '*mi355x*', '--runner-node-filter', 'mi355x'],
              ['--config-keys', '*', '--runner-node-filter', 'nv_1', '--evals-only'], ['--config-keys', 'nope'],
              ['--config-keys', 'nope*'], ['--config-keys', '*', '--scenario-type', 'agentic-coding', '--all-evals'],
              ['--config-keys', '*', '--scenario-type', 'fixed-seq-len', '--seq-lens', '1k1k'],
              ['--config-keys', '*', '--no-evals', '--all-evals'], ['--config-keys', '*', '--no-evals', '--evals-only'],
              ['--config-keys', '*', '--conc', '1'], ['--config-keys', '[!d]*', '--conc', '32', '--evals-only'],
              ['--config-keys', '*', '--runner-node-filter', 'cluster'],
              ['--config-keys', 'dsr1-fp4-b200-sglang', 'dsr1-fp4-b200-sglang', 'dsr1-*'],
              ['--config-keys', 'zz-*', '--runner-node-filter', 'dgxc_0'], ['--config-keys', 'zz-*', '--conc', '4', '16', '64']]:
        cases.append(('test-config', a))
    out = []
    for kind, args in cases:
        sys.argv = ['generate_sweep_configs.py', kind] + args + base
        buf, err = io.StringIO(), io.StringIO()
        ok = True
        try:
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
                g.main()
        except SystemExit as e:
            ok = e.code == 0
        except Exception:
            ok = False
        rec = {'kind': kind, 'args': args, 'ok': ok}
        if ok:
            rec['sha256'] = sha(buf.getvalue())
            rec['rows'] = len(json.loads(buf.getvalue()))
        out.append(rec)
    return out


def entry(keys, desc='d', scen=None, extra=''):
    s = '- config-keys:\n' + ''.join(f'    - "{k}"\n' if k.startswith('*') else f'    - {k}\n' for k in keys)
    if scen:
        s += '  scenario-type:\n' + ''.join(f'    - {x}\n' for x in scen)
    return s + '  description:\n    - "%s"\n' % desc + f'  pr-link: {PR}\n' + extra


AO = '  append-only: true\n'


def changelog_scenarios():
    sc = []

    def add(name, entries, flags=(), edits=(), replace=None):
        sc.append({'name': name, 'entries': entries, 'flags': list(flags), 'edits': list(edits), 'replace': replace})
    add('fixed-single-node', [entry(['dsr1-fp4-b200-sglang'])])
    for fl in [[], ['--trim-conc'], ['--all-evals'], ['--evals-only'], ['--trim-conc', '--all-evals']]:
        suffix = ''.join(fl)
        add('custom-both' + suffix, [entry(['zz-custom-both'])], fl)
        add('custom-mn' + suffix, [entry(['zz-custom-mn'])], fl)
        add('multi' + suffix, [entry(['dsr1-*-mi355x-*', 'zz-custom-*'], scen=['fixed-seq-len']),
                               entry(['zz-custom-both', 'qwen3.5-fp8-mi325x-sglang-agentic-mtp'],
                                     desc='\u00dcn\u00efcode \u2713 \U0001F600 \\"q\\" \\\\ tab')], fl)
    add('all-evals-entry', [entry(['zz-custom-both']), entry(['zz-custom-*'], extra='  all-evals: true\n')])
    add('evals-only-entry', [entry(['zz-custom-mn'], extra='  evals-only: true\n'), entry(['dsr1-fp8-mi355x-sglang-disagg'])])
    add('min-prefill-ep', [entry(['zz-custom-mn', 'dsr1-fp8-mi355x-sglang-disagg', 'dsr1-fp4-mi355x-sglang-disagg'],
                                 extra='  eval-min-prefill-ep: 4\n')])
    add('min-prefill-ep-all', [entry(['zz-custom-mn'], extra='  eval-min-prefill-ep: 2\n  all-evals: true\n')], ['--trim-conc'])
    add('scenario-split', [entry(['zz-custom-both'], scen=['agentic-coding']), entry(['zz-custom-both']),
                           entry(['zz-custom-both'], scen=['fixed-seq-len'])])
    add('every-key', [entry(['*'])], ['--trim-conc'])
    add('wildcard-matches-nothing', [entry(['nope-*'])])
    add('missing-key', [entry(['nope'])])
    add('unknown-entry-key', [entry(['zz-custom-mn'], extra='  bogus: 1\n')])
    add('question-mark-is-literal', [entry(['dsr1-fp4-b200-sglan?'])])
    add('deleted-line', [entry(['zz-custom-mn'])],
        replace=['  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/2707\n',
                 '  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/2708\n'])
    add('deleted-blank-line', [entry(['zz-custom-mn'])],
        replace=['\n\n- config-keys:\n    - dsv4-fp4-b200-vllm-agentic-mtp\n', '\n- config-keys:\n    - dsv4-fp4-b200-vllm-agentic-mtp\n'])
    add('no-additions', [])
    grow = ['conc-list: [2, 8, 4] }', 'conc-list: [2, 8, 4, 16, 6] }']
    add('append-only-add-conc', [entry(['zz-custom-both'], extra=AO)], edits=[grow])
    add('append-only-add-conc-trim', [entry(['zz-custom-both'], extra=AO)], ['--trim-conc'], edits=[grow])
    add('append-only-multi-node', [entry(['zz-custom-mn'], scen=['fixed-seq-len'], extra=AO)],
        edits=[['conc-list: [64, 8, 128]', 'conc-list: [64, 8, 256, 128, 512]']])
    add('append-only-new-curve', [entry(['zz-custom-both'], scen=['fixed-seq-len'], extra=AO)],
        edits=[['      - { tp: 2, conc-list: [8, 16] }\n', '      - { tp: 2, conc-list: [8, 16] }\n      - { tp: 1, conc-list: [4] }\n']])
    add('append-only-remove-point', [entry(['zz-custom-both'], extra=AO)], edits=[['conc-list: [2, 8, 4] }', 'conc-list: [2, 8, 16] }']])
    add('append-only-adds-nothing', [entry(['zz-custom-both'], extra=AO)])
    add('append-only-unselected-config', [entry(['zz-custom-both'], extra=AO)],
        edits=[grow, ['        conc-list: [4, 16]\n', '        conc-list: [4, 16, 32]\n']])
    add('append-only-unselected-scenario', [entry(['zz-custom-both'], scen=['fixed-seq-len'], extra=AO)],
        edits=[['dcp-size: 2, pp: 1, conc-list: [8, 32] }', 'dcp-size: 2, pp: 1, conc-list: [8, 32, 64] }'], grow])
    add('append-only-top-level-field', [entry(['zz-custom-both'], scen=['fixed-seq-len'], extra=AO)], edits=[['image: img/a:1', 'image: img/a:2']])
    add('append-only-image-change', [entry(['zz-custom-both'], extra=AO)], edits=[['image: img/a:1', 'image: img/a:2']])
    add('append-only-mixed', [entry(['zz-custom-both'], extra=AO), entry(['zz-custom-mn'])])
    add('append-only-with-all-evals', [entry(['zz-custom-both'], extra=AO)], ['--all-evals'])
    add('append-only-config-not-in-base', [entry(['zz-new'], extra=AO)],
        edits=[['APPEND', '\nzz-new:\n  image: i\n  model: m\n  model-prefix: p\n  runner: b200\n  precision: fp8\n'
                          '  framework: vllm\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n'
                          '      osl: 1024\n      search-space:\n      - { tp: 8, conc-list: [4] }\n']])
    return sc


def apply_edits(text, edits):
    for old, new in edits:
        if old == 'APPEND':
            text += new
            continue
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


def changelog_cases(ix):
    repo = tempfile.mkdtemp(prefix='sweep-cases-')
    try:
        shutil.copytree(os.path.join(ix, 'utils'), os.path.join(repo, 'utils'))
        os.makedirs(os.path.join(repo, 'configs'))
        for f in ['amd-master.yaml', 'runners.yaml']:
            shutil.copy(os.path.join(IX_DATA, f), os.path.join(repo, 'configs', f))
        custom = open(CUSTOM).read()
        nvidia = open(os.path.join(IX_DATA, 'nvidia-master.yaml')).read() + '\n' + custom
        changelog = open(os.path.join(IX_DATA, 'perf-changelog.yaml')).read()

        def git(*a):
            subprocess.run(['git', '-c', 'user.email=t@t', '-c', 'user.name=t', *a], cwd=repo, check=True, capture_output=True)

        def write(name, text):
            with open(os.path.join(repo, name), 'w') as f:
                f.write(text)
        write('configs/nvidia-master.yaml', nvidia)
        write('perf-changelog.yaml', changelog)
        git('init', '-q')
        git('add', '-A')
        git('commit', '-qm', 'base')
        git('tag', 'base')
        out = []
        for s in changelog_scenarios():
            git('checkout', '-q', '-f', 'base')
            git('checkout', '-q', '-B', 'scenario')
            head_custom = apply_edits(custom, s['edits'])
            write('configs/nvidia-master.yaml', nvidia.replace(custom, head_custom))
            head = changelog
            if s['replace']:
                head = head.replace(*s['replace'])
            head += ''.join('\n' + e for e in s['entries'])
            write('perf-changelog.yaml', head)
            git('add', '-A')
            git('commit', '-qm', s['name'], '--allow-empty')
            p = subprocess.run(['python3', 'utils/process_changelog.py', '--base-ref', 'base', '--head-ref', 'HEAD',
                                '--changelog-file', 'perf-changelog.yaml', *s['flags']], cwd=repo, capture_output=True, text=True)
            rec = {'name': s['name'], 'flags': s['flags'], 'entries': ''.join('\n' + e for e in s['entries']),
                   'replace': s['replace'], 'ok': p.returncode == 0}
            if head_custom != custom:
                rec['head_custom'] = head_custom
            if rec['ok']:
                stdout = p.stdout.strip().splitlines()[-1]
                rec['sha256'] = sha(stdout)
                if len(stdout) < 200_000:
                    rec['output'] = stdout
            else:
                rec['error'] = (p.stderr.strip().splitlines() or [''])[-1]
            out.append(rec)
        return out
    finally:
        shutil.rmtree(repo)


def main():
    ix = os.path.abspath(sys.argv[1])
    commit = sys.argv[2] if len(sys.argv) > 2 else subprocess.run(['git', 'rev-parse', 'HEAD'], cwd=ix, capture_output=True, text=True).stdout.strip()
    data = {'meta': {'source': 'SemiAnalysisAI/InferenceX', 'commit': commit or 'unknown',
                     'generator': 'utils/matrix_logic/generate_sweep_configs.py',
                     'changelog_processor': 'utils/process_changelog.py',
                     'note': 'matrix cases: args plus --config-files amd nvidia custom --runner-config runners; '
                             'changelog cases: base is ../inferencex/configs/perf-changelog.yaml, head is base '
                             '(with replace applied) + entries, refs "base" and "HEAD", masters amd + nvidia + '
                             'custom (head_custom when the change edits it)'},
            'changelog': changelog_cases(ix), 'matrix': matrix_cases(ix)}
    with open(os.path.join(HERE, 'python-cases.json'), 'w') as f:
        json.dump(data, f, indent=0, ensure_ascii=False)
        f.write('\n')


if __name__ == '__main__':
    main()
