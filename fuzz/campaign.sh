#!/usr/bin/env bash
# One fuzzing campaign run per target, one target at a time, at the lowest CPU priority.
#
# Usage (from the repository root): fuzz/campaign.sh SECONDS TARGET...
# (FUZZ_SKIP_BUILD=1 runs the binaries already built.)
#
# Builds the targets (`cargo +nightly fuzz build`, libFuzzer with AddressSanitizer), then runs
# each for SECONDS on a scratch corpus under fuzz/scratch/<target> (seeded from the committed
# corpus, kept between runs so that a campaign can be split into several runs), with its
# dictionary. The log of each run goes to fuzz/logs/<target>-<time>.log; libFuzzer's last
# `#N DONE cov: … ft: … corp: …` line and `-print_final_stats` give the figures of FUZZING.md.
# Crashes land in fuzz/artifacts/<target>/. Afterwards, `cargo +nightly fuzz cmin` minimises the
# scratch corpus (see FUZZING.md) before anything is committed.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds="$1"
shift
if [ -z "${FUZZ_SKIP_BUILD:-}" ]; then
    cargo +nightly fuzz build --fuzz-dir fuzz || exit 1
fi
mkdir -p fuzz/logs
for target in "$@"; do
    case "$target" in
        run_code | strip) dict=fuzz/dicts/run_code.dict ;;
        mcp_messages) dict=fuzz/dicts/mcp.dict ;;
        provider_turns) dict=fuzz/dicts/provider.dict ;;
        pattern) dict=fuzz/dicts/regex.dict ;;
        continuation) dict=fuzz/dicts/continuation.dict ;;
        *) dict=fuzz/dicts/json.dict ;;
    esac
    mkdir -p "fuzz/scratch/$target" "fuzz/artifacts/$target"
    cp -n "fuzz/corpus/$target"/* "fuzz/scratch/$target/"
    log="fuzz/logs/$target-$(date -u +%Y%m%dT%H%M%S).log"
    echo "==> $target for ${seconds}s from $(date -u +%H:%M:%S), log $log"
    nice -n 19 "fuzz/target/x86_64-unknown-linux-gnu/release/$target" \
        "fuzz/scratch/$target" \
        -dict="$dict" -max_total_time="$seconds" -print_final_stats=1 \
        -artifact_prefix="fuzz/artifacts/$target/" -rss_limit_mb=4096 -timeout=30 \
        >"$log" 2>&1
    status=$?
    echo "    exit $status at $(date -u +%H:%M:%S): $(grep -E '^#[0-9]+' "$log" | tail -1)"
done
