#!/usr/bin/env python3
"""cairn's recorded definitions against Python's own ast: every top-level and
class-level def and class of every indexed .py file must be found, on its line.

    scripts/definitions-vs-ast.py INDEX

Reads the version CURRENT names (docs.json, content.bin, definitions.json).
Prints the files ast cannot parse (skipped), each definition cairn misses or
puts on another line, and a summary; exits 1 when any is missed.
"""
import ast, json, os, sys, warnings
from collections import defaultdict

index = sys.argv[1]
version = open(os.path.join(index, "CURRENT")).read().strip()
vdir = os.path.join(index, "versions", version)
docs = json.load(open(os.path.join(vdir, "docs.json")))
content = open(os.path.join(vdir, "content.bin"), "rb").read()
recorded = defaultdict(set)
for d in json.load(open(os.path.join(vdir, "definitions.json"))):
    if d["kind"] in ("function", "class"):
        recorded[d["doc"]].add((d.get("scope", ""), d["name"], d["span"]["start"]))

want_total = found = skipped = 0
misses = []
for i, d in enumerate(docs):
    if d["language"] != "python":
        continue
    text = content[d["content_offset"]: d["content_offset"] + d["size"]].decode("utf-8")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except SyntaxError:
        skipped += 1
        print("skipped (ast cannot parse it):", d["doc_id"])
        continue
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    want = []
    for node in tree.body:
        if isinstance(node, defs):
            want.append(("", node.name, node.lineno))
            if isinstance(node, ast.ClassDef):
                want += [(node.name, n.name, n.lineno) for n in node.body if isinstance(n, defs)]
    for w in want:
        want_total += 1
        if w in recorded[i]:
            found += 1
        else:
            misses.append((d["doc_id"], w))
for doc_id, (scope, name, line) in misses[:40]:
    print(f"missed: {doc_id}:{line} {scope + '.' if scope else ''}{name}")
print(f"{found} of {want_total} top-level and class-level definitions found on their line "
      f"({len(misses)} missed; {skipped} files ast cannot parse)")
sys.exit(1 if misses else 0)
