# Shared by the bench scripts: best_of N CMD... prints the best wall-clock
# seconds of N runs; ratio A B prints A/B with two decimals.
best_of() {
    n=$1
    shift
    b=""
    i=0
    while [ "$i" -lt "$n" ]; do
        i=$((i + 1))
        s=$(date +%s.%N)
        "$@" >/dev/null
        e=$(date +%s.%N)
        t=$(echo "$e - $s" | bc -l)
        if [ -z "$b" ] || [ "$(echo "$t < $b" | bc -l)" = 1 ]; then b=$t; fi
    done
    echo "$b"
}
ratio() { echo "scale=2; $1 / $2" | bc -l; }
