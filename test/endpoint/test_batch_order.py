"""Batches over the same items, listed in different orders, do not deadlock.

BatchWriteItem and BatchExecuteStatement keep every item they write
locked until the request ends, so they write in the order of their tables
and keys, as TransactWriteItems does (README: Batches and transactions;
isolation specs batch-lock-order and pql-batch-order show each ordering
deterministically).  Here two writer threads (the suite runs two HTTP
workers), each its own boto3 client with a fixed seed, send batches over
the same twelve items of one partition, each batch in a random order:
BatchWriteItem with puts of new and existing keys and deletes,
BatchExecuteStatement with UPDATE, DELETE and INSERT.  Every request must
succeed: a deadlock, or a lock wait cut short, would be a
TransactionConflictException (or another error) for one of them.  Per
statement errors inside a BatchExecuteStatement's Responses (an UPDATE of
a deleted item, an INSERT of a live one) are the statements' own and are
allowed.  At the end the table must hold each key at most once and pass
ddb_verify.

Before the batches wrote in key order (BatchWriteItem's puts of new keys
went first, BatchExecuteStatement ran in request order), this workload
deadlocked within its first requests.
"""
import random
import threading
from collections import Counter

import botocore.exceptions

from conftest import client, create_table, psql

KEYS = 12
PER_BATCH = 8
ITERATIONS = 150      # per writer
SEEDS = [5, 17]       # one per writer: a fixed workload


def batch_write(rng, w):
    reqs = []
    for k in rng.sample(range(KEYS), PER_BATCH):
        if rng.random() < 0.7:
            reqs.append({"PutRequest": {"Item": {"p": {"S": "a"}, "s": {"N": str(k)},
                                                 "v": {"S": f"w{w}"}}}})
        else:
            reqs.append({"DeleteRequest": {"Key": {"p": {"S": "a"}, "s": {"N": str(k)}}}})
    return reqs


def batch_statements(rng, table, w):
    sts = []
    for k in rng.sample(range(KEYS), PER_BATCH):
        r = rng.random()
        if r < 0.6:
            sts.append({"Statement": f'UPDATE "{table}" SET v = ? WHERE p = \'a\' AND s = ?',
                        "Parameters": [{"S": f"w{w}"}, {"N": str(k)}]})
        elif r < 0.8:
            sts.append({"Statement": f'DELETE FROM "{table}" WHERE p = \'a\' AND s = ?',
                        "Parameters": [{"N": str(k)}]})
        else:
            sts.append({"Statement": f"INSERT INTO \"{table}\" VALUE {{'p': 'a', 's': ?, 'v': 'i'}}",
                        "Parameters": [{"N": str(k)}]})
    return sts


def test_batches_in_any_order_do_not_deadlock(ddb, table_name):
    create_table(ddb, table_name, pk="p", sk="s", sk_type="N")
    ddb.batch_write_item(RequestItems={table_name: [
        {"PutRequest": {"Item": {"p": {"S": "a"}, "s": {"N": str(k)}}}} for k in range(KEYS)]})
    stats = Counter()
    failures = []
    lock = threading.Lock()

    def writer(w):
        rng = random.Random(SEEDS[w])
        c = client()
        for _ in range(ITERATIONS):
            try:
                if rng.random() < 0.5:
                    r = c.batch_write_item(RequestItems={table_name: batch_write(rng, w)})
                    assert r["UnprocessedItems"] == {}
                    kind = "BatchWriteItem"
                else:
                    r = c.batch_execute_statement(Statements=batch_statements(rng, table_name, w))
                    kind = "BatchExecuteStatement"
                    for resp in r["Responses"]:
                        code = resp.get("Error", {}).get("Code")
                        if code not in (None, "ConditionalCheckFailed", "DuplicateItem"):
                            with lock:
                                failures.append(f"statement error {resp['Error']}")
                with lock:
                    stats[kind] += 1
            except botocore.exceptions.ClientError as e:
                with lock:
                    failures.append(f"{e.response['Error']['Code']}: {e.response['Error'].get('Message')}")

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(len(SEEDS))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert failures == [], f"{len(failures)} failed requests, first: {failures[:3]}"
    assert sum(stats.values()) == ITERATIONS * len(SEEDS)
    rows = psql(f'SELECT count(*), count(DISTINCT "s") FROM "{table_name}"').split("|")
    assert rows[0] == rows[1]
    ok = psql(f"SELECT ddb_verify('{table_name}'::regclass) IS NOT NULL")
    assert ok == "t"
