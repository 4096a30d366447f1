#!/usr/bin/env bash
# The fault and signal tests, 5 times in a row on an idle machine, then 5 times with two
# CPU-bound processes beside them (started here, stopped by their PIDs): they wait for the
# run (test hooks), never the clock, so all 10 rounds pass. Usage, from the repository:
#   tests/repeat_fault_tests.sh [ROUNDS] [PYTEST ARGS...]     (default: 5 rounds; -m slow too:
#   tests/repeat_fault_tests.sh 5 -m '')
# Exit status: 0 when every round passed.
set -u
cd "$(dirname "$0")/.."
rounds=${1:-5}
shift || true
py=${PYTHON:-.venv/bin/python}
[ -x "$py" ] || py=python
tests=(tests/test_faults.py tests/test_failures.py tests/test_failure_messages.py
       tests/test_progress.py tests/test_store_faults.py
       tests/test_split_runner.py::test_a_cancelled_compiled_subtree_task_stops_at_once
       tests/test_split_runner.py::test_a_task_cancelled_while_it_imports_the_kernels_leaves_its_worker_whole)
hogs=()
current=
stop_hogs() {
    for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
    hogs=()
}
# stopped itself: the round's pytest gets a Ctrl-C (its tests clean up their runs), then
# the CPU-bound processes go
trap stop_hogs EXIT
trap '[ -n "$current" ] && kill -INT "$current" 2>/dev/null && wait "$current"; exit 143' TERM INT
failed=0
run_rounds() {  # $label: idle or loaded; "$@": more pytest arguments
    local passed=0
    for i in $(seq 1 "$rounds"); do
        local t0=$SECONDS
        "$py" -m pytest -q -p no:cacheprovider "${tests[@]}" "$@" > "/tmp/repeat_fault_tests.$$.log" 2>&1 &
        current=$!
        if wait "$current"; then
            passed=$((passed + 1)); echo "$label round $i: passed ($((SECONDS - t0)) s)"
        else
            failed=1; echo "$label round $i: FAILED ($((SECONDS - t0)) s):"
            grep -E "^(FAILED|ERROR)|passed|failed" "/tmp/repeat_fault_tests.$$.log" | tail -20
            cp "/tmp/repeat_fault_tests.$$.log" "/tmp/repeat_fault_tests.$label-$i.log"
            echo "  (whole output: /tmp/repeat_fault_tests.$label-$i.log)"
        fi
    done
    echo "$label: $passed of $rounds rounds passed (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
}
label=idle run_rounds "$@"
for _ in 1 2; do
    "$py" -c 'while True: pass' &
    hogs+=($!)
done
echo "loaded: CPU-bound processes ${hogs[*]} started"
label=loaded run_rounds "$@"
stop_hogs
rm -f "/tmp/repeat_fault_tests.$$.log"
exit $failed
