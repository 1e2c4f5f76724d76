#!/usr/bin/env bash
# Builds the image and checks it: `cairn --version`, and `/ready` from a
# container serving a small index built here. Needs a running container
# engine (docker, or podman with its docker alias); `.ci/run` calls it only
# where `docker info` answers.
set -euo pipefail
cd "$(dirname "$0")/.."
image="cairn:test-$$"
work="$(mktemp -d)"
docker build --quiet --build-arg CAIRN_GIT_COMMIT="$(git rev-parse --short=12 HEAD)" -t "$image" . >/dev/null
trap 'docker rm -f cairn-test-$$ >/dev/null 2>&1 || true; docker rmi -f "$image" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
docker run --rm "$image" --version

# A one-repository index, built on this machine with the same model the image holds.
git init -q -b main "$work/repo"
printf '# Demo\n\nA tiny repository for the container test.\n' > "$work/repo/README.md"
git -C "$work/repo" add README.md
git -C "$work/repo" -c user.name=ci -c user.email=ci@example.org commit -q -m demo
printf 'demo:\n  - name: repo\n    url: %s/repo\n' "$work" > "$work/repositories.yml"
scripts/fetch-model.sh >/dev/null
cargo build --release --quiet
target/release/cairn build --config "$work/repositories.yml" --out "$work/data/index" --cache "$work/cache" >/dev/null
chmod -R a+rwX "$work/data"

docker run -d --name "cairn-test-$$" -p 127.0.0.1:18930:8080 -v "$work/data:/data" "$image" >/dev/null
for _ in $(seq 150); do
  if curl -fsS http://127.0.0.1:18930/ready >/dev/null 2>&1; then
    curl -fsS http://127.0.0.1:18930/ready; echo
    echo "container: ready"
    exit 0
  fi
  sleep 0.2
done
docker logs "cairn-test-$$" >&2
echo "container did not become ready" >&2
exit 1
