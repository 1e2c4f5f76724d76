#!/usr/bin/env bash
# Rebuilds golden/errors.yaml from real failures: installs the indexed
# packages from PyPI in a throwaway venv (the versions below are the newest
# PyPI had on 2026-11-24, the closest to the indexed commits), runs each
# scenario in scripts/error_scenarios.py, and records the tracebacks with
# their raise sites and explaining docstrings at the indexed commits.
# Needs the network (PyPI) and git; not part of the tests (the YAML is).
#
#   scripts/make-error-golden.sh [CORPUS] [OUT]   (OUT's folder also gets errors-fresh.yaml)
#   CORPUS: the folder with repositories.yml and the bare mirrors (default ../shared/corpus)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
corpus="${1:-$here/../../shared/corpus}"
out="${2:-$here/../golden/errors.yaml}"
venv="$(mktemp -d)/venv"
trap 'rm -rf "$(dirname "$venv")"' EXIT
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet \
  emcee==3.1.6 dynesty==3.1.0 corner==2.3.0 MulensModel==3.12.0 pyLIMA==1.9.8 \
  numpy scipy matplotlib ipython pyyaml
"$venv/bin/python" "$here/make_error_golden.py" "$corpus" "$venv" "$out"
"$venv/bin/python" "$here/make_error_golden.py" "$corpus" "$venv" "$(dirname "$out")/errors-fresh.yaml" fresh
