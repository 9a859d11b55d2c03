"""Concurrent transfers through the endpoint: the "bank" workload, CI-sized.

Twenty accounts of 100 each.  Four writer threads (each its own boto3
client, each its own random.Random with a fixed seed) move money with
TransactWriteItems -- Update the source with ConditionExpression
bal >= :a, Update the destination -- some of them with a ClientRequestToken
sent twice in a row, which must apply once.  Two reader threads take
TransactGetItems snapshots of all twenty accounts (one call, one
snapshot) while the writers run: every snapshot must total 2000 with no
balance below zero.  TransactionCanceledException (the condition failed,
or a conflict) and TransactionConflictException are allowed and counted;
any other error fails the test.  At the end the balances must be the
initial ones plus exactly the transfers that reported success, each token
once.

The oracle (Bank) is exercised on planted violations too, so a checker
that accepts everything cannot pass silently.
"""
import random
import threading
import time
import uuid
from collections import Counter

import botocore.exceptions
import pytest

from conftest import client

N_ACCOUNTS = 20
INIT = 100
WRITERS = 4
READERS = 2
ITERATIONS = 400          # per writer
TOKEN_SHARE = 0.3         # of the transfers, sent with a token, twice
SEEDS = [11, 23, 37, 41]  # one per writer: a fixed workload


def acct(i):
    return "A%02d" % i


class Bank:
    """The oracle: what every snapshot and the final state must satisfy."""

    def __init__(self, n=N_ACCOUNTS, init=INIT):
        self.initial = {acct(i): init for i in range(n)}
        self.total = n * init
        self.violations = []
        self.lock = threading.Lock()

    def violate(self, msg):
        with self.lock:
            self.violations.append(msg)

    def check_snapshot(self, bals, how):
        """bals: {account: balance} read in one snapshot."""
        if set(bals) != set(self.initial):
            self.violate(f"{how}: accounts {sorted(bals)} != {sorted(self.initial)}")
        tot = sum(bals.values())
        if tot != self.total:
            self.violate(f"{how}: total {tot} != {self.total} ({bals})")
        neg = {k: v for k, v in bals.items() if v < 0}
        if neg:
            self.violate(f"{how}: negative balances {neg}")

    def check_final(self, bals, transfers):
        """transfers: the (src, dst, amount) that reported success, each
        token once."""
        self.check_snapshot(bals, "final")
        exp = dict(self.initial)
        for s, d, a in transfers:
            exp[s] -= a
            exp[d] += a
        for k in sorted(exp):
            if bals.get(k) != exp[k]:
                self.violate(f"final balance of {k}: {bals.get(k)}, expected {exp[k]}")


def transfer(table, src, dst, amt):
    a = {":a": {"N": str(amt)}}
    return [
        {"Update": {"TableName": table, "Key": {"acct": {"S": src}},
                    "UpdateExpression": "SET bal = bal - :a",
                    "ConditionExpression": "bal >= :a",
                    "ExpressionAttributeValues": a}},
        {"Update": {"TableName": table, "Key": {"acct": {"S": dst}},
                    "UpdateExpression": "SET bal = bal + :a",
                    "ConditionExpression": "attribute_exists(acct)",
                    "ExpressionAttributeValues": a}}]


def outcome(e):
    """The counted name of an allowed error; None for any other."""
    err = e.response.get("Error", {})
    code = err.get("Code")
    if code == "TransactionConflictException":
        return "conflict"
    if code == "TransactionCanceledException":
        reasons = {r.get("Code") for r in e.response.get("CancellationReasons", [])} - {"None", None}
        if reasons == {"ConditionalCheckFailed"}:
            return "cancelled_condition"
        if reasons and reasons <= {"ConditionalCheckFailed", "TransactionConflict"}:
            return "cancelled_conflict"
    return None


def snapshot(c, table):
    r = c.transact_get_items(TransactItems=[
        {"Get": {"TableName": table, "Key": {"acct": {"S": acct(i)}}}} for i in range(N_ACCOUNTS)])
    return {x["Item"]["acct"]["S"]: int(x["Item"]["bal"]["N"]) for x in r["Responses"] if "Item" in x}


@pytest.fixture
def bank_table(ddb, table_name):
    ddb.create_table(TableName=table_name, BillingMode="PAY_PER_REQUEST",
                     KeySchema=[{"AttributeName": "acct", "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": "acct", "AttributeType": "S"}])
    for i in range(N_ACCOUNTS):
        ddb.put_item(TableName=table_name, Item={"acct": {"S": acct(i)}, "bal": {"N": str(INIT)}})
    yield table_name
    # a new client: ddb's connection has been idle for the whole run, about
    # the endpoint's idle timeout here (5 s), and a request sent on it as
    # the server closes it fails with ConnectionClosedError (no retries)
    client().delete_table(TableName=table_name)


def test_bank_transfers_keep_the_total(bank_table):
    table = bank_table
    bank = Bank()
    stats = Counter()
    applied = []               # (src, dst, amt) that reported success
    lock = threading.Lock()
    done = threading.Event()

    def count(k):
        with lock:
            stats[k] += 1

    def call(c, items, token=None):
        """'ok' or the allowed outcome's name; anything else is a violation."""
        kw = {"ClientRequestToken": token} if token else {}
        try:
            c.transact_write_items(TransactItems=items, **kw)
            return "ok"
        except botocore.exceptions.ClientError as e:
            o = outcome(e)
            if o is None:
                bank.violate(f"transfer: {e.response.get('Error')} {e.response.get('CancellationReasons')}")
                return "error"
            return o

    def writer(w):
        rng = random.Random(SEEDS[w])
        c = client()
        try:
            for it in range(ITERATIONS):
                s, d = rng.sample(range(N_ACCOUNTS), 2)
                src, dst, amt = acct(s), acct(d), rng.randint(1, 60)
                items = transfer(table, src, dst, amt)
                if rng.random() < TOKEN_SHARE:
                    token = f"bank-{w}-{it}-{uuid.UUID(int=rng.getrandbits(128)).hex[:16]}"
                    first = call(c, items, token)
                    second = call(c, items, token)
                    count("token_first_" + first)
                    count("token_second_" + second)
                    if first == "ok" and second == "cancelled_condition":
                        # a replay of a committed request is answered, not re-run
                        bank.violate(f"token {token}: replay after success was re-evaluated")
                    if "ok" in (first, second):
                        with lock:
                            applied.append((src, dst, amt))
                else:
                    o = call(c, items)
                    count("plain_" + o)
                    if o == "ok":
                        with lock:
                            applied.append((src, dst, amt))
        except Exception as e:      # a transport failure, say: not allowed
            bank.violate(f"writer {w}: {e!r}")

    def reader(r):
        c = client()
        while not done.is_set():
            try:
                bank.check_snapshot(snapshot(c, table), f"reader {r} snapshot")
                count("snapshot_ok")
            except botocore.exceptions.ClientError as e:
                if e.response.get("Error", {}).get("Code") in ("TransactionConflictException",
                                                               "TransactionCanceledException"):
                    count("snapshot_conflict")
                else:
                    bank.violate(f"reader {r}: {e.response.get('Error')}")
            except Exception as e:
                bank.violate(f"reader {r}: {e!r}")
                return

    t0 = time.time()
    writers = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
    readers = [threading.Thread(target=reader, args=(r,)) for r in range(READERS)]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join(timeout=120)
    done.set()
    for t in readers:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in writers + readers), "a thread did not finish"
    elapsed = time.time() - t0

    bank.check_final(snapshot(client(), table), applied)
    print(f"bank: {elapsed:.1f}s, {len(applied)} transfers applied, outcomes {dict(sorted(stats.items()))}")
    assert bank.violations == [], "\n".join(bank.violations[:20])
    # the workload did what it is for: transfers landed, some were refused,
    # tokens were replayed, and readers looked while writers wrote
    assert stats["plain_ok"] > 0 and stats["token_first_ok"] > 0
    assert stats["plain_cancelled_condition"] + stats["token_first_cancelled_condition"] > 0
    assert stats["snapshot_ok"] >= READERS


def test_bank_oracle_reports_planted_violations():
    """The checker is not vacuous: a snapshot off by one, a negative
    balance, a missing account, and a final state that does not match the
    reported transfers are all reported."""
    bank = Bank()
    good = dict(bank.initial)
    bank.check_snapshot(good, "good")
    assert bank.violations == []

    off = dict(good, A03=good["A03"] + 1)
    bank.check_snapshot(off, "off by one")
    assert len(bank.violations) == 1 and "total 2001 != 2000" in bank.violations[0]

    bank = Bank()
    neg = dict(good, A00=-5, A01=good["A01"] + 105)
    bank.check_snapshot(neg, "negative")
    assert len(bank.violations) == 1 and "negative balances {'A00': -5}" in bank.violations[0]

    bank = Bank()
    missing = dict(good)
    del missing["A19"]
    bank.check_snapshot(missing, "missing")
    assert any("accounts" in v for v in bank.violations)

    # final: a transfer applied that was not reported (or applied twice)
    bank = Bank()
    moved = dict(good, A01=good["A01"] - 7, A02=good["A02"] + 7)
    bank.check_final(moved, [("A01", "A02", 7)])
    assert bank.violations == []
    bank.check_final(moved, [])
    assert len(bank.violations) == 2 and all("final balance" in v for v in bank.violations)
    bank = Bank()
    bank.check_final(moved, [("A01", "A02", 7), ("A01", "A02", 7)])
    assert len(bank.violations) == 2
