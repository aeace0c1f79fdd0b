#!/usr/bin/env python3
"""A bad-input attack in the style of issue 18: truncations, byte flips of a real
recording, and the path, output and corruption cases of the issue. Prints a Markdown table
(case, rows kept of the intact file's, exit code, first stderr line) and counts silent
losses: fewer rows than the intact file with exit 0 and no warning or error line.

With --memory (issue 18 section 5), also the memory shapes of scripts/make-memory-shapes
and a gzip stream holding a huge string in an event nothing uses (also on standard input),
each run under /usr/bin/time: a second table gives peak RSS against its target, and a
shape over its target or without its rows counts as a failure.

Usage: scripts/attack-bad-inputs.py BINARY TRACE.json [FLIPS] [--memory [--name-mib N]]
  e.g. scripts/attack-bad-inputs.py target/release/taskchain ../shared/traces/chromium/iframes.json 100
  N: the long name's and the unused string's size in MiB (default 256; the issue's is 2048).
  The shapes go to $MEMORY_DIR (default /work/scratch/memory) and are deleted afterwards.
"""
import gzip
import os
import random
import re
import subprocess
import sys
import tempfile

argv = sys.argv[1:]
MEMORY = "--memory" in argv
NAME_MIB = 256
if "--name-mib" in argv:
    k = argv.index("--name-mib")
    NAME_MIB = int(argv[k + 1])
    del argv[k:k + 2]
argv = [a for a in argv if a != "--memory"]
BIN, TRACE = os.path.abspath(argv[0]), argv[1]
FLIPS = int(argv[2]) if len(argv) > 2 else 100
data = open(TRACE, "rb").read()
work = tempfile.mkdtemp(prefix="attack-")


def run(args, stdin=None, shell=None, timeout=60):
    if shell:
        p = subprocess.run(["sh", "-c", shell], cwd=work, capture_output=True, timeout=timeout,
                           env={**os.environ, "T": BIN})
    else:
        p = subprocess.run([BIN] + args, cwd=work, input=stdin, capture_output=True, timeout=timeout)
    rows = max(0, len(p.stdout.decode(errors="replace").splitlines()) - 1)
    err = [l for l in p.stderr.decode(errors="replace").splitlines()
           if l.startswith("taskchain: error") or l.startswith("taskchain: warning")
           or l.startswith("taskchain: note") or l in ("EXISTS", "INPUT-LOST")]
    return rows, p.returncode, err


def write(name, b):
    path = os.path.join(work, name)
    open(path, "wb").write(b)
    return name


intact_rows, code, _ = run([write("intact.json", data)])
assert code == 0 and intact_rows > 0, "the intact trace must give rows"
table, silent = [], 0


def case(name, rows, code, err, expect_rows=True):
    global silent
    msg = err[0] if err else ""
    if expect_rows and rows < intact_rows and code == 0 and not err:
        silent += 1
    table.append((name, f"{rows}/{intact_rows}" if expect_rows else str(rows), code,
                  msg.replace("|", "\\|")[:150]))


for frac in (0.1, 0.5, 0.9, 0.999):
    n = int(len(data) * frac)
    case(f"cut at {frac:.1%} (byte {n})", *run([write("cut.json", data[:n])]))
rng = random.Random(18)
flip_kept = {"all": 0, "some": 0, "none": 0}
flip_codes = {}
for k in range(FLIPS):
    b = bytearray(data)
    at = rng.randrange(len(b))
    b[at] = rng.choice(b'#[]{}",:0 \nx')
    name = write("flip.json", bytes(b))
    rows, code, err = run([name])
    key = "all" if rows >= intact_rows else ("none" if rows == 0 else "some")
    flip_kept[key] += 1
    flip_codes[code] = flip_codes.get(code, 0) + 1
    if rows < intact_rows and code == 0 and not err:
        silent += 1
        case(f"flip {k} at byte {at} (SILENT)", rows, code, err)
    elif rows < intact_rows:
        case(f"flip {k} at byte {at}", rows, code, err)
table.append((f"{FLIPS} byte flips: rows all kept / some / none",
              f"{flip_kept['all']} / {flip_kept['some']} / {flip_kept['none']}",
              ", ".join(f"{c}×{n}" for c, n in sorted(flip_codes.items())), "(flips that lost rows are listed above)"))

# A byte flipped in an event nothing uses, early on: a top-level key's colon.
line = data.index(b"\n{", 1000) + 1
colon = data.index(b":", line)
b = bytearray(data); b[colon] = ord("#")
spoiled = write("spoiled.json", bytes(b))
case("spoiled event early (file)", *run([spoiled]))
write("spoiled.json.gz", gzip.compress(bytes(b)))
case("spoiled event early (.gz)", *run(["spoiled.json.gz"]))
case("spoiled event early (stdin, -j1)", *run(["-j1", "-"], stdin=bytes(b)))
# Stray `[` and missing `]` in a ProfileChunk's arrays.
td = data.index(b'"timeDeltas":[') + 14
case("stray [ in a ProfileChunk", *run([write("stray.json", data[:td] + b"[" + data[td:])]))
end = data.index(b"]", td)
case("missing ] in a ProfileChunk", *run([write("missing.json", data[:end] + data[end + 1:])]))
# Data after the top-level value (issue 18 section 1).
case("two traces concatenated (cat a b)", *run([write("cat.json", data + b"\n" + data)]))
write("two-members.json.gz", gzip.compress(data) + gzip.compress(data))
case("two gzip members, two traces", *run(["two-members.json.gz"]))
case("NUL padding after the trace", *run([write("nul.json", data + b"\0" * 4096)]))
case("garbage after the trace", *run([write("tail.json", data + b"\nnot json at all")]))
# Values the format forbids, and escapes (issue 18 section 2): escaped names must give the
# intact file's rows; the others must say what they dropped.
case("RunTask spelled Run\\u0054ask", *run([write("esc1.json", data.replace(b'"RunTask"', b'"Run\\u0054ask"'))]))
case("ProfileChunk spelled Profile\\u0043hunk",
     *run([write("esc2.json", data.replace(b'"ProfileChunk"', b'"Profile\\u0043hunk"'))]))
case("key ph spelled p\\u0068", *run([write("esc3.json", data.replace(b'"ph":', b'"p\\u0068":'))]))
case('every "ph":"X" as "ph":"Xyz"', *run([write("ph.json", data.replace(b'"ph":"X"', b'"ph":"Xyz"'))]))
case("a timeDeltas value of 1e400", *run([write("td.json", data[:td] + b"1e400," + data[td:])]))
# The first long task's dur (the value itself, not a second key: the last key wins): the
# first row's task_ts_us names its event.
first_ts = subprocess.run([BIN, TRACE], capture_output=True, text=True).stdout.splitlines()[1].split(",")[4]
m = re.search(rb'"dur":(\d+)[^\n]*"ts":' + first_ts.encode() + rb'[,}]', data)
case("the first long task's dur as 1e400", *run([write("dur.json", data[:m.start(1)] + b"1e400" + data[m.end(1):])]))
case("the first long task's dur as -5", *run([write("dur2.json", data[:m.start(1)] + b"-5" + data[m.end(1):])]))
text = data.decode("utf-8")
case("UTF-16 LE with BOM", *run([write("u16le.json", b"\xff\xfe" + text.encode("utf-16-le"))]))
case("UTF-16 BE without BOM", *run([write("u16be.json", text.encode("utf-16-be"))]))
case("UTF-32 LE", *run([write("u32.json", text.encode("utf-32"))]))
case("UTF-8 BOM", *run([write("bom.json", b"\xef\xbb\xbf" + data)]))
# Paths.
os.makedirs(os.path.join(work, "loop"), exist_ok=True)
write("loop/a.json", data)
for l, t in (("self", "."), ("up", "..")):
    p = os.path.join(work, "loop", l)
    if not os.path.lexists(p):
        os.symlink(t, p)
case("'**' glob over self -> ., up -> ..", *run(["loop/**/*.json"]))
case("folder with up -> ..", *run(["loop"]))
if not os.path.exists(os.path.join(work, "fifo.json")):
    os.mkfifo(os.path.join(work, "fifo.json"))
case("FIFO with no writer", *run(["fifo.json", "intact.json"], timeout=30))
if not os.path.lexists(os.path.join(work, "link.json")):
    os.symlink("intact.json", os.path.join(work, "link.json"))
case("same file twice via a link", *run(["intact.json", "link.json"]))
# Outputs.
for spell in ("./x.csv", "sub/../x.csv", os.path.join(work, "x.csv")):
    r = run([], shell=f"rm -f x.csv; $T -q intact.json -o x.csv --summary {spell}; test -e x.csv && echo EXISTS >&2")
    case(f"-o x.csv --summary {spell}", *r, expect_rows=False)
r = run([], shell="cp intact.json in.json; $T -q - -o in.json < in.json; cmp -s in.json intact.json || echo INPUT-LOST >&2")
case("- -o in.json < in.json", *r, expect_rows=False)
case("stdout closed (>&-)", *run([], shell="$T -q intact.json >&-"), expect_rows=False)
case("--files-from - with stdin closed", *run([], shell="$T -q --files-from - <&-"), expect_rows=False)
case("-o missing/dir/x.csv", *run([], shell="$T -q intact.json -o missing/dir/x.csv"), expect_rows=False)

print("| case | rows kept | exit | first message |")
print("|---|---|---|---|")
for name, rows, code, msg in table:
    print(f"| {name} | {rows} | {code} | {msg} |")
print(f"\nsilent losses: {silent}")


def huge_unused_string_gz(path, mib):
    """A trace whose only long task follows an instant event holding a MIB-MiB string in
    its args (nothing reads it), gzipped (level 1: a few MB)."""
    import zlib
    z = zlib.compressobj(1, zlib.DEFLATED, 31)
    with open(path, "wb") as f:
        f.write(z.compress(b'{"traceEvents":[\n{"pid":1,"tid":1,"ts":0,"ph":"M","cat":"__metadata",'
                           b'"name":"thread_name","args":{"name":"CrRendererMain"}},\n'
                           b'{"pid":1,"tid":1,"ts":10,"ph":"i","cat":"x","name":"junk","args":{"data":"'))
        block = b"n" * (64 << 20)
        for _ in range(mib // 64):
            f.write(z.compress(block))
        f.write(z.compress(b'"}},\n{"pid":1,"tid":1,"ts":1000000,"ph":"X","cat":"toplevel",'
                           b'"name":"RunTask","dur":60000}\n]}\n'))
        f.write(z.flush())


def measured(args, stdin_path=None):
    """(peak RSS bytes, exit code, CSV rows, stderr lines, CSV bytes) of BIN ARGS -o CSV."""
    out = os.path.join(work, "mem.csv")
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    p = subprocess.run(["/usr/bin/time", "-f", "%M", BIN, "-j2"] + args + ["-o", out],
                       stdin=stdin, capture_output=True, text=True, timeout=900)
    lines = p.stderr.splitlines()
    rss = int(lines[-1]) * 1024
    body = open(out, "rb").read() if os.path.exists(out) else b""
    rows = max(0, len(body.decode(errors="replace").splitlines()) - 1)
    return rss, p.returncode, rows, lines[:-1], len(body), body


if MEMORY:
    mdir = os.environ.get("MEMORY_DIR", "/work/scratch/memory")
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run([os.path.join(here, "make-memory-shapes"), mdir, "samples", "nodes", "tasks",
                    "name", "--name-mib", str(NAME_MIB)], check=True)
    huge_unused_string_gz(os.path.join(mdir, "unused.json.gz"), NAME_MIB)
    mb = lambda b: f"{b / 1e6:,.0f} MB"
    failures = 0
    rows_out = []
    # (case, input, args, stdin, target name, limit from (input size, CSV size), rows wanted,
    #  a check of the output)
    cut = lambda body, err: b"string_cut" in body and any("1 MiB" in l for l in err)
    shapes = [
        ("7 M samples (.cpuprofile)", "samples.cpuprofile", None, "3× input", lambda i, c: 3 * i, None),
        ("120 k nodes (.cpuprofile)", "nodes.cpuprofile", None, "3× input", lambda i, c: 3 * i, None),
        ("2 M long tasks, no profile", "tasks.json", None, "2× CSV", lambda i, c: 2 * c, None),
        (f"{NAME_MIB} MiB function name", "name.cpuprofile", None, "input + 64 MB",
         lambda i, c: i + (64 << 20), cut),
        (f"{NAME_MIB} MiB thread name", "name.json", None, "input + 64 MB",
         lambda i, c: i + (64 << 20), cut),
        (f"{NAME_MIB} MiB unused string (.gz)", "unused.json.gz", None, "256 MB",
         lambda i, c: 256 << 20, None),
        (f"{NAME_MIB} MiB unused string (.gz on stdin)", "unused.json.gz", "stdin", "256 MB",
         lambda i, c: 256 << 20, None),
    ]
    for name, f, how, target, limit, check in shapes:
        path = os.path.join(mdir, f)
        size = os.path.getsize(path)
        if how == "stdin":
            rss, code, rows, err, csv, body = measured(["-"], stdin_path=path)
        else:
            rss, code, rows, err, csv, body = measured([path])
        ok = code == 0 and rows > 0 and rss <= limit(size, csv) and (check is None or check(body, err))
        failures += not ok
        rows_out.append((name, mb(size), f"{rows} rows, {mb(csv)} CSV", code, mb(rss),
                         f"{target} = {mb(limit(size, csv))}", "yes" if ok else "NO"))
    print("\n| shape | input | output | exit | peak RSS | target | within |")
    print("|---|---:|---|---|---:|---|---|")
    for r in rows_out:
        print("| " + " | ".join(str(x) for x in r) + " |")
    print(f"\nmemory shapes over target or without rows: {failures}")
    for f in ("samples.cpuprofile", "nodes.cpuprofile", "tasks.json", "name.cpuprofile",
              "name.json", "unused.json.gz"):
        try:
            os.remove(os.path.join(mdir, f))
        except FileNotFoundError:
            pass
