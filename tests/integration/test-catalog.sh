#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The journal catalog as journalctl reads it, never the host's database:
#   test-catalog.sh database CATALOG LOG_H
#     journalctl --root=DIR --update-catalog builds DIR's database from
#     DIR/usr/lib/systemd/catalog (as systemd's dpkg trigger does on the
#     host); --list-catalog and --dump-catalog show every MESSAGE_ID of
#     log.h with its entry.
#   test-catalog.sh explain CATALOG FRIDGED
#     journalctl -x under the real fridged's entry: in a private mount
#     namespace, a journald of a namespace of its own on tmpfs receives
#     what `fridged --thaw-all` logs, and the private database (bound over
#     /var/lib/systemd in that namespace only) explains it, with the
#     entry's FRIDGE_THAWED filled in.
set -eu

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

command -v journalctl >/dev/null || skip "journalctl is not installed"
mode=$1 catalog=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/usr/lib/systemd/catalog"
cp "$catalog" "$dir/usr/lib/systemd/catalog/fridge.catalog"
journalctl --root="$dir" --update-catalog || fail "journalctl --update-catalog"
[ -s "$dir/var/lib/systemd/catalog/database" ] || fail "no database in $dir/var/lib/systemd/catalog"

database() {
        local log_h=$1 ids n=0
        ids=$(sed -n 's/^#define FRIDGE_MESSAGE_[A-Z_]* *"\([0-9a-f]\{32\}\)"$/\1/p' "$log_h")
        [ -n "$ids" ] || fail "no MESSAGE_ID in $log_h"
        list=$(journalctl --root="$dir" --list-catalog)
        for id in $ids; do
                echo "$list" | grep -q "^$id fridge: " || fail "--list-catalog lacks $id:
$list"
                entry=$(journalctl --root="$dir" --dump-catalog "$id")
                echo "$entry" | grep -q "^Defined-By: fridge$" || fail "--dump-catalog $id: $entry"
                echo "$entry" | grep -q "^Subject: ." || fail "--dump-catalog $id has no Subject: $entry"
                n=$((n + 1))
        done
        [ "$(echo "$list" | wc -l)" -eq "$n" ] || fail "the catalog has entries log.h does not:
$list"
        echo "$n entries in the database, each with its Subject"
}

# Runs in the private mount namespace: nothing mounted here is seen outside
explain_inside() {
        local fridged=$1 ns=fridgetest$$
        mount -t tmpfs tmpfs /run/systemd
        mount -t tmpfs tmpfs /var/log/journal 2>/dev/null || mount -t tmpfs tmpfs /var/log
        mount --bind "$dir/var/lib/systemd" /var/lib/systemd
        /lib/systemd/systemd-journald "$ns" &
        local journald=$!
        # journald makes its sockets itself; wait for them (bounded)
        for _ in $(seq 600); do
                [ -S "/run/systemd/journal.$ns/socket" ] && break
                kill -0 "$journald" 2>/dev/null || fail "systemd-journald $ns exited"
                sleep 0.05
        done
        [ -S "/run/systemd/journal.$ns/socket" ] || fail "systemd-journald $ns made no socket"
        # sd_journal_send's fixed path leads to this journald
        ln -s "journal.$ns" /run/systemd/journal
        mkdir "$dir/cgroup"
        INVOCATION_ID=0123456789abcdef0123456789abcdef "$fridged" --thaw-all --state-dir="$dir/state" \
                --cgroup-root="$dir/cgroup" --sysfs-root="$dir" --proc-root=/proc \
                || fail "fridged --thaw-all failed"
        journalctl --namespace="$ns" --sync || fail "journalctl --sync"
        out=$(journalctl --namespace="$ns" -x -o short MESSAGE_ID=4a5b2e0a8f0d4c31a1c9e2f6b7d80105)
        kill "$journald"
        wait "$journald" || true
        echo "$out"
        echo "$out" | grep -q "Thawed 0 cgroups from the ledger" || fail "fridged's entry is not in the journal"
        echo "$out" | grep -q "Subject: Frozen cgroups left by an earlier fridged were thawed" \
                || fail "journalctl -x shows no Subject"
        echo "$out" | grep -q "fridged thawed 0 cgroups that its ledger" || fail "@FRIDGE_THAWED@ was not filled in"
}

explain() {
        local fridged=$1
        [ "$(id -u)" -eq 0 ] || skip "needs root for a private mount namespace and journald"
        [ -x /lib/systemd/systemd-journald ] || skip "no /lib/systemd/systemd-journald"
        unshare -m --propagation private true 2>/dev/null || skip "cannot make a private mount namespace"
        export dir
        export -f explain_inside fail
        unshare -m --propagation private bash -c 'set -eu; explain_inside "$1"' _ "$fridged"
}

case $mode in
database) database "$3" ;;
explain) explain "$3" ;;
*) fail "unknown mode $mode" ;;
esac
