# tests/skip.sh - sourced by the test scripts (`. tests/skip.sh`).
# `skip WHAT REASON` records a test that cannot run here (no ../shared, no
# clang, protoc or zsh): it prints one line naming it, appends it to
# $PDT_SKIP_LOG when set (make check counts the lines and says why at the
# end), and returns 0, or under CI=true prints a FAIL line and returns 1:
# a skip is never a pass, and CI must run everything.
skip() {
    echo "$1: skipped: $2"
    [ -z "${PDT_SKIP_LOG:-}" ] || echo "$1: $2" >>"$PDT_SKIP_LOG"
    if [ "${CI:-}" = true ]; then
        echo "$1: FAIL: skipped under CI=true (a skip is never a pass): $2"
        return 1
    fi
    return 0
}
