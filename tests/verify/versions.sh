# Sourced by run.sh: a job written for any Paddle version (--paddle-version)
# verifies equal against its input, whichever version wrote the input.  The
# era step gives the ops pdtrans makes that version's attrs (era.def):
# check_attrs defaults such as adam's multi_precision (2.0 on),
# fill_constant's str_value ("" from 1.7, str(float(value)) for 2.2's
# initializers) or a pserver copy without them (1.4-1.6).  None of these
# changes what an op computes, and verify job must not call such a job
# wrong (sym_attr_is_semantic).  Targets a mode did not exist for are
# refused by transpile (exit 2, checked by the goldens): skipped here by
# name; 1.4-1.5 async jobs with an LR schedule train at a frozen rate and
# are reported (run.sh's async_lr checks), so no LR case is swept.
for v in 1.4 1.5 1.6 1.7 1.8 2.0 2.1 2.2 2.3 2.4 2.5 3.0; do
    for spec in "basic transpile_basic" "adam transpile_adam" "momentum transpile_momentum" \
        "rmsprop transpile_rmsprop" "l2_clip transpile_l2_clip" "async transpile_async --async" \
        "table transpile_dist_table" "table_async transpile_dist_table_async --async" \
        "remote transpile_remote_prefetch" "dc_asgd transpile_dc_asgd --async --dc-asgd" \
        "geo paddle_version_geo --geo"; do
        # shellcheck disable=SC2086
        set -- $spec
        vj=v${v}_$1 vc=$2 # job() sets name and c
        shift 2
        case $vj in v1.[45]_remote | v1.[45]_geo) continue ;; esac
        job "$vj" "$vc" $P2 --trainers=2 --paddle-version=$v "$@" && equal "$vj"
    done
done
