#!/usr/bin/env bash
# Fails if any C++ file in the repository is not clang-formatted (.clang-format).
# Exits 77 (ctest: skipped) when clang-format is not installed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command -v clang-format >/dev/null 2>&1 || { echo "clang-format not installed: skipped"; exit 77; }
cd "$root"
bad=()
while IFS= read -r f; do
  [ -f "$f" ] || continue
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(git ls-files -co --exclude-standard -- '*.h' '*.cpp' 2>/dev/null || find sim models topologies test bench -name '*.h' -o -name '*.cpp')
if ((${#bad[@]})); then
  echo "not clang-formatted (run: clang-format -i FILE):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "all C++ files formatted"
