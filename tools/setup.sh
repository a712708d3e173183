#!/usr/bin/env bash
# Installs rdmasim's dependencies (Debian 12, apt-get, non-interactive,
# idempotent) and builds it in ./build. Safe to run again: packages already
# present are not fetched, and the build is incremental.
#
#   tools/setup.sh            install + build (Release, warnings as errors)
#   RDMASIM_BUILD_DIR=dir     build somewhere else
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RDMASIM_BUILD_DIR:-$root/build}"

packages=(
  build-essential cmake git
  libboost-graph-dev libboost-program-options-dev
  nlohmann-json3-dev libfmt-dev catch2
  libhdf5-dev hdf5-tools
  python3 python3-h5py python3-numpy python3-pandas python3-matplotlib python3-jsonschema
  # Executing the example notebook headless (ctest "plots notebook").
  python3-nbclient python3-nbformat python3-ipykernel
  # The sanitizer and fuzz trees (tools/sanitize.sh, docs/reliability.md):
  # clang, its sanitizer and libFuzzer runtimes, llvm-symbolizer for reports.
  clang-14 libclang-rt-14-dev llvm-14
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: all dependencies present"
fi

jobs="$(nproc 2>/dev/null || echo 2)"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DRDMASIM_WERROR=ON
cmake --build "$build" -j "$jobs"
