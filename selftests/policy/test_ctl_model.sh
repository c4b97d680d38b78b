#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The control plane against a model (issue 50): TOE_MODEL_STEPS random
# steps (20; seed TOE_MODEL_SEED, random unless given, always printed) of
# policy applies (every statement; rules naming 1-3 namespaces with the
# matching one anywhere in the list, ports at either end of a range or
# inside it, every spelling; through toectl reload, SIGHUP or toed --apply
# from another process), connections and listeners opened and closed in
# toed's namespace and two tenants', refusals made one past the limit and
# then given back, each reason in turn (capacity, a tenant's slots, its
# records, nodev, toe_listeners full, its share of the event ring),
# applies that must be refused (a bad statement: the policy in force
# stays) and datapath reloads (failing at a change: TOE_LOADER_FAIL_AT, or
# not).  After each step the driver (ctl_model.py, which also makes every
# socket) compares what the maps hold with what its model computes: the
# policy generation's header, rules, tuples, cells and port classes,
# toe_devs, every socket's record, toe_listeners, toe_dev_live,
# toe_tenants, toe_stats' and toe_reasons' deltas, and toectl's policy,
# flows and stats.  Five checks a step; a failure prints the replay
# command.  make model-ctl runs 400 steps.
. "$(dirname "$0")/../toed/setup.sh"
STEPS=${TOE_MODEL_STEPS:-20}
SEED=${TOE_MODEL_SEED:-$((RANDOM * 32768 + RANDOM))}
echo "seed $SEED, $STEPS steps: TOE_MODEL_SEED=$SEED TOE_MODEL_STEPS=$STEPS bash selftests/run.sh selftests/policy/test_ctl_model.sh"
plan $((1 + 5 * STEPS + 1))
ns_add c || exit 1
for n in a b c; do
	nsx $n ip addr add 10.77.0.1/32 dev lo
	nsx $n ip addr add 10.77.0.2/32 dev lo
	nsx $n ip addr add fd77::1/128 dev lo nodad
	nsx $n ip addr add fd77::2/128 dev lo nodad
done
mkdir "$CG/decoy" && defer "cg_del $CG/decoy"
defer "nsx a toe-loader unload --pin-dir $PIN; rm -rf $PIN"
LOAD="--flows 1024"
nsx a toe-loader load --cgroup "$CG" --pin-dir "$PIN" $LOAD >/dev/null || { echo "not ok - load"; exit 1; }
cfg=$(printf 'default host\n' | conf model)
start_toed "$cfg" || { cat "$TOED_LOG"; echo "not ok - toed starts"; exit 1; }
# the driver in the test cgroup (its sockets are sock_ops'), killed with it
# (waited for in the background: a signal to the test ends it at once)
(echo $BASHPID >"$CG/cgroup.procs" && exec python3 "$TOE_TOP/selftests/policy/ctl_model.py" \
	--seed "$SEED" --steps "$STEPS" --pin "$PIN" --run "$RUN" --conf "$cfg" --cg "$CG" \
	--ns "$(ns_name a),$(ns_name b),$(ns_name c)" --names "$TOE_BUILD/toe_names.sh" --load "$LOAD" \
	--log "$TOED_LOG" --toed-pid "$TOED_PID") &
wait $!
rc=$?
[ $rc = 0 ] || { echo "toed's log:"; tail -n 20 "$TOED_LOG"; }
exit $rc
