# shellcheck shell=bash
# lib_status.sh: sourced by every tests/*.sh script as its first command (not a test itself),
# before it changes directory:   . "$(dirname "$0")/lib_status.sh"
#
# Makes the script's exit status say what its lines say: the script runs again as a child, its
# standard output passed on line by line as it comes, and the exit status is the child's own when
# that is not 0, else 1 when the child printed a line starting "FAIL ", else 0. So a script fails
# by itself, wherever its FAIL lines come from (a function, a subshell, a background job), not
# only when tests/run_tests.sh counts them. Standard error is passed on untouched.
if [ "${TESTS_STATUS_CHILD:-}" = 1 ]; then
    unset TESTS_STATUS_CHILD # scripts this one runs wrap themselves in turn
else
    TESTS_STATUS_CHILD=1 "$BASH" "$0" "$@" | awk '{ print; fflush() } /^FAIL / { failed = 1 } END { exit failed }'
    tests_status=("${PIPESTATUS[@]}")
    [ "${tests_status[0]}" -ne 0 ] && exit "${tests_status[0]}"
    exit "${tests_status[1]}"
fi
