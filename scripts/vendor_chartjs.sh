#!/usr/bin/env bash
# Refreshes the Chart.js build embedded in every HTML report, from the npm registry.
#   bash scripts/vendor_chartjs.sh 4.6.1
# then update CHARTJS_VERSION and CHARTJS_SHA256 in src/memgauge/render/_html_page.py.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:?give the Chart.js version, e.g. 4.6.1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "chart.js@$version" >/dev/null && tar xzf "chart.js-$version.tgz")
cp "$tmp/package/dist/chart.umd.min.js" src/memgauge/render/_assets/chart.umd.min.js
cp "$tmp/package/LICENSE.md" src/memgauge/render/_assets/chart.js.LICENSE.md
sha256sum src/memgauge/render/_assets/chart.umd.min.js
