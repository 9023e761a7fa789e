# Helpers for guest scenarios (sourced before each tests/guest/*.sh, inside the guest; the scenario's
# working directory is /results, which comes back to target/guest/out/SCENARIO/results/).

# fail REASON: end the scenario with a reason the host prints
fail() { echo "FAIL: $*"; exit 1; }

# step TEXT: a line in the scenario log, so a hang or failure shows how far it got
step() { echo "--- $*"; }

# need_dev PATH: fail unless the block device exists
need_dev() { [ -b "$1" ] || fail "no block device $1 (modules: $(cat /etc/modules.order | tr '\n' ' '))"; }

# rl ARGS: readlab with its output kept in /results/NAME.out when NAME= is set
rl() { readlab "$@"; }
