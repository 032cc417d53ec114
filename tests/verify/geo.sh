# tests/verify/geo.sh - GEO-SGD jobs in `verify job` (sourced by run.sh,
# which defines job, equal, mutant, fail, $W, $G, $P2, $P3): the golden
# GEO transpiles verify equal, with the push abstraction (and a sparse
# table's own pserver init) named on stderr; mutants of the pserver's sum
# block, the trainer startup's recv, the trainer's GEO send and the
# manifest's vars_info are reported with the op named.
GD=transpile_geo_dense GS=transpile_geo_sparse
job geo $GD $P2 --trainers=2 --geo
job geo1 $GD $P2 --trainers=1 --geo=1
job geo_big $GD $P2 --trainers=2 --geo --min-block-size=1048576
job geo_three $GD $P3 --trainers=3 --trainer-id=2 --geo=5 --split-method=hash
# the sparse cases' inputs are not main.pbtxt: job() reads those names
geo_sparse() {
    name=$1 c=$2 in=$3; shift 3
    "$PDTRANS" transpile "$@" -s "$G/$c/in/$in.startup.pbtxt" "$G/$c/in/$in.pbtxt" \
        -o "$W/$name" >/dev/null 2>"$W/$name.err" || { fail "$name: transpile"; return 1; }
    echo "$G/$c/in/$in.pbtxt $G/$c/in/$in.startup.pbtxt" >"$W/$name.inputs"
}
geo_sparse geo_two $GS two $P2 --trainers=2 --geo
geo_sparse geo_sp3 $GS three $P3 --trainers=2 --trainer-id=1 --a-sync-k-steps=5
for j in geo geo1 geo_big geo_three geo_two geo_sp3; do
    equal $j
done
n=$((n + 1))
if grep -qF "GEO: each step ends in a push and pull (as if geo_push_nums, 100, were 1" "$W/err" ||
   ! grep -qF "a sparse table's rows start on each pserver as its own startup initialises them" \
       "$W/err"; then
    fail "geo_sp3: expected the push interval 5 and the sparse init named on stderr"; cat "$W/err"
else
    echo "ok: geo_sp3: the push abstraction and the sparse tables' init are named"
fi
# the pserver's block adds the wrong delta into fc_w.block1
mutant geo_sum_wrong geo "fc_w: differs at step 1 on pserver_0.pb (127.0.0.1:6174), slice 'fc_w.block1': last written by pserver_0.pb block 2 op 0 'sum'; " \
    pserver_0.pb set-input 2 0 X 1 fc_b.delta
# the pserver's block drops the delta: fc_b on the pservers never moves
mutant geo_delta_dropped geo "fc_b: differs at step 1 on pserver_0.pb (127.0.0.1:6174), slice 'fc_b': last written by pserver_0.pb block 1 op 0 'sum'; " \
    pserver_0.pb drop-input 1 0 X 1
# the trainer startup receives fc_w.block0 from the wrong pserver
mutant geo_recv_wrong_endpoint geo "trainer_0.startup.pb: block 0, op 4 'recv': receives 'fc_w.block0' from '127.0.0.1:6174', which never holds it" \
    trainer_0.startup.pb set-epmap 0 4 0 127.0.0.1:6174
# the GEO send lists the wrong ids for shared_w's rows
mutant geo_send_wrong_ids geo_two "shared_w: differs at step 1 on pserver_0.pb (127.0.0.1:6174), slice 'shared_w.block0': last written by pserver_0.pb block 2 op 0 'sum'; it is made by trainer_0.pb block 0 op 23 'send' = @geo_rows(scale(sum(..., ...), 0.5), brand_ids@t0.s1) where single-process training has @geo_rows(scale(sum(..., ...), 0.5), title_ids@t0.s1, brand_ids@t0.s1)" \
    trainer_0.pb set-input 0 23 X 0 brand_ids
# vars_info sends fc_w.block0's delta to the wrong pserver
n=$((n + 1))
rm -rf "$W/geo_ep"; cp -r "$W/geo" "$W/geo_ep"
sed 's|"epmap": \["127.0.0.1:6175", "127.0.0.1:6174"\]|"epmap": ["127.0.0.1:6174", "127.0.0.1:6174"]|' \
    "$W/geo/manifest.json" >"$W/geo_ep/manifest.json"
"$PDTRANS" verify job "$W/geo_ep" $(cat "$W/geo.inputs") >"$W/out" 2>&1
st=$?
want="fc_w: differs: trainer_0.pb block 0 op 13 'send' pushes by vars_info: 'fc_w.block0.delta' to 127.0.0.1:6174 (pserver_0.pb), but pserver_1.pb's listen_and_serv has the block for it"
if [ $st = 1 ] && grep -qF "$want" "$W/out"; then
    echo "ok: geo_vars_info_endpoint: $(grep -F "$want" "$W/out" | cut -c1-160)"
else fail "geo_vars_info_endpoint: expected '$want'"; cat "$W/out"; fi
# geo_manifest NAME WANT SED: geo's folder with its manifest.json edited by
# SED is bad input: exit 1, nothing on stdout and one line on stderr, WANT
geo_manifest() {
    name=$1 want=$2; n=$((n + 1))
    rm -rf "$W/$name"; cp -r "$W/geo" "$W/$name"
    sed "$3" "$W/geo/manifest.json" >"$W/$name/manifest.json"
    "$PDTRANS" verify job "$W/$name" $(cat "$W/geo.inputs") >"$W/out" 2>"$W/err"
    st=$?
    if [ $st = 1 ] && [ ! -s "$W/out" ] && [ "$(wc -l <"$W/err")" = 1 ] && grep -qF "$want" "$W/err"; then
        echo "ok: $name: $(cut -c1-160 "$W/err")"
    else fail "$name: expected status 1 and only '$want' (status $st)"; cat "$W/out" "$W/err"; fi
}
# sections past int64, alone or in their sum (a signed overflow in geo.c's
# sum, which printed "add up to -9223372036854775309 rows")
geo_manifest geo_section_huge "manifest.json: vars_info of 'fc_w': section 0 ('fc_w.block0', 99999999999999999999999) is not a row count int64 holds" \
    's|"sections": \["500", "500"\]|"sections": ["99999999999999999999999", "500"]|'
geo_manifest geo_sections_overflow "manifest.json: vars_info of 'fc_w': section 1 ('fc_w.block1', 9223372036854775000) makes the sections add up past int64" \
    's|"sections": \["500", "500"\]|"sections": ["9223372036854775000", "9223372036854775000"]|'
