"""Writes golden/errors.yaml from real failures (run by make-error-golden.sh).

Each scenario in error_scenarios.py calls an indexed package wrongly in a
fresh interpreter (IPython for a few, whose tracebacks look like a
notebook's); its output is recorded verbatim. The answers come from the
traceback and the corpus mirrors, never from cairn:
  raise_sites: the innermost frame inside the package, found in the mirror
               at the indexed commit by its source text (nearest the printed
               line), through the end of its statement;
  explains:    the docstrings of the raising function and of the package
               function the user called (for __init__, its class's).
"""
import os, re, shutil, subprocess, sys, tempfile
import yaml

corpus, venv, out_path = sys.argv[1], sys.argv[2], sys.argv[3]
which = sys.argv[4] if len(sys.argv) > 4 else "main"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import error_scenarios  # noqa: E402

# `main`: golden/errors.yaml; `fresh`: golden/errors-fresh.yaml (see error_scenarios.py).
S, WARN, IPY = {
    "main": (error_scenarios.S, error_scenarios.WARN, error_scenarios.IPY),
    "fresh": (error_scenarios.FRESH, set(), error_scenarios.FRESH_IPY),
}[which]

config = yaml.safe_load(open(os.path.join(corpus, "repositories.yml")))
repos = {}  # toolkit -> (category, name, git dir)
copies = tempfile.mkdtemp(prefix="cairn-error-golden-")
for category, entries in config.items():
    for e in entries:
        gitdir = os.path.join(corpus, e["url"])
        if not os.path.isdir(os.path.join(gitdir, "refs")):
            # The git CLI wants a refs/ folder that a packed-refs-only mirror lacks.
            copy = os.path.join(copies, e["url"])
            shutil.copytree(gitdir, copy)
            os.makedirs(os.path.join(copy, "refs"), exist_ok=True)
            gitdir = copy
        repos[e["name"].lower()] = (category, e["name"], gitdir)


def git(gitdir, *args):
    return subprocess.run(["git", "-c", "safe.directory=*", "--git-dir", gitdir, *args], capture_output=True, text=True, check=True).stdout


def run(name, code):
    py = os.path.join(venv, "bin", "python")
    cmd = [os.path.join(venv, "bin", "ipython"), "--colors=nocolor", "--no-banner", "-c", code] if name in IPY else [py, "-c", code]
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONWARNINGS": "always"}
    work = os.path.join(os.path.dirname(out_path), ".error-work")
    os.makedirs(work, exist_ok=True)
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=work, timeout=300, env=env)
    text = r.stdout + r.stderr if name in IPY else r.stderr
    # IPython's own deprecation chatter after the traceback is not the user's error.
    text = re.split(r"\n\S*traitlets\.py:\d+: DeprecationWarning", text)[0]
    if name in WARN:
        text = "\n".join(l for l in text.splitlines() if "Warning" in l or l.startswith("  ")) + "\n"
    return text.rstrip() + "\n"


FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in (\S+)|^File (\S+):(\d+), in ([\w.<>]+)|^(\S+\.py):(\d+): \w+Warning')


def frames(text):
    out = []
    for l in text.splitlines():
        m = FRAME.match(l)
        if m:
            g = [x for x in m.groups() if x is not None]
            out.append((g[0], int(g[1]), g[2] if len(g) > 2 else ""))
    return out


def statement_end(lines, i):
    depth = 0
    for k in range(i, min(i + 30, len(lines))):
        code = re.sub(r"'[^']*'|\"[^\"]*\"", "", lines[k].split("#")[0])
        depth += code.count("(") + code.count("[") + code.count("{") - code.count(")") - code.count("]") - code.count("}")
        if depth <= 0 and not lines[k].rstrip().endswith("\\"):
            return k
    return i


def docstring_span(lines, def_line):
    """def/class line (0-based) through its docstring's last line, if it has one."""
    k = def_line
    while k < len(lines) and not lines[k].rstrip().endswith(":"):
        k += 1
    k += 1
    while k < len(lines) and not lines[k].strip():
        k += 1
    if k >= len(lines) or not re.match(r'\s*[rub]*("""|\'\'\')', lines[k]):
        return None
    q = re.match(r'\s*[rub]*("""|\'\'\')', lines[k]).group(1)
    rest = lines[k].split(q, 1)[1]
    if q in rest:
        return (def_line + 1, k + 1)
    for j in range(k + 1, len(lines)):
        if q in lines[j]:
            return (def_line + 1, j + 1)
    return None


def find_def(lines, name, near):
    pat = re.compile(r"\s*(async\s+)?def\s+" + re.escape(name) + r"\s*\(")
    hits = [i for i, l in enumerate(lines) if pat.match(l)]
    return min(hits, key=lambda i: abs(i - near)) if hits else None


def enclosing_class(lines, i):
    indent = len(lines[i]) - len(lines[i].lstrip())
    for k in range(i - 1, -1, -1):
        l = lines[k]
        if l.strip() and len(l) - len(l.lstrip()) < indent and l.lstrip().startswith("class "):
            return k
    return None


entries = []
for name, (toolkit, code) in S.items():
    text = run(name, code)
    category, repo, gitdir = repos[toolkit]
    paths = git(gitdir, "ls-tree", "-r", "--name-only", "HEAD").split()
    pkg = [f for f in frames(text) if "site-packages/" in f[0]]
    mapped = []
    for path, line, func in pkg:
        rel = path.split("site-packages/", 1)[1]
        cands = [p for p in paths if p == rel or p.endswith("/" + rel)]
        if not cands:
            continue
        installed = open(path.replace("~", os.path.expanduser("~"))).read().splitlines()
        indexed = git(gitdir, "show", f"HEAD:{cands[0]}").splitlines()
        src = installed[line - 1].strip()
        at = [i for i, l in enumerate(indexed) if l.strip() == src]
        # A line that moved between versions still names its function (for explains).
        i = min(at, key=lambda i: abs(i - (line - 1))) if at else None
        mapped.append((cands[0], indexed, i if i is not None else line - 1, func, i is not None))
    if not mapped or not mapped[-1][4]:
        print(f"skip {name}: the innermost package frame is not in the indexed commit", file=sys.stderr)
        continue
    doc, lines, i, func, _ = mapped[-1]
    end = statement_end(lines, i)
    if not re.match(r"\s*(raise|warnings\.warn|assert)\b", lines[i]):
        print(f"skip {name}: the innermost frame is no raise statement: {lines[i].strip()}", file=sys.stderr)
        continue
    prefix = f"{category}/{repo}/"
    explains = []
    for d, ls, k, f, _ in [mapped[-1], mapped[0]]:
        short = f.split(".")[-1]
        di = find_def(ls, short, k)
        if di is None:
            continue
        if short in ("__init__", "__new__"):
            ci = enclosing_class(ls, di)
            span = docstring_span(ls, ci) if ci is not None else None
            span = span or docstring_span(ls, di)
        else:
            span = docstring_span(ls, di)
        if span and {"doc_id": prefix + d, "lines": list(span)} not in explains:
            explains.append({"doc_id": prefix + d, "lines": list(span)})
    shape = "python-warning" if name in WARN else "notebook-traceback" if name in IPY else "python-traceback"
    entries.append({
        "id": name,
        "kind": shape,
        "toolkit": toolkit,
        "text": text,
        "raise_sites": [{"doc_id": prefix + doc, "lines": [i + 1, end + 1]}],
        "explains": explains,
    })
    print(f"ok {name}: {doc}:{i + 1}-{end + 1}, {len(explains)} explaining docstring(s)", file=sys.stderr)


class Literal(str):
    pass


yaml.add_representer(Literal, lambda d, s: d.represent_scalar("tag:yaml.org,2002:str", s, style="|"))
for e in entries:
    e["text"] = Literal(e["text"])
with open(out_path, "w") as f:
    f.write("# Real errors over the shared corpus, made by scripts/make-error-golden.sh\n"
            "# (packages from PyPI, scenarios in scripts/error_scenarios.py). Do not edit by hand:\n"
            "# rerun the script. Answers are at the indexed commits; see docs/QUALITY.md.\n")
    yaml.dump(entries, f, sort_keys=False, allow_unicode=True, width=1000)
print(f"{len(entries)} errors written to {out_path}", file=sys.stderr)
