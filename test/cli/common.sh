# Sourced by check_cli.sh and check_outputs.sh (POSIX sh): their arguments
# RDMASIM_BINARY SOURCE_DIR CHECK, made absolute and checked; fail(); and a
# fresh temporary folder $tmp. Set `suite` (the ctest prefix) and `script`
# before sourcing.
if [ "$#" -ne 3 ]; then
  echo "usage: $script RDMASIM_BINARY SOURCE_DIR CHECK" >&2
  exit 1
fi
rdmasim=$1
src=$2
check=$3
python=/usr/bin/python3
quickstart=$src/scenarios/quickstart.json

fail() {
  echo "FAIL $suite $check: $*" >&2
  exit 1
}

case $rdmasim in /*) ;; *) rdmasim=$(pwd)/$rdmasim ;; esac
case $src in /*) ;; *) src=$(pwd)/$src ;; esac
[ -x "$rdmasim" ] || fail "$rdmasim is not an executable"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rdmasim-$suite.XXXXXX") || fail "mktemp failed"
