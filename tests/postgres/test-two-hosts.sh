#!/bin/sh
# test-two-hosts.sh QSTORE TEST-CONFORMANCE WITH-POSTGRES: a PostgreSQL
# store shared across hosts - three network namespaces on two veth pairs,
# the server in one, a writer in another, a read-only follower in the
# third. The follower reads beside the writer and sees every commit; a
# second writer, on the other host, is refused with QSTORE_ERROR_BUSY.
#
# Skipped, saying why, where network namespaces cannot be made (not root,
# or no `ip netns`).
set -eu

qstore=$1
holder=$2
with_postgres=$3

if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null ||
   ! ip netns add "qs-probe-$$" 2>/dev/null; then
  echo "1..0 # SKIP cannot make network namespaces here (needs root and ip netns)"
  exit 0
fi
ip netns del "qs-probe-$$"

srv=qs-srv-$$
a=qs-a-$$
b=qs-b-$$
cleanup () {
  status=$?
  for ns in "$srv" "$a" "$b"; do ip netns del "$ns" 2>/dev/null || true; done
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

for ns in "$srv" "$a" "$b"; do
  ip netns add "$ns"
  ip -n "$ns" link set lo up
done
# srv 10.231.1.1 - a 10.231.1.2, srv 10.231.2.1 - b 10.231.2.2
ip link add "qsa$$" netns "$srv" type veth peer name "qsa$$p" netns "$a"
ip link add "qsb$$" netns "$srv" type veth peer name "qsb$$p" netns "$b"
ip -n "$srv" addr add 10.231.1.1/24 dev "qsa$$"
ip -n "$a" addr add 10.231.1.2/24 dev "qsa$$p"
ip -n "$srv" addr add 10.231.2.1/24 dev "qsb$$"
ip -n "$b" addr add 10.231.2.2/24 dev "qsb$$p"
ip -n "$srv" link set "qsa$$" up
ip -n "$srv" link set "qsb$$" up
ip -n "$a" link set "qsa$$p" up
ip -n "$b" link set "qsb$$p" up

export QSTORE_TWO_HOSTS_A="$a" QSTORE_TWO_HOSTS_B="$b" QSTORE_TWO_HOSTS_QSTORE="$qstore" \
  QSTORE_TWO_HOSTS_HOLDER="$holder"
export QSTORE_TEST_POSTGRES_LISTEN='*' QSTORE_TEST_POSTGRES_TRUST_NET=10.231.0.0/16

# Everything below runs in the server's namespace, beside the server;
# the clients are started in theirs.
ip netns exec "$srv" "$with_postgres" sh -c '
set -u
a=$QSTORE_TWO_HOSTS_A
b=$QSTORE_TWO_HOSTS_B
qstore=$QSTORE_TWO_HOSTS_QSTORE
holder=$QSTORE_TWO_HOSTS_HOLDER
on_a="postgres:host=10.231.1.1 port=$PGPORT user=postgres dbname=postgres?schema=two-hosts"
on_b="postgres:host=10.231.2.1 port=$PGPORT user=postgres dbname=postgres?schema=two-hosts"
echo 1..4

# The writer, on host a, holds the location for three seconds.
fifo=$(mktemp -u)
mkfifo "$fifo"
ip netns exec "$a" "$holder" --hold-writer "$on_a" 3000 >"$fifo" &
pid=$!
read -r ready <"$fifo" || ready=
case "$ready" in
  ready*) echo "ok 1 - a writer on host a" ;;
  *) echo "not ok 1 - a writer on host a: $ready" ;;
esac

status=0
out=$(ip netns exec "$b" "$qstore" --store "$on_b" kv put main.t k2 v 2>&1) || status=$?
echo "# $out"
case "$status:$out" in
  0:*) echo "not ok 2 - a second writer on host b is refused: it wrote" ;;
  *"is open for writing by process"*) echo "ok 2 - a second writer on host b is refused" ;;
  *) echo "not ok 2 - a second writer on host b is refused: $out" ;;
esac

out=$(ip netns exec "$b" "$qstore" --store "$on_b" kv get main.t k 2>&1) || true
if [ "$out" = from-child ]; then
  echo "ok 3 - the follower on host b reads beside the writer"
else
  echo "not ok 3 - the follower on host b reads beside the writer: $out"
fi
wait "$pid" || true
rm -f "$fifo"

# Commits from host a, each read by the follower on host b right after.
missed=
for i in 1 2 3 4 5 6 7 8 9 10; do
  ip netns exec "$a" "$qstore" --store "$on_a" kv put main.t "n$i" "v$i" >/dev/null 2>&1 ||
    missed="$missed put-n$i"
  seen=$(ip netns exec "$b" "$qstore" --store "$on_b" kv get main.t "n$i" 2>&1) || true
  [ "$seen" = "v$i" ] || missed="$missed n$i:$seen"
done
if [ -z "$missed" ]; then
  echo "ok 4 - the follower on host b sees every commit of host a"
else
  echo "not ok 4 - the follower on host b sees every commit of host a:$missed"
fi
'
