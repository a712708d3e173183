#!/bin/bash
# check_outputs.sh RDMASIM_BINARY SOURCE_DIR CHECK
#
# Outputs, signals and limits (docs/reliability.md, "Outputs" and "Signals and
# limits"). CHECK is one of: file-size-limit, folder-unwritable,
# stale-temporaries, sigint, sigterm, sigint-threads, second-sigint,
# wall-time. Bash, for `set -m`: a shell without job control starts
# background commands with SIGINT ignored, and rdmasim leaves an ignored
# SIGINT ignored. No check depends on timing: a signal only has to arrive
# while a run that would take minutes is going on.
set -u

suite=outputs
script=check_outputs.sh
. "$(dirname "$0")/common.sh"
pid=
cleanup() {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  chmod -R u+w "$tmp" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
out=$tmp/out

dump() {
  echo "--- stdout:" >&2
  cat "$tmp/stdout" >&2
  echo "--- stderr:" >&2
  cat "$tmp/stderr" >&2
}

expect_code() {
  [ "$code" -eq "$1" ] || {
    dump
    fail "exit code $code (expected $1)"
  }
}

# stderr is one line, "rdmasim: error: ...", containing $1.
expect_error_line() {
  lines=$(wc -l <"$tmp/stderr")
  [ "$lines" -eq 1 ] || {
    dump
    fail "stderr has $lines line(s) (expected exactly one error line)"
  }
  line=$(cat "$tmp/stderr")
  case $line in
    "rdmasim: error: $1"*) ;;
    *) fail "error line is not \"rdmasim: error: $1...\": $line" ;;
  esac
}

# No file under $out that could pass for a run's output: no temporaries, no
# trace.h5, and no summary.json.
expect_nothing_written() {
  left=$(find "$out" -name '*.tmp' -o -name trace.h5 -o -name summary.json 2>/dev/null | head -n 5)
  [ -z "$left" ] || fail "left behind: $left"
}

# summary.json is valid JSON with status $1; with a trace, trace.h5 has
# root attributes status $1 and partial 1 (a partial run's) or no partial
# attribute (a whole run's).
expect_outputs() {
  "$python" - "$out" "$1" <<'EOF' || fail "outputs are not those of a run with status $1"
import json, os, sys
out, status = sys.argv[1], sys.argv[2]
with open(os.path.join(out, "summary.json")) as f:
    s = json.load(f)
if s.get("status") != status:
    sys.exit("summary.json: status %r (expected %r)" % (s.get("status"), status))
leaked = [n for n in os.listdir(out) if n.endswith(".tmp")]
if leaked:
    sys.exit("temporaries left: %s" % leaked)
trace = os.path.join(out, "trace.h5")
if os.path.exists(trace):
    import h5py
    with h5py.File(trace, "r") as t:
        got = t.attrs["status"]
        got = got.decode() if isinstance(got, bytes) else got
        if got != status:
            sys.exit("trace.h5: status %r (expected %r)" % (got, status))
        partial = int(t.attrs.get("partial", 0))
        want = 1 if status in ("interrupted", "wall_time_limit") else 0
        if partial != want:
            sys.exit("trace.h5: partial %d (expected %d)" % (partial, want))
        if "flows" not in t:
            sys.exit("trace.h5: no /flows table")
elif status in ("interrupted", "wall_time_limit"):
    sys.exit("no trace.h5 (expected a partial one)")
EOF
}

# Starts a run that would take minutes (a 1 TiB flow) in the background and
# waits until its output folder exists: rdmasim catches the signals before
# it creates the folder.
start_long_run() {
  rm -rf "$out"
  set -m
  "$rdmasim" run "$@" --out "$out" --quiet >"$tmp/stdout" 2>"$tmp/stderr" &
  pid=$!
  set +m
  i=0
  while [ ! -d "$out" ]; do
    kill -0 "$pid" 2>/dev/null || {
      dump
      fail "the run ended before its output folder appeared"
    }
    i=$((i + 1))
    [ "$i" -lt 600 ] || fail "no output folder after 60 s"
    sleep 0.1
  done
}

finish_run() {
  wait "$pid"
  code=$?
  pid=
}

# A signal $1 to a long run on $2 threads of scenario $3: exit $4, status
# interrupted, partial outputs.
interrupt() {
  # Threads forced: the scenarios are too sparse to keep them otherwise,
  # and the signal is to reach a partitioned run.
  local force=""
  [ "$2" -gt 1 ] && force="--force-threads"
  start_long_run "$3" --threads "$2" $force --set 'traffic[0].size="1TiB"'
  kill "-$1" "$pid"
  finish_run
  expect_code "$4"
  grep -q "rdmasim: interrupted at" "$tmp/stderr" || {
    dump
    fail "stderr does not say the run was interrupted"
  }
  expect_outputs interrupted
}

case $check in
  file-size-limit)
    # A file size limit (RLIMIT_FSIZE) with SIGXFSZ ignored: write() fails
    # with EFBIG, as on a full disk. 1 KiB: neither output fits.
    mkdir "$out"
    (ulimit -f 1 && trap '' XFSZ && exec "$rdmasim" run "$quickstart" --out "$out" --quiet \
      --set 'traffic[0].size="1MiB"') >"$tmp/stdout" 2>"$tmp/stderr"
    code=$?
    expect_code 7
    expect_error_line "$out/trace.h5: "
    expect_nothing_written
    (ulimit -f 1 && trap '' XFSZ && exec "$rdmasim" run "$quickstart" --out "$out" --quiet \
      --set 'traffic[0].size="1MiB"' --set output.trace=false) >"$tmp/stdout" 2>"$tmp/stderr"
    code=$?
    expect_code 7
    expect_error_line "$out/summary.json: cannot write $out/summary.json.tmp: File too large"
    expect_nothing_written
    # The same run without the limit writes both.
    "$rdmasim" run "$quickstart" --out "$out" --quiet --set 'traffic[0].size="1MiB"' \
      >"$tmp/stdout" 2>"$tmp/stderr"
    code=$?
    expect_code 0
    expect_outputs complete
    ;;
  folder-unwritable)
    run_into() {
      "$rdmasim" run "$quickstart" --out "$1" --quiet --set 'traffic[0].size="1GiB"' \
        >"$tmp/stdout" 2>"$tmp/stderr"
      code=$?
    }
    # summary.json, trace.h5 or a temporary as a folder: refused before the
    # run (a 1 GiB flow would take seconds), nothing else touched.
    for name in summary.json trace.h5 trace.h5.tmp; do
      rm -rf "$out"
      mkdir -p "$out/$name/inside"
      run_into "$out"
      expect_code 2
      expect_error_line "$out/$name: is a folder"
      [ -d "$out/$name/inside" ] || fail "$name: the folder was touched"
      [ "$(ls "$out")" = "$name" ] || fail "$name: wrote $(ls "$out")"
    done
    # The output folder under a regular file.
    : >"$tmp/file"
    run_into "$tmp/file/out"
    expect_code 2
    expect_error_line "--out: cannot create \"$tmp/file/out\""
    # A read-only folder (root writes anyway: skipped then).
    if [ "$(id -u)" -ne 0 ]; then
      rm -rf "$out"
      mkdir "$out"
      chmod 0555 "$out"
      run_into "$out"
      expect_code 2
      expect_error_line "$out: cannot write in the output folder"
      chmod 0755 "$out"
    fi
    ;;
  stale-temporaries)
    mkdir "$out"
    echo junk >"$out/summary.json.tmp"
    echo junk >"$out/trace.h5.tmp"
    "$rdmasim" run "$quickstart" --out "$out" --set 'traffic[0].size="1MiB"' \
      >"$tmp/stdout" 2>"$tmp/stderr"
    code=$?
    expect_code 0
    [ "$(wc -l <"$tmp/stderr")" -eq 1 ] || {
      dump
      fail "stderr is not one note line"
    }
    grep -q "^rdmasim: note: removed temporaries an earlier run left unfinished: $out/summary.json.tmp, $out/trace.h5.tmp\$" \
      "$tmp/stderr" || {
      dump
      fail "no note naming both temporaries"
    }
    expect_outputs complete
    ;;
  sigint)
    interrupt INT 1 "$quickstart" 130
    ;;
  sigterm)
    interrupt TERM 2 "$quickstart" 143
    ;;
  sigint-threads)
    # Three partitions of the incast's nine hosts, stopped between phases.
    interrupt INT 3 "$src/scenarios/incast.json" 130
    ;;
  second-sigint)
    # The second SIGINT exits at once (or, if the first already ended the
    # run, finds it gone): exit 130 either way, and no summary.json but an
    # interrupted one.
    start_long_run "$quickstart" --set 'traffic[0].size="1TiB"'
    kill -INT "$pid"
    kill -INT "$pid" 2>/dev/null
    finish_run
    expect_code 130
    find "$out" -name '*.tmp' | grep -q . && fail "temporaries left: $(ls "$out")"
    if [ -e "$out/summary.json" ]; then expect_outputs interrupted; fi
    ;;
  wall-time)
    rm -rf "$out"
    "$rdmasim" run "$quickstart" --out "$out" --quiet --set 'traffic[0].size="1TiB"' \
      --set stop.wall_time=0.5s >"$tmp/stdout" 2>"$tmp/stderr"
    code=$?
    expect_code 6
    grep -q "rdmasim: wall-time limit at" "$tmp/stderr" || {
      dump
      fail "stderr does not name the wall-time limit"
    }
    expect_outputs wall_time_limit
    ;;
  *)
    fail "unknown check \"$check\""
    ;;
esac
exit 0
