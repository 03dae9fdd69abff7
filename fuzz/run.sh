#!/usr/bin/env bash
# fuzz/run.sh BUILD SECONDS [HARNESS...]: bounded libFuzzer runs of the harnesses built in BUILD with
# -DH5ZARR_FUZZ=ON (see fuzz/README.md). Each harness runs for SECONDS over a working corpus in
# BUILD/fuzz/corpus/<h> (seeded from fuzz/seeds, fuzz/regressions, generated seeds and shared test
# data read in place; nothing is written into the source tree). Crashes land in
# BUILD/fuzz/artifacts/<h>/. Exit status: non-zero if any harness found a crash.
set -u
build=${1:?usage: fuzz/run.sh BUILD SECONDS [HARNESS...]}
secs=${2:?usage: fuzz/run.sh BUILD SECONDS [HARNESS...]}
shift 2
src=$(cd "$(dirname "$0")" && pwd)
shared=${H5ZARR_SHARED:-$src/../../shared}
zm=$shared/testdata/zarr-python/zarr-metadata
harnesses=${*:-meta_v3 meta_v2 consolidated chain dtype shard open}
# FUZZ_KEEP_GOING=1: run the whole time even after findings (libFuzzer's fork mode, one job), every
# crash saved in the artifacts folder; for harnesses whose known findings wait for a fix elsewhere
keep=()
[ "${FUZZ_KEEP_GOING:-0}" = 1 ] && keep=(-fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1)
status=0
for h in $harnesses; do
    bin=$build/fuzz/fuzz_$h
    [ -x "$bin" ] || { echo "run.sh: $bin not built (configure with -DH5ZARR_FUZZ=ON)"; exit 2; }
    corpus=$build/fuzz/corpus/$h
    art=$build/fuzz/artifacts/$h
    mkdir -p "$corpus" "$art"
    extra=()
    case $h in
        meta_v3) extra=("$zm/v3/array" "$zm/v3/group" "$zm/v3/consolidated") ;;
        meta_v2) extra=("$zm/v2/array" "$zm/v2/group") ;;
        consolidated) extra=("$zm/v2/consolidated" "$zm/v3/consolidated") ;;
        open)
            "$build/fuzz/fuzz_${h}_replay" --gen "$build/fuzz/gen/$h" >/dev/null 2>&1
            extra=("$build/fuzz/gen/$h") ;;
        chain | dtype)
            H5ZARR_SHARED=$shared "$build/fuzz/fuzz_${h}_replay" --gen "$build/fuzz/gen/$h" >/dev/null 2>&1
            extra=("$build/fuzz/gen/$h") ;;
    esac
    dict=()
    case $h in meta_v3 | meta_v2 | consolidated | dtype | open) dict=(-dict="$src/json.dict") ;; esac
    # open: whole stores (several documents and chunks) need more room than one document
    maxlen=8192
    [ "$h" = open ] && maxlen=32768
    # libFuzzer exits on a corpus dir that does not exist (not every harness has regressions yet)
    dirs=()
    for d in "$src/seeds/$h" "$src/regressions/$h" "${extra[@]}"; do [ -d "$d" ] && dirs+=("$d"); done
    echo "== fuzz_$h for ${secs}s"
    before=$(ls -A "$art" | wc -l)
    # -merge-free start: libFuzzer reads every listed dir, writes new inputs to the first (corpus)
    if ! "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2560 -malloc_limit_mb=2048 -max_len=$maxlen \
        -print_final_stats=1 -artifact_prefix="$art/" "${keep[@]}" "${dict[@]}" "$corpus" "${dirs[@]}" \
        >"$build/fuzz/$h.log" 2>&1; then
        status=1
        if [ "$(ls -A "$art" | wc -l)" -gt "$before" ]; then
            echo "fuzz_$h: FOUND A PROBLEM (log: $build/fuzz/$h.log, input in $art/)"
            grep -m3 -E 'ERROR|runtime error|invariant failed' "$build/fuzz/$h.log"
        else # libFuzzer stopped without an input to show: a setup error, not a finding
            echo "fuzz_$h: libFuzzer did not run: $(tail -n 1 "$build/fuzz/$h.log")"
        fi
    else
        grep -E 'stat::number_of_executed_units|cov:' "$build/fuzz/$h.log" | tail -2
    fi
done
exit $status
