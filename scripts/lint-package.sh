#!/usr/bin/env bash
# The package as published: packs the built tree once (no prepack build: `npm run check`
# runs after `npm run build`), then lints the tarball with publint (package.json fields,
# exports, files) and @arethetypeswrong/cli (every entry's types resolve as Node's ESM
# resolution and bundlers see them; esm-only: duetime ships no CommonJS build).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tarball=$(npm pack --ignore-scripts --silent --pack-destination "$tmp" | tail -n 1)
npx --no-install publint run --strict "$tmp/$tarball"
npx --no-install attw --profile esm-only --format table-flipped "$tmp/$tarball"
