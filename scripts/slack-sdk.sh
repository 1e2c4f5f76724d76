#!/usr/bin/env bash
# Installs Slack's own Python SDK (slack_sdk, PyPI) in a virtual environment
# at target/slack-py: tests/e2e/slack.rs checks every Block Kit answer
# against its block models. Pinned; rerunning is cheap once it is there.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x target/slack-py/bin/python ] || ! target/slack-py/bin/python -c 'import slack_sdk' 2>/dev/null; then
  python3 -m venv target/slack-py
  target/slack-py/bin/pip install --quiet --disable-pip-version-check slack_sdk==3.36.0
fi
echo "slack_sdk $(target/slack-py/bin/python -c 'import slack_sdk.version as v; print(v.__version__)')"
