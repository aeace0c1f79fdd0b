#!/usr/bin/env bash
# Checks the README's recording snippets as a newcomer would run them (not run in CI: it
# needs npm, a Chromium and a few minutes).
#
# Usage: scripts/check-readme-recording.sh [TASKCHAIN]   (default: target/release/taskchain)
#   CHROMIUM=/usr/bin/chromium (default) is the browser; KEEP=1 keeps the scratch folder.
#
# In a scratch folder outside the repository: installs puppeteer-core, playwright-core and
# lighthouse from npm, serves a small page from 127.0.0.1 whose button's click handler runs
# a long task (onCheckoutClick > buildCart > priceItems > spin, ~250 ms), copies each
# snippet out of README.md as it stands (only the browser path, the launch flags this
# machine needs, and the URL are replaced), runs it with node, and runs taskchain on the
# trace it saved: the long task's row must have status `ok` and that chain. The README's
# Lighthouse command runs on a page whose script does the same work while it loads
# (bootstrap > buildCart > priceItems > spin). Then the taskchain step of
# docs/examples/github-actions.yml (which must match the README's workflow) runs on those
# traces as GitHub would run it: the job summary must get the Markdown report and the step
# must fail on the budget (every trace has a ~250 ms task, over max-task-ms=150). Exit 0
# when all pass.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tc=$(realpath "${1:-$repo/target/release/taskchain}")
chromium=${CHROMIUM:-/usr/bin/chromium}
[ -x "$tc" ] || { echo "no taskchain binary at $tc (cargo build --release)" >&2; exit 2; }
[ -x "$chromium" ] || { echo "no browser at $chromium (apt-get install chromium)" >&2; exit 2; }
work=$(mktemp -d /tmp/taskchain-readme-XXXXXX)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  [ "${KEEP:-0}" = 1 ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

mkdir site
cat > site/index.html <<'EOF'
<!doctype html>
<title>checkout</title>
<button id="checkout">Check out</button>
<script src="cart.js"></script>
EOF
cat > site/cart.js <<'EOF'
function spin(ms) {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) x += Math.sqrt(x + 1);
  return x;
}
function priceItems() { return spin(250); }
function buildCart() { return priceItems() + 1; }
function onCheckoutClick() { document.title = String(buildCart()); }
document.getElementById('checkout').addEventListener('click', onCheckoutClick);
EOF
cat > site/load.html <<'EOF'
<!doctype html>
<title>load</title>
<h1>Loading the cart</h1>
<script src="cart.js"></script>
<script>function bootstrap() { document.title = String(buildCart() + buildCart()); } bootstrap();</script>
EOF
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory site >server.log 2>&1 &
server=$!

npm init -y >/dev/null
PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
  npm install --no-audit --no-fund --silent puppeteer-core playwright-core lighthouse

# The code block after the README line that starts with **NAME**, with the browser path,
# this machine's launch flags and the URL put in.
python3 - "$repo/README.md" "$chromium" "http://127.0.0.1:$port/" <<'EOF'
import re, sys
readme, chromium, url = sys.argv[1:]
text = open(readme, encoding="utf-8").read()
flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"]
for name in ["Puppeteer", "Playwright"]:
    m = re.search(r"^\*\*" + name + r"\*\*.*?```js\n(.*?)```", text, re.S | re.M)
    if not m:
        sys.exit(f"README.md: no js block after **{name}**")
    code = m.group(1)
    launch = "executablePath: '/usr/bin/chromium'"
    url_in = "'http://127.0.0.1:8000/'"
    for s in (launch, url_in):
        if s not in code:
            sys.exit(f"README.md: the {name} snippet has no {s}")
    code = code.replace(launch, f"executablePath: {chromium!r}, args: {flags!r}")
    code = code.replace(url_in, repr(url))
    open(f"{name.lower()}.mjs", "w").write(code)
m = re.search(r"`(lighthouse URL [^`]*)`", text)
if not m:
    sys.exit("README.md: no `lighthouse URL ...` command")
open("lighthouse.args", "w").write("\n".join(m.group(1).split()[2:]) + "\n")
EOF

# The README's Lighthouse command, with the URL, this machine's browser flags, and only the
# performance category (the rest of the report is not needed).
lighthouse() {
  mapfile -t args < ../lighthouse.args
  CHROME_PATH=$chromium ../node_modules/.bin/lighthouse "http://127.0.0.1:$port/load.html" \
    "${args[@]}" --quiet --only-categories=performance \
    --chrome-flags="--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking --disable-component-update --disable-sync --host-resolver-rules=\"MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost\"" \
    && mv ./*-0.trace.json trace.json
}

fail=0
for name in puppeteer playwright lighthouse; do
  mkdir "$name" && cd "$name"
  if [ $name = lighthouse ]; then run=(lighthouse); outer=bootstrap; else run=(timeout 120 node "../$name.mjs"); outer=onCheckoutClick; fi
  if ! "${run[@]}" >node.log 2>&1; then
    echo "FAIL $name: the snippet did not run:"; cat node.log; fail=1; cd ..; continue
  fi
  "$tc" -q trace.json >rows.csv || { echo "FAIL $name: taskchain exited $?"; fail=1; cd ..; continue; }
  if python3 - rows.csv "$outer" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
want = [sys.argv[2], "buildCart", "priceItems", "spin"]
for r in rows:
    names = [f.split(" (")[0] for f in r["chain"].split(" > ")] if r["chain"] else []
    print(f"  {r['task_dur_ms']} ms, {r['status']}, confidence {r['confidence']}, "
          f"flags [{r['flags']}]: {r['chain']}")
    if r["status"] == "ok" and names[-len(want):] == want:
        sys.exit(0)
sys.exit(1)
EOF
  then echo "ok   $name: the long task is attributed to $outer > … > spin"
  else echo "FAIL $name: no ok row with that chain"; fail=1
  fi
  cd ..
done

# The workflow: the README's block is the example file without its comments and last step.
mkdir -p gh/traces && cd gh
for name in puppeteer playwright lighthouse; do
  [ -f "../$name/trace.json" ] && cp "../$name/trace.json" "traces/$name.json"
done
if python3 - "$repo/docs/examples/github-actions.yml" "$repo/README.md" >step.sh <<'EOF'
import re, sys, yaml
wf = yaml.safe_load(open(sys.argv[1]))
steps = wf["jobs"]["taskchain"]["steps"]
block = re.search(r"```yaml\n(.*?)```", open(sys.argv[2], encoding="utf-8").read(), re.S)
if not block or yaml.safe_load(block.group(1))["jobs"]["taskchain"]["steps"] != steps[:-1]:
    sys.exit("the README's workflow is not docs/examples/github-actions.yml without its last step")
print(next(s["run"] for s in steps if "taskchain traces/" in s.get("run", "")))
EOF
then
  export GITHUB_STEP_SUMMARY=$PWD/summary.md
  mkdir bin && ln -s "$tc" bin/taskchain   # the step calls `taskchain`, as installed
  PATH=$PWD/bin:$PATH bash -e step.sh 2>stderr.log && code=0 || code=$?
  if [ $code = 1 ] && grep -q '^## taskchain' summary.md && grep -q 'max-task-ms' summary.md && [ -s taskchain.csv ] && [ -s summary.csv ]; then
    echo "ok   workflow: Markdown in the job summary, rows in taskchain.csv, the step failed on the budget (exit 1)"
  else
    echo "FAIL workflow: exit $code"; cat stderr.log summary.md 2>/dev/null; fail=1
  fi
else
  echo "FAIL workflow: see above"; fail=1
fi
cd ..
exit $fail
