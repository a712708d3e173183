#!/bin/sh
# check_cli.sh RDMASIM_BINARY SOURCE_DIR CHECK
#
# Command-line checks of rdmasim (docs/scenario.md, "Exit codes"). CHECK is one
# of: version, no-arguments, unknown-command, set-without-equals,
# out-inside-file, out-empty, good-run, deterministic, threads-bad, threads-deterministic,
# help, describe, resolve, schema, set-deep, set-index-too-large,
# file-limits, name-dotdot, idle-events, memory-limit, set-invalid-utf8.
# Exit status 0 if the check holds, 1 otherwise (with a message saying what
# was seen).
set -u

suite=cli
script=check_cli.sh
. "$(dirname "$0")/common.sh"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
mkdir "$tmp/cwd"

# Runs rdmasim in a scratch folder; sets $code, leaves $tmp/stdout, $tmp/stderr.
run() {
  (cd "$tmp/cwd" && "$rdmasim" "$@") >"$tmp/stdout" 2>"$tmp/stderr"
  code=$?
  shown="rdmasim $*"
}

dump() {
  echo "--- stdout of $shown:" >&2
  cat "$tmp/stdout" >&2
  echo "--- stderr of $shown:" >&2
  cat "$tmp/stderr" >&2
}

expect_code() {
  [ "$code" -eq "$1" ] || {
    dump
    fail "$shown: exit code $code (expected $1)"
  }
}

# stderr is exactly one line, "rdmasim: error: ...", containing $1 (if given).
expect_error_line() {
  lines=$(wc -l <"$tmp/stderr")
  if [ "$lines" -ne 1 ] || [ "$(tail -c 1 "$tmp/stderr" | wc -l)" -ne 1 ]; then
    dump
    fail "$shown: stderr has $lines line(s) (expected exactly one error line)"
  fi
  line=$(cat "$tmp/stderr")
  case $line in
    "rdmasim: error: "*) ;;
    *) fail "$shown: stderr does not start with \"rdmasim: error: \": $line" ;;
  esac
  case $line in
    *"${1:-}"*) ;;
    *) fail "$shown: error line lacks \"$1\": $line" ;;
  esac
  [ ! -s "$tmp/stdout" ] || {
    dump
    fail "$shown: printed to stdout (expected nothing)"
  }
}

# A good run into $1 (more arguments go to rdmasim); checks outputs.
# OPTION with values that are not a count from 1 to 64: exit 2, one line.
refuse_counts() {
  for n in 0 abc 65 -1; do
    run run "$quickstart" --out "$tmp/out" "$1" "$n" --quiet
    expect_code 2
    expect_error_line "$1"
  done
}

good_run() {
  dir=$1
  shift
  run run "$quickstart" --out "$dir" --set 'traffic[0].size=64MiB' --quiet "$@"
  set -- "$dir"
  expect_code 0
  [ -f "$1/summary.json" ] || fail "$shown: no $1/summary.json"
  [ -f "$1/trace.h5" ] || fail "$shown: no $1/trace.h5"
  leaked=$(find "$1" -name '*.tmp' | head -n 5)
  [ -z "$leaked" ] || fail "$shown: temporary files left behind: $leaked"
  "$python" - "$1/summary.json" <<'EOF' || fail "$shown: summary.json is not a complete run"
import json, sys
with open(sys.argv[1]) as f:
    s = json.load(f)
if s.get("status") != "complete":
    sys.exit("status is %r (expected \"complete\")" % s.get("status"))
EOF
}

case $check in
  version)
    run --version
    expect_code 0
    case $(cat "$tmp/stdout") in
      "rdmasim "*) ;;
      *) dump; fail "--version does not print \"rdmasim \"" ;;
    esac
    ;;
  no-arguments)
    run
    expect_code 2
    [ ! -s "$tmp/stdout" ] || { dump; fail "printed to stdout (expected usage on stderr)"; }
    [ -s "$tmp/stderr" ] || fail "printed nothing on stderr (expected the usage)"
    ;;
  unknown-command)
    run runn "$quickstart"
    expect_code 2
    expect_error_line 'unknown command "runn"'
    ;;
  set-without-equals)
    run run "$quickstart" --out "$tmp/out" --set fabric.mtu --quiet
    expect_code 2
    expect_error_line "--set fabric.mtu"
    [ ! -e "$tmp/out" ] || fail "$shown: created $tmp/out (expected nothing written)"
    ;;
  out-inside-file)
    : >"$tmp/file"
    run run "$quickstart" --out "$tmp/file/out" --quiet
    expect_code 2
    expect_error_line "$tmp/file/out"
    ;;
  out-empty)
    # An empty variable in `--out "$DIR"`: refused, nothing written in the
    # folder output.dir names (out/<name> under the working folder).
    run run "$quickstart" --out "" --quiet
    expect_code 2
    expect_error_line "--out"
    [ -e "$tmp/cwd/out" ] && fail "--out \"\" wrote into $tmp/cwd/out"
    ;;
  good-run)
    good_run "$tmp/out"
    ;;
  deterministic)
    good_run "$tmp/a"
    good_run "$tmp/b"
    cmp "$tmp/a/trace.h5" "$tmp/b/trace.h5" || fail "trace.h5 differs between two identical runs"
    "$python" - "$tmp/a/summary.json" "$tmp/b/summary.json" <<'EOF' ||
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for s in (a, b):
    if "run" not in s:
        sys.exit("summary.json has no \"run\" object")
    del s["run"]
if a != b:
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            print("differs at %r: %r vs %r" % (k, a.get(k), b.get(k)), file=sys.stderr)
    sys.exit(1)
EOF
      fail "summary.json differs (outside \"run\") between two identical runs"
    ;;
  threads-bad)
    refuse_counts --threads
    # The quick-start network has two hosts: at most two threads. Refused
    # before anything is written or removed: an earlier run's outputs stay.
    good_run "$tmp/prev"
    run run "$quickstart" --out "$tmp/prev" --threads 3 --quiet
    expect_code 2
    expect_error_line "more than the scenario's 2 hosts"
    [ -f "$tmp/prev/summary.json" ] || fail "$shown: removed the earlier run's summary.json"
    run run "$quickstart" --out "$tmp/new/deep" --threads 3 --quiet
    expect_code 2
    [ ! -e "$tmp/new" ] || fail "$shown: created $tmp/new (expected nothing written)"
    run run "$quickstart" --out "$tmp/zeros" --threads 0002 --quiet
    expect_code 0
    ;;
  partitions-bad)
    refuse_counts --partitions
    # With threads, at least one partition per thread: fewer is refused.
    run run "$quickstart" --out "$tmp/out" --threads 2 --partitions 1 --quiet
    expect_code 2
    expect_error_line "--partitions: 1 with --threads 2"
    # The quick-start network has two hosts: at most two partitions; refused
    # before anything is written or removed.
    good_run "$tmp/prev"
    run run "$quickstart" --out "$tmp/prev" --partitions 3 --quiet
    expect_code 2
    expect_error_line "more than the scenario's 2 hosts"
    [ -f "$tmp/prev/summary.json" ] || fail "$shown: removed the earlier run's summary.json"
    # Two partitions taking turns: the run says so, and --threads 2
    # --partitions 2 is the same as --threads 2.
    good_run "$tmp/p2" --partitions 2
    /usr/bin/python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["run"]; sys.exit(0 if (r["partitions"], r["threads"], r["threads_used"]) == (2, 1, 1) else 1)' \
      "$tmp/p2/summary.json" || fail "$shown: run.partitions is not 2 on one thread"
    good_run "$tmp/t2" --threads 2 --partitions 2
    # More partitions than threads (the nine hosts of the incast example):
    # each thread's take turns, and the human summary says so.
    run run "$src/scenarios/incast.json" --out "$tmp/t2p4" --threads 2 --partitions 4 \
      --force-threads
    expect_code 0
    grep -q "on 2 threads" "$tmp/stdout" || fail "$shown: the summary does not say 2 threads"
    grep -q "the network in 4 partitions, each thread's taking turns" "$tmp/stdout" ||
      fail "$shown: the summary does not say the 4 partitions take turns"
    /usr/bin/python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["run"]; sys.exit(0 if (r["partitions"], r["threads"], r["threads_used"]) == (4, 2, 2) and r["events_per_thread_lookahead"] == 2 * r["events_per_partition_lookahead"] > 0 else 1)' \
      "$tmp/t2p4/summary.json" || fail "$shown: run.partitions is not 4 on 2 threads, or the density per thread is not twice that per partition"
    # A large fabric whose first phase is too sparse for threads (1 Gb/s
    # links), already in the partitions one thread takes turns with: after
    # that phase it goes on in turns on one thread, and the summary says so
    # rather than giving events per thread.
    cat >"$tmp/sparse1024.json" <<'JSON'
{ "name": "sparse1024", "fabric": { "link": { "rate": "1Gbps", "delay": "1us" } },
  "topology": { "kind": "fat_tree", "k": 16 },
  "traffic": [ { "kind": "permutation", "pattern": "random", "size": "16KB" } ],
  "output": { "trace": false } }
JSON
    run run "$tmp/sparse1024.json" --out "$tmp/s1024" --threads 2
    expect_code 0
    grep -q "on 2 threads for the first phase, then on 1" "$tmp/stdout" ||
      fail "$shown: the summary of a run that went on in turns does not say so"
    /usr/bin/python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["run"]; sys.exit(0 if (r["partitions"], r["threads"], r["threads_used"]) == (8, 2, 1) and r["phases"] > 1 and not r["restarted_on_one_thread"] else 1)' \
      "$tmp/s1024/summary.json" || fail "$shown: the sparse 1,024-host run did not go on in turns after its first phase"
    ;;
  threads-deterministic)
    # Two threads, twice: identical; and identical to one thread but for the
    # run's own figures. The quickstart's one flow is far too sparse for two
    # threads: the run starts again on one, so even the fingerprint is one
    # thread's; with --force-threads it keeps them and its fingerprint is the
    # partitioned chain's (one per partition), the rest still identical.
    good_run "$tmp/a" --threads 2
    good_run "$tmp/b" --threads 2
    good_run "$tmp/c" --threads 1
    good_run "$tmp/d" --threads 2 --force-threads
    cmp "$tmp/a/trace.h5" "$tmp/b/trace.h5" || fail "trace.h5 differs between two 2-thread runs"
    cmp "$tmp/a/trace.h5" "$tmp/c/trace.h5" || fail "trace.h5 differs between 1 and 2 threads"
    cmp "$tmp/d/trace.h5" "$tmp/c/trace.h5" || fail "trace.h5 differs between 1 and 2 forced threads"
    "$python" - "$tmp/a/summary.json" "$tmp/b/summary.json" "$tmp/c/summary.json" \
      "$tmp/d/summary.json" <<'EOF' ||
import json, sys
a, b, c, d = (json.load(open(p)) for p in sys.argv[1:5])
if a["run"]["threads"] != 2 or c["run"]["threads"] != 1 or d["run"]["threads"] != 2:
    sys.exit("run.threads is not what was asked")
if not a["run"]["restarted_on_one_thread"] or a["run"]["threads_used"] != 1:
    sys.exit("the sparse 2-thread run did not start again on one thread")
if d["run"]["restarted_on_one_thread"] or d["run"]["threads_used"] != 2:
    sys.exit("the forced 2-thread run did not keep its threads")
for s in (a, b, c, d):
    del s["run"]
if a != b:
    sys.exit("summary.json differs between two 2-thread runs")
if a != c:
    sys.exit("summary.json of a run started again on one thread differs from one thread's")
if d["fingerprint"] == c["fingerprint"]:
    sys.exit("the fingerprint of 2 forced threads equals that of 1 (expected a partitioned chain)")
del d["fingerprint"], c["fingerprint"]
for k in sorted(set(d) | set(c)):
    if d.get(k) != c.get(k):
        sys.exit("differs at %r: %r vs %r" % (k, d.get(k), c.get(k)))
EOF
      fail "summary.json of a 2-thread run"
    ;;
  help)
    # Every command takes --help: usage on stdout, exit 0, nothing on stderr.
    for c in run validate resolve topo describe schema; do
      run "$c" --help
      expect_code 0
      grep -q "^usage: rdmasim $c" "$tmp/stdout" || { dump; fail "$shown: no usage line"; }
      [ ! -s "$tmp/stderr" ] || { dump; fail "$shown: printed to stderr"; }
    done
    run --help
    expect_code 0
    for c in run validate resolve topo describe schema; do
      grep -q "^  $c " "$tmp/stdout" || { dump; fail "$shown: does not list $c"; }
    done
    ;;
  describe)
    run describe fabric.nic.ack_interval
    expect_code 0
    grep -q "^fabric.nic.ack_interval: integer 1..1000000, packets; default 1$" "$tmp/stdout" ||
      { dump; fail "$shown: not the parameter's line"; }
    # A subtree lists every key under it, kinds as path segments.
    run describe traffic
    expect_code 0
    for k in traffic.kind traffic.incast.jitter traffic.permutation.shift traffic.background.cdf; do
      grep -q "^$k: " "$tmp/stdout" || { dump; fail "$shown: lacks $k"; }
    done
    run describe
    expect_code 0
    for k in seed fabric.switch.pfc.headroom topology.fat_tree.k output.trace stop.time; do
      grep -q "^$k: " "$tmp/stdout" || { dump; fail "$shown: lacks $k"; }
    done
    run describe topology.fat_tree.leaves
    expect_code 0
    grep -q 'Only without `k` and with `tiers` `2`' "$tmp/stdout" ||
      { dump; fail "$shown: does not say when it applies"; }
    # Bad key paths: one line, exit 2, a suggestion when close.
    run describe fabric.nic.ack_intervall
    expect_code 2
    expect_error_line 'describe: fabric.nic.ack_intervall: unknown key (did you mean "ack_interval"?)'
    run describe topology.fat_tre.k
    expect_code 2
    expect_error_line 'did you mean "fat_tree"?'
    run describe seed.x
    expect_code 2
    expect_error_line 'describe: seed.x: seed is integer'
    run describe fabric --group forwarding
    expect_code 2
    expect_error_line "--group and --exclude go with --markdown"
    ;;
  resolve)
    # What resolve prints is byte for byte what the trace stores.
    run resolve "$quickstart" --set fabric.mtu=1024 --seed 9
    expect_code 0
    cp "$tmp/stdout" "$tmp/resolved.json"
    run run "$quickstart" --out "$tmp/out" --set fabric.mtu=1024 --seed 9 --quiet
    expect_code 0
    "$python" - "$tmp/resolved.json" "$tmp/out/trace.h5" <<'EOF' || fail "resolve differs from /meta/scenario"
import json, sys, h5py
printed = open(sys.argv[1], "rb").read()
with h5py.File(sys.argv[2], "r") as f:
    stored = f["meta/scenario"][()]
stored = stored.encode() if isinstance(stored, str) else bytes(stored)
if printed != stored + b"\n":
    sys.exit("resolve printed %d bytes, the trace stores %d" % (len(printed), len(stored)))
r = json.loads(printed)
if r["seed"] != 9 or r["fabric"]["mtu"] != 1024 or r["fabric"]["nic"]["ack_dscp"] != 26:
    sys.exit("overrides or defaults not in the resolved scenario")
EOF
    run resolve "$quickstart" --set fabric.mtuu=1
    expect_code 2
    expect_error_line 'fabric.mtuu: unknown key (did you mean "mtu"?)'
    ;;
  schema)
    run schema
    expect_code 0
    cmp -s "$tmp/stdout" "$src/docs/schema.json" || fail "rdmasim schema differs from docs/schema.json"
    run schema extra
    expect_code 2
    ;;
  # Bad input (docs/reliability.md): exit 2, one short line, never a crash.
  set-deep)
    deep=$("$python" -c 'print("[" * 60000 + "]" * 60000)')
    run validate "$quickstart" --set "name=$deep"
    expect_code 2
    expect_error_line "nested deeper than 64 levels"
    [ "$(wc -c <"$tmp/stderr")" -lt 400 ] || fail "$shown: the error line is not clipped"
    deep=$("$python" -c 'print(".".join(["a"] * 1000) + "=1")')
    run validate "$quickstart" --set "$deep"
    expect_code 2
    expect_error_line "nests the scenario deeper than 64 levels"
    ;;
  set-index-too-large)
    run validate "$quickstart" --set 'traffic[99999999999999999999].x=1'
    expect_code 2
    expect_error_line "--set traffic[99999999999999999999].x=1: [99999999999999999999] is not an array index"
    long=$("$python" -c 'print("x" * 5000)')
    run validate "$quickstart" --set "name=$long"
    expect_code 2
    expect_error_line "bytes is too long (expected a string of at most 4096 bytes)"
    ;;
  file-limits)
    run validate /dev/zero
    expect_code 2
    expect_error_line "/dev/zero: cannot read the file: it is larger than 64 MiB"
    mkdir "$tmp/dir.json"
    run run "$tmp/dir.json" --quiet
    expect_code 2
    expect_error_line "dir.json: cannot read the file: it is a directory"
    run validate "$quickstart" --set 'traffic[0]={"kind":"background","hosts":"all","load":0.5,"duration":"1ms","cdf":"/dev/zero"}'
    expect_code 2
    expect_error_line 'traffic[0].cdf: cannot read the file "/dev/zero": it is larger than 16 MiB'
    # A 10 MB key: refused while parsing, echoed clipped.
    "$python" -c 'import sys; sys.stdout.write("{\"" + "k" * 10000000 + "\": 1}")' >"$tmp/key.json"
    run validate "$tmp/key.json"
    expect_code 2
    expect_error_line "a key of 10000000 bytes is too long (expected a key of at most 256 bytes)"
    [ "$(wc -c <"$tmp/stderr")" -lt 400 ] || fail "$shown: the error line is not clipped"
    ;;
  name-dotdot)
    # The default output folder would be out/.., whose outputs a run
    # removes first: refused, and nothing outside is touched.
    mkdir "$tmp/cwd/out"
    echo keep >"$tmp/cwd/summary.json"
    run run "$quickstart" --set 'name=".."' --quiet
    expect_code 2
    expect_error_line 'name: ".." is not usable as a folder name'
    [ "$(cat "$tmp/cwd/summary.json")" = keep ] || fail "$shown: removed or changed ../summary.json"
    ;;
  idle-events)
    # A flow that starts 100 s in: the idle stretch costs no events (the
    # deadlock detector skips its ticks while no queue is paused with packets).
    run run "$quickstart" --out "$tmp/out" --set 'traffic[0].start="100s"' --set 'traffic[0].size=4096' --quiet
    expect_code 0
    "$python" - "$tmp/out/summary.json" <<'EOF' || fail "$shown: idle time costs events"
import json, sys
with open(sys.argv[1]) as f:
    s = json.load(f)
if s["status"] != "complete" or s["events"] > 1000:
    sys.exit("status %r, %d events (expected complete, at most 1000)" % (s["status"], s["events"]))
EOF
    ;;
  set-invalid-utf8)
    # A --set value that is not JSON becomes a string, which must be UTF-8:
    # refused naming the flag and the byte, echoing nothing after it.
    run validate "$quickstart" --set "$(printf 'name=ab\366cd')"
    expect_code 2
    expect_error_line '--set name=ab…: byte 7 (0xF6) is not UTF-8 (expected UTF-8 text'
    run validate "$quickstart" --set "$(printf 'traffic[0]={"kind":"flow\366,"src":"h0"}')"
    expect_code 2
    expect_error_line 'byte 24 (0xF6) is not UTF-8'
    # Overlong and surrogate forms, and a character cut short, are not UTF-8 either.
    for bad in '\300\257' '\355\240\200' '\342\202'; do
      run validate "$quickstart" --set "$(printf "name=x$bad")"
      expect_code 2
      expect_error_line 'byte 6 ('
    done
    run validate "$quickstart" --set "$(printf 'name=caf\303\251-\360\237\232\200')"
    expect_code 0
    ;;
  memory-limit)
    # validate --estimate: the parts, counted from the loaded scenario
    # (a k = 8 fat-tree: 128 hosts, 80 switches of 8 ports).
    ft8=$src/scenarios/fat_tree_k8.json
    run validate "$ft8" --estimate --memory-limit 64GiB
    expect_code 0
    for part in "program and loaded scenario" "NICs .*128 NICs" "switches .*80 switches.*640 ports" \
      "flows" "QPs" "packet pool" "total" "limit 64.0 GiB (--memory-limit): fits"; do
      grep -q "$part" "$tmp/stdout" || { dump; fail "$shown: no \"$part\" line"; }
    done
    # Above the limit: one line, exit 2, before anything is written.
    run run "$quickstart" --out "$tmp/small" --memory-limit 1MiB --quiet
    expect_code 2
    expect_error_line "memory: the run would need about "
    grep -q "but the limit is 1.00 MiB (--memory-limit)" "$tmp/stderr" || { dump; fail "$shown: the limit is not named"; }
    [ ! -e "$tmp/small/summary.json" ] || fail "$shown: wrote a summary"
    run run "$quickstart" --memory-limit lots --quiet
    expect_code 2
    expect_error_line '--memory-limit: "lots" is not a size'
    # 256 QPs per flow on a k = 32 fat-tree (8192 flows): 2 M QP pairs,
    # refused by validate too, naming the part.
    run validate "$src/bench/scenarios/w5_permutation_8192_dcqcn.json" --set 'traffic[0].qps=256' --memory-limit 4GiB
    expect_code 2
    expect_error_line "(QPs "
    # The default limit is the machine's memory: a small run fits.
    run validate "$quickstart"
    expect_code 0
    ;;
  check)
    # --check runs the invariants (docs/reliability.md) and says so; a
    # lossy incast with its drops and retransmissions passes them (flow bytes
    # conserved with drops in the count; every QP complete).
    good_run "$tmp/out" --check
    run run "$src/scenarios/lossy_incast.json" --out "$tmp/lossy" --check --quiet
    expect_code 0
    "$python" - "$tmp/out/summary.json" "$tmp/lossy/summary.json" <<'EOF' || fail "$shown: summary.json does not say the invariants were checked"
import json, sys
for path in sys.argv[1:]:
    with open(path) as f:
        s = json.load(f)
    if s.get("invariants") != {"checked": True, "violation": ""}:
        sys.exit("%s: invariants is %r" % (path, s.get("invariants")))
    if s.get("lossless_drops_headroom_below_automatic") != 0:
        sys.exit("%s: lossless drops below the automatic headroom" % path)
EOF
    run run --help
    grep -q -- "--check" "$tmp/stdout" || { dump; fail "$shown: --help does not list --check"; }
    ;;
  *)
    fail "unknown check (expected version, help, describe, resolve, schema, no-arguments, unknown-command, set-without-equals, out-inside-file, good-run, deterministic, threads-bad or threads-deterministic)"
    ;;
esac
exit 0
