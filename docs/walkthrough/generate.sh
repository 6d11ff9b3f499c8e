#!/usr/bin/env bash
# Regenerates the outputs and screenshots that docs/walkthrough.md shows: runs the page's
# commands in a scratch directory, writes what each prints to docs/walkthrough/*.txt and
# screenshots the HTML reports with headless chromium. Not run by every docs build (the
# commands take ~2 min of CPU, chromium is not in the venv); test/test_walkthrough.py
# checks that the committed rnea-bag output is what the code prints now.
# Usage (repository root): docs/walkthrough/generate.sh [.venv/bin]
set -euo pipefail
BIN=$(realpath "${1:-.venv/bin}")
OUT=$(realpath docs/walkthrough)
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
cd "$SCRATCH"
run() {  # run NAME COMMAND...: its stdout and stderr into OUT/NAME.txt (exit 2 allowed)
  local name=$1; shift
  "$BIN/$1" "${@:2}" > "$OUT/$name.txt" 2>&1 || [ $? -eq 2 ]
  sed -i "s#$SCRATCH/##g" "$OUT/$name.txt"
}
run sample-bag rnea-sample bag sample_bag
run bag rnea-bag sample_bag/arm7_run --urdf sample_bag/arm7.urdf --out sample_bag/bag_report
run sample-fleet rnea-sample fleet sample_fleet
run fleet rnea-fleet analyse sample_fleet/fleet.yaml --out sample_fleet/fleet_report
run sample-identify rnea-sample identify sample_id
run identify rnea-identify sample_id/arm7_heavy --urdf sample_id/arm7.urdf --out sample_id/identified
cp sample_bag/bag_report/joint_joint2.png "$OUT/bag-joint2.png"
cp sample_id/identified/validation.png "$OUT/identify-validation.png"
shot() {  # shot PNG HTML HEIGHT
  chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --no-first-run --user-data-dir="$(mktemp -d)" \
    --screenshot="$OUT/$1" --window-size=1280,"$3" "file://$SCRATCH/$2" 2>/dev/null
}
shot bag-report.png sample_bag/bag_report/report.html 1400
shot fleet-report.png sample_fleet/fleet_report/report.html 360
# the Dask step: a LocalCluster on loopback (docs/walkthrough/dask_fleet.py), then rnea-fleet on it
PATH="$BIN:$PATH" "$BIN/python" "$OUT/dask_fleet.py" sample_fleet/fleet.yaml \
  sample_fleet/fleet_report_dask > "$OUT/fleet-dask.txt" 2>&1 || [ $? -eq 2 ]
sed -i "s#$SCRATCH/##g" "$OUT/fleet-dask.txt"
