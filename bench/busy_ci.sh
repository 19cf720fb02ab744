#!/usr/bin/env bash
# .ci/run on a busy machine (issue 31): two busy-loop processes share the cores with the test suite,
# as on a loaded 2-core developer machine; prints how long CI took and its exit status. The busy
# loops are stopped however the script ends (normal exit, failure, Ctrl-C, SIGTERM).
#
#   bench/busy_ci.sh            # the whole of .ci/run (fresh venv, the README's test line)
#   BUSY=3 bench/busy_ci.sh     # another number of busy loops
#   bench/busy_ci.sh CMD ARGS   # time CMD instead of .ci/run beside the busy loops
set -uo pipefail
cd "$(dirname "$0")/.."

busy=${BUSY:-2}
pids=()
job=
set -m  # each background job in its own process group: the command's children can be stopped with it
stop_all() {
  [ -n "$job" ] && kill -TERM -- "-$job" 2>/dev/null
  for pid in "${pids[@]}"; do
    kill -- "-$pid" 2>/dev/null
  done
  wait 2>/dev/null
  pids=()
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for _ in $(seq "$busy"); do
  bash -c 'while :; do :; done' &
  pids+=("$!")
done
echo "busy loops: ${pids[*]}" >&2

command=("$@")
[ ${#command[@]} -eq 0 ] && command=(.ci/run)
start=$(date +%s)
"${command[@]}" &  # waited for in the background, so a signal reaches the traps at once
job=$!
wait "$job"
status=$?
job=
elapsed=$(( $(date +%s) - start ))
printf '%s beside %d busy loops: exit %d in %d min %02d s\n' "${command[*]}" "$busy" "$status" \
  $((elapsed / 60)) $((elapsed % 60))
exit "$status"
