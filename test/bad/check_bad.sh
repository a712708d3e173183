#!/bin/sh
# check_bad.sh RDMASIM_BINARY SCENARIO_FILE EXPECTED_SUBSTRING
#
# Checks that a malformed scenario is rejected the way docs/scenario.md
# promises: `rdmasim run FILE --out DIR --quiet` and `rdmasim validate FILE`
# both exit 2, print nothing on stdout and exactly one line on stderr,
# "rdmasim: error: <json path>: <problem> (expected ...)", containing
# EXPECTED_SUBSTRING; and the run writes nothing (no trace.h5, summary.json or
# *.tmp, in fact no file at all) into DIR.
#
# Exit status: 0 if every check holds, 1 otherwise (with a message naming the
# check that failed and what was seen).
set -u

if [ "$#" -ne 3 ]; then
  echo "usage: check_bad.sh RDMASIM_BINARY SCENARIO_FILE EXPECTED_SUBSTRING" >&2
  exit 1
fi
rdmasim=$1
scenario=$2
expected=$3
name=$(basename "$scenario")

fail() {
  echo "FAIL $name: $*" >&2
  exit 1
}

[ -n "$expected" ] ||
  fail "no expected substring (add a line \"$name <substring>\" to test/bad/expected.txt)"
[ -x "$rdmasim" ] || fail "$rdmasim is not an executable"
[ -f "$scenario" ] || fail "$scenario does not exist"

# Absolute paths, as the commands run in a scratch folder so that nothing can
# land in the source or build tree.
case $rdmasim in /*) ;; *) rdmasim=$(pwd)/$rdmasim ;; esac
case $scenario in /*) ;; *) scenario=$(pwd)/$scenario ;; esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rdmasim-bad.XXXXXX") || fail "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
out=$tmp/out
mkdir "$tmp/cwd"

# Runs one rdmasim command and checks exit code, stdout and stderr; leaves the
# error line in $line.
check_command() {
  what=$1
  shift
  (cd "$tmp/cwd" && "$rdmasim" "$@") >"$tmp/stdout" 2>"$tmp/stderr"
  code=$?
  show="rdmasim $*"
  [ "$code" -eq 2 ] || {
    echo "--- stderr of $show:" >&2
    cat "$tmp/stderr" >&2
    fail "$what: exit code $code (expected 2)"
  }
  [ ! -s "$tmp/stdout" ] || {
    echo "--- stdout of $show:" >&2
    cat "$tmp/stdout" >&2
    fail "$what: printed to stdout (expected nothing)"
  }
  # Exactly one line: non-empty, ends in a newline, no other newline.
  lines=$(wc -l <"$tmp/stderr")
  chars=$(wc -c <"$tmp/stderr")
  if [ "$lines" -ne 1 ] || [ "$chars" -le 1 ] || [ "$(tail -c 1 "$tmp/stderr" | wc -l)" -ne 1 ]; then
    echo "--- stderr of $show:" >&2
    cat "$tmp/stderr" >&2
    fail "$what: stderr has $lines line(s) (expected exactly one error line)"
  fi
  line=$(cat "$tmp/stderr")
  case $line in
    "rdmasim: error: "*) ;;
    *) fail "$what: stderr line does not start with \"rdmasim: error: \": $line" ;;
  esac
  case $line in
    *"$expected"*) ;;
    *) fail "$what: error line lacks the expected text
  expected to contain: $expected
  got:                 $line" ;;
  esac
}

check_command run run "$scenario" --out "$out" --quiet
run_line=$line

# Nothing written. The out folder should not even exist; if it does, it must be
# empty (checked by name first so the message says what leaked).
for f in trace.h5 summary.json; do
  [ ! -e "$out/$f" ] || fail "run left $out/$f behind"
done
if [ -d "$out" ]; then
  leaked=$(find "$out" -name '*.tmp' | head -n 5)
  [ -z "$leaked" ] || fail "run left temporary files behind: $leaked"
  leaked=$(find "$out" ! -type d | head -n 5)
  [ -z "$leaked" ] || fail "run wrote into $out: $leaked"
fi
leaked=$(find "$tmp/cwd" -mindepth 1 | head -n 5)
[ -z "$leaked" ] || fail "run wrote into its working folder: $leaked"

check_command validate validate "$scenario"
[ "$line" = "$run_line" ] || fail "validate and run disagree
  run:      $run_line
  validate: $line"

exit 0
