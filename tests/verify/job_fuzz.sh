# tests/verify/job_fuzz.sh - `verify job` on corrupt input (sourced by
# run.sh after geo.sh, whose geo_manifest and $W/geo it uses): manifest
# fields of the wrong type or range are refused by name, a pserver whose
# listen_and_serv runs another mode than the manifest's is refused, and
# fuzz_job.py's quick run (FUZZ_JOB_CASES, default 100, seed 1: the same
# cases on every machine; `make fuzz-job` runs more) finds nothing.
geo_manifest manifest_file_not_object "manifest.json: the manifest's files[1] is not an object" \
    's|{"role": "trainer", "trainer_id": 1, "main": "trainer_1.pb", "startup": "trainer_1.startup.pb"}|"../x"|'
geo_manifest manifest_trainer_id_string "manifest.json: the manifest's files[0] has no trainer_id from 0 to 100000" \
    's|"trainer_id": 0, "main"|"trainer_id": "0", "main"|'
geo_manifest manifest_file_twice "manifest.json: the manifest's files[1] lists the same role and number as an earlier entry" \
    's|"trainer_id": 1, "main"|"trainer_id": 0, "main"|'
geo_manifest manifest_role_unknown "manifest.json: the manifest's files[0] has a role other than trainer and pserver ('False')" \
    's|"role": "trainer", "trainer_id": 0|"role": "False", "trainer_id": 0|'
geo_manifest manifest_trainers_float "manifest.json: the manifest's flags.trainers is neither a trainer count from 1 to 100000 nor a list of trainer endpoints" \
    's|"trainers": 2,|"trainers": 1.5,|'
geo_manifest manifest_push_nums_zero "manifest.json: the manifest's flags.geo_push_nums is not a push interval from 1 to 2147483647" \
    's|"geo_push_nums": 100|"geo_push_nums": 0|'
geo_manifest manifest_mode_number "manifest.json: the manifest's distributed_mode is not 0, 1, 2 or 3" \
    's|"distributed_mode": 3|"distributed_mode": "3"|'
# a pserver's listen_and_serv in another mode than the job's (it was never
# read: a sync pserver in a GEO job, an async one in a sync job verified equal)
mutant geo_listen_sync geo "pserver_1.pb: block 0, op 0 'listen_and_serv': runs distributed_mode 0, but the manifest's job is distributed_mode 3" \
    pserver_1.pb set-attr 0 0 distributed_mode i 0
mutant listen_async basic "pserver_0.pb: block 0, op 0 'listen_and_serv': runs distributed_mode 2, but the manifest's job is distributed_mode 0" \
    pserver_0.pb set-attr 0 0 distributed_mode i 2

# the quick fuzz run: every finding is printed with its case number
n=$((n + 1))
if python3 "$HERE/fuzz_job.py" "$PDTRANS" --seed 1 --cases "${FUZZ_JOB_CASES:-100}" >"$W/fuzz" 2>&1; then
    echo "ok: $(tail -1 "$W/fuzz")"
else fail "fuzz_job.py --seed 1: $(tail -1 "$W/fuzz")"; cat "$W/fuzz"; fi
# the adam of a remote table's slice writes its Moment2Out over the grad
# (fuzz_job.py seed 4 case 14: the concat of the pservers' slices read a
# term's args that pointed into freed memory, ASan heap-use-after-free in
# term.c's pull_rowwise; now a difference)
mutant remote_moment_over_grad remote_async "shared_w: differs at step 1 on trainer 0: the pservers' 2 slices of 'shared_w' put together differ: 'shared_w.block1' on pserver_1.pb (rows 500 to 1000): pserver_1.pb block 3 op 0 'adam' reads 'shared_w_moment2_0'" \
    pserver_1.pb set-output 3 0 Moment2Out 0 'shared_w@GRAD.block1'
