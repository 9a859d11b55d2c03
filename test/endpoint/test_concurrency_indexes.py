"""Concurrent writes through the endpoint against a table's indexes and
stream: a CI-sized consistency workload with an oracle.

The table (p, s) has a sparse GSI ByG (gp, gs; INCLUDE x, w), a sparse
hash-only GSI ByH (h; KEYS_ONLY), an LSI ByL (p, l; INCLUDE w) and a
NEW_AND_OLD_IMAGES stream.  Three writer threads (each its own client and
its own random.Random with a fixed seed) run a fixed number of PutItem,
UpdateItem, DeleteItem, TransactWriteItems and BatchWriteItem requests over
6 x 4 keys, with conditions that fail on purpose (attribute_exists,
attribute_not_exists, gp = :cv, w = :cv with a w that may be stale) and a
few writes of a wrong-typed or empty index key, which must be refused with
ValidationException (in a transaction: its ValidationError, or a condition
that failed first) and write nothing.  Every put and update sets w to a
tag of its own, so each item version names the request that wrote it.
The client records what each request did and when (monotonic time before
sending, after the answer); a 200 means it committed, an error means it
did not.

Two reader threads meanwhile Query the GSIs (one partition value, whole),
Query the LSI (ConsistentRead, sometimes Select ALL_ATTRIBUTES, which reads
the unprojected attributes from the table), GetItem and Scan with
ConsistentRead, and Scan an index; a stream thread tails all four shards; a
maintenance thread VACUUMs the table and its index tables and runs
ddb_verify_gsi (over SQL, as the superuser); a DDL thread creates a GSI
ByZ (h, x; ALL) with UpdateTable, which backfills it while writes wait,
Queries it, drops it, and again, and leaves it for the final checks.
Condition failures return the item (ReturnValuesOnConditionCheckFailure
ALL_OLD), which counts as a read.

The invariant checked for every read: each key's answer (its item, its
index entry, or nothing) is what some version of the item that may have
been current during the read shows -- a version whose write started before
the read ended and that no write which ended before the read started had
replaced.  So a read never returns a version of a failed write, a mix of
two versions, an index entry whose projection differs from its item's, an
entry replaced before the read began (stale), and never leaves out an item
that was certainly in the queried partition throughout.  For reads with
ConsistentRead (of the table or the LSI) this is DynamoDB's guarantee too;
for the GSIs and the reads without it, it is ddb's: every read is strongly
consistent and the indexes are maintained in the writing transaction
(README, "Global secondary indexes: Strongly consistent").  DynamoDB's GSIs
are eventually consistent and would only promise the first half: an entry
is the projection of a committed version, possibly an old one.  Each
answer must also have the index's shape: the partition value asked for,
exactly the projected attributes, in index order, on one page.

At the end: the stream, read again from TRIM_HORIZON over every shard,
equals what the tailing reader saw; each item's records replay as a chain
(INSERT from nothing, MODIFY and REMOVE with OldImage equal to the previous
NewImage) to exactly the final Scan; every successful put and update is
one record whose NewImage is the item put, or the update applied to the
OldImage, whose OldImage satisfied the request's condition and matches the
request's ReturnValues; every DeleteItem that returned the old item has
its REMOVE; no record carries a failed request's tag, and REMOVEs that no
DeleteItem accounts for are no more than the successful batch and
transaction deletes of the key; each key's records lie in one shard, in
increasing sequence numbers, in an order real time allows.  Each index
equals exactly what a Scan of the table projects, and ddb_verify_gsi is
clean.

The oracle is exercised on planted violations too, against a sequential
model of the server, so a checker that accepts everything cannot pass.
"""
import json
import random
import threading
import time
from collections import Counter, defaultdict

import boto3
import botocore.config
import botocore.exceptions
import pytest

from conftest import ENDPOINT, KEY_ID, REGION, SECRET, client, psql

NP, NS = 6, 4
KEYS = [("P%d" % p, "S%d" % s) for p in range(NP) for s in range(NS)]
WRITERS = 3
READERS = 2
ITERATIONS = 800              # requests per writer
SEEDS = [101, 202, 303]       # writers
READER_SEEDS = [7, 8]
INVALID_SHARE = 0.03          # writes with a wrong-typed or empty index key

# index: (partition key, sort key or None, included non-key attributes or
# None for ALL); ByZ is created and dropped while the writers run
INDEXES = {
    "ByG": ("gp", "gs", ("x", "w")),
    "ByH": ("h", None, ()),
    "ByL": ("p", "l", ("w",)),
    "ByZ": ("h", "x", None),
}
STATIC = ("ByG", "ByH", "ByL")
GSIS = ("ByG", "ByH")
INF = float("inf")


def S(v):
    return {"S": v}


def N(v):
    return {"N": str(v)}


def tkey(k):
    return {"p": S(k[0]), "s": S(k[1])}


def key_of(item):
    return (item["p"]["S"], item["s"]["S"])


def tag_of(item):
    return item["w"]["S"] if item is not None and "w" in item else None


def proj(ix, item):
    """The entry of item in index ix (None: the item has none)."""
    pk, sk, include = INDEXES[ix]
    if item is None or pk not in item or (sk and sk not in item):
        return None
    if include is None:
        return dict(item)
    names = {"p", "s", pk} | ({sk} if sk else set()) | set(include)
    return {a: v for a, v in item.items() if a in names}


def order_key(ix, item):
    pk, sk, _ = INDEXES[ix]
    k = key_of(item)
    if sk is None:
        return k
    return (int(item[sk]["N"]), k)


def cond_holds(cond, item):
    """cond: None, ("exists",), ("not_exists",) or ("eq", attr, typed)."""
    if cond is None:
        return True
    if cond[0] == "exists":
        return item is not None
    if cond[0] == "not_exists":
        return item is None
    return item is not None and item.get(cond[1]) == cond[2]


def cond_args(cond):
    if cond is None:
        return {}
    if cond[0] == "exists":
        return {"ConditionExpression": "attribute_exists(p)"}
    if cond[0] == "not_exists":
        return {"ConditionExpression": "attribute_not_exists(p)"}
    return {"ConditionExpression": "%s = :cv" % cond[1], "ExpressionAttributeValues": {":cv": cond[2]}}


def apply_update(ops, old, k):
    """UpdateItem's result: ops are ("set", a, v), ("remove", a), ("inc", a)."""
    new = dict(old) if old is not None else tkey(k)
    for op in ops:
        if op[0] == "set":
            new[op[1]] = op[2]
        elif op[0] == "remove":
            new.pop(op[1], None)
        else:
            new[op[1]] = N(int(new.get(op[1], N(0))["N"]) + 1)
    return new


def update_args(ops):
    sets, removes, vals = [], [], {}
    for i, op in enumerate(ops):
        if op[0] == "set":
            sets.append("%s = :v%d" % (op[1], i))
            vals[":v%d" % i] = op[2]
        elif op[0] == "remove":
            removes.append(op[1])
        else:
            sets.append("%s = if_not_exists(%s, :zero) + :one" % (op[1], op[1]))
            vals[":zero"], vals[":one"] = N(0), N(1)
    expr = "SET " + ", ".join(sets)
    if removes:
        expr += " REMOVE " + ", ".join(removes)
    return {"UpdateExpression": expr, "ExpressionAttributeValues": vals}


class Action:
    """One item write of a request.  kind: put, update, delete, check."""

    def __init__(self, kind, key, tag=None, item=None, ops=None, cond=None, rv="NONE"):
        self.kind, self.key, self.tag, self.item, self.ops, self.cond, self.rv = \
            kind, key, tag, item, ops, cond, rv
        self.returned = None     # Attributes of a successful single-item request
        self.version = None      # a delete: the tag of the version it removed, when known
        self.noop = False        # a DeleteItem that found nothing
        self.definite = False    # a delete that must have removed something


class Request:
    def __init__(self, op, actions, invalid=False):
        self.op, self.actions, self.invalid = op, actions, invalid
        self.start = self.end = None
        self.outcome = None      # ok, condition, cancelled, invalid, conflict, error


class Read:
    """One read: kind get (key), scan (the table) or index (ix, value or None
    for a Scan of the index, full for Select ALL_ATTRIBUTES); items: the
    answer by key."""

    def __init__(self, kind, start, end, items, key=None, ix=None, value=None, full=False, what=""):
        self.kind, self.start, self.end, self.items = kind, start, end, items
        self.key, self.ix, self.value, self.full, self.what = key, ix, value, full, what

    def view(self, st):
        """What this read shows of item version st (None: nothing)."""
        if st is None or self.kind != "index":
            return st
        pj = proj(self.ix, st)
        if pj is None or (self.value is not None and pj[INDEXES[self.ix][0]] != self.value):
            return None
        return st if self.full else pj

    def keys(self, universe):
        return [self.key] if self.kind == "get" else universe


class Oracle:
    def __init__(self, keys=KEYS):
        self.keys = list(keys)
        self.violations = []
        self.lock = threading.Lock()
        self.versions = None     # key -> [(lo, hi, state)], from check_stream
        self.final_state = None

    def violate(self, msg):
        with self.lock:
            self.violations.append(msg)

    # -- at once, during the run --------------------------------------------

    def check_page(self, read, page, raw_items):
        """The shape of one answer: one page, each key once, the index's
        partition, its projection and its order."""
        if page.get("LastEvaluatedKey"):
            self.violate(f"{read.what}: more than one page")
        if len({key_of(i) for i in raw_items}) != len(raw_items):
            self.violate(f"{read.what}: a key twice: {raw_items}")
        if read.kind != "index":
            return
        pk = INDEXES[read.ix][0]
        for it in raw_items:
            pj = proj(read.ix, it)
            if pj is None:
                self.violate(f"{read.what}: an entry without the index keys: {it}")
            elif read.value is not None and it[pk] != read.value:
                self.violate(f"{read.what}: an entry of another partition: {it}")
            elif not read.full and pj != it:
                self.violate(f"{read.what}: not the projection: {it}")
        if read.value is not None:
            try:
                ks = [order_key(read.ix, it) for it in raw_items]
            except (KeyError, ValueError):
                return
            if ks != sorted(ks):
                self.violate(f"{read.what}: not in index order: {ks}")

    def check_condition_failure(self, cond, item, what):
        if cond_holds(cond, item):
            self.violate(f"{what}: condition {cond} failed, yet holds on the returned item {item}")

    # -- at the end ---------------------------------------------------------

    def check_stream(self, requests, final, tail=None):
        """final, tail: {shard: [records]} (tail: as read while the writers
        ran).  Builds the versions of each item that check_reads uses."""
        if tail is not None:
            for sh in set(final) | set(tail):
                a = [r["dynamodb"]["SequenceNumber"] for r in final.get(sh, [])]
                b = [r["dynamodb"]["SequenceNumber"] for r in tail.get(sh, [])]
                if a != b:
                    first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
                    self.violate(f"shard {sh}: read while writing {len(b)} records, afterwards {len(a)}; "
                                 f"first difference at {first}")
                elif final.get(sh, []) != tail.get(sh, []):
                    self.violate(f"shard {sh}: a record changed between two reads")
        tags, failed = {}, set()
        claims = defaultdict(list)          # tag removed -> [(request, action)]
        unknown_dels, definite_dels = Counter(), Counter()
        for r in requests:
            for a in r.actions:
                if a.kind in ("put", "update"):
                    if r.outcome == "ok":
                        tags[a.tag] = (r, a)
                    else:
                        failed.add(a.tag)
                elif a.kind == "delete" and r.outcome == "ok":
                    if a.version is not None:
                        claims[a.version].append((r, a))
                    elif not a.noop:
                        unknown_dels[a.key] += 1
                        definite_dels[a.key] += a.definite
        per_key, shard_of, seqs = defaultdict(list), {}, set()
        for sh, recs in sorted(final.items()):
            last = -1
            for rec in recs:
                d = rec["dynamodb"]
                sn = int(d["SequenceNumber"])
                if sn <= last:
                    self.violate(f"shard {sh}: sequence number {sn} after {last}")
                if sn in seqs:
                    self.violate(f"sequence number {sn} twice")
                last = sn
                seqs.add(sn)
                k = key_of(d["Keys"])
                if shard_of.setdefault(k, sh) != sh:
                    self.violate(f"{k}: records in shards {shard_of[k]} and {sh}")
                per_key[k].append(rec)
        seen = Counter()
        claimed = set()
        unmatched = Counter()
        self.versions, self.final_state = {}, {}
        for k in sorted(set(self.keys) | set(per_key)):
            prev = None
            states, when = [None], [None]
            for rec in per_key[k]:
                d, ev = rec["dynamodb"], rec["eventName"]
                old, new = d.get("OldImage"), d.get("NewImage")
                where = f"{k} record {d['SequenceNumber']} ({ev})"
                if d["Keys"] != tkey(k):
                    self.violate(f"{where}: Keys {d['Keys']}")
                if ev == "INSERT" and (prev is not None or old is not None or new is None):
                    self.violate(f"{where}: INSERT over {prev}, OldImage {old}")
                elif ev in ("MODIFY", "REMOVE") and (prev is None or old != prev):
                    self.violate(f"{where}: OldImage {old}, but the item was {prev}")
                if (new is None) != (ev == "REMOVE") or ev not in ("INSERT", "MODIFY", "REMOVE"):
                    self.violate(f"{where}: NewImage {new}")
                span = None
                if new is not None:
                    t = tag_of(new)
                    if t is not None and t == tag_of(old):
                        self.violate(f"{where}: a record of no write (w {t} unchanged)")
                    elif t in failed:
                        self.violate(f"{where}: the write of a failed request ({t})")
                    elif t not in tags:
                        self.violate(f"{where}: the write of no request ({t})")
                    else:
                        seen[t] += 1
                        r, a = tags[t]
                        span = (r.start, r.end)
                        want = a.item if a.kind == "put" else apply_update(a.ops, old, k)
                        if a.key != k:
                            self.violate(f"{where}: write {t} was of {a.key}")
                        elif new != want:
                            self.violate(f"{where}: NewImage {new}, but {r.op} {t} makes {want}")
                        if not cond_holds(a.cond, old):
                            self.violate(f"{where}: {r.op} {t}'s condition {a.cond} does not hold on {old}")
                        if r.op in ("PutItem", "UpdateItem") and a.rv != "NONE":
                            image = new if a.rv == "ALL_NEW" else old
                            if a.returned != image:
                                self.violate(f"{where}: {r.op} {t} returned {a.returned}, the record says {image}")
                else:
                    t = tag_of(old)
                    if claims.get(t):
                        claimed.add(t)
                        r, a = claims[t][0]
                        span = (r.start, r.end)
                        if len(claims[t]) > 1:
                            self.violate(f"{where}: {len(claims[t])} successful deletes removed version {t}")
                        if a.key != k or (a.returned is not None and a.returned != old):
                            self.violate(f"{where}: {r.op} of {a.key} returned {a.returned}, the record says {old}")
                        if not cond_holds(a.cond, old):
                            self.violate(f"{where}: the delete's condition {a.cond} does not hold on {old}")
                    else:
                        unmatched[k] += 1
                prev = new
                states.append(new)
                when.append(span)
            self.final_state[k] = prev
            # real time: a write that ended before another began committed first
            most = -INF
            for span in when[1:]:
                if span is None:
                    continue
                if span[1] < most:
                    self.violate(f"{k}: a record of a write that ended at {span[1]:.4f} comes after "
                                 f"the record of one that began at {most:.4f}")
                most = max(most, span[0])
            # versions: (may be current from, is surely replaced by, state)
            hi, his = INF, [INF] * len(states)
            for i in range(len(states) - 1, -1, -1):
                his[i] = hi
                if when[i] is not None:
                    hi = min(hi, when[i][1])
            # (a version is committed after every earlier one: after their writes began)
            los, lo = [], -INF
            for span in when:
                lo = max(lo, span[0]) if span else lo
                los.append(lo)
            self.versions[k] = list(zip(los, his, states))
        for t, (r, a) in tags.items():
            if seen[t] == 0:
                self.violate(f"{r.op} {t} of {a.key} succeeded but has no record")
            elif seen[t] > 1:
                self.violate(f"{r.op} {t} of {a.key} has {seen[t]} records")
        for t, cl in claims.items():
            if t not in claimed:
                r, a = cl[0]
                self.violate(f"{r.op} of {a.key} removed version {t} but there is no REMOVE of it")
        for k in set(unmatched) | set(definite_dels):
            if not definite_dels[k] <= unmatched[k] <= unknown_dels[k]:
                self.violate(f"{k}: {unmatched[k]} REMOVEs no DeleteItem accounts for, but "
                             f"{unknown_dels[k]} batch or transaction deletes ({definite_dels[k]} certain)")
        return self.final_state

    def check_reads(self, reads):
        for rd in reads:
            for k in rd.keys(self.keys):
                got = rd.items.get(k)
                vs = self.versions.get(k, [(-INF, INF, None)])
                cands = [st for lo, hi, st in vs if lo <= rd.end and hi >= rd.start]
                if not any(rd.view(st) == got for st in cands):
                    self.violate(f"{rd.what} [{rd.start:.4f}, {rd.end:.4f}] {k}: got {got}; "
                                 f"the versions that may have been current show {[rd.view(st) for st in cands]}")

    def check_final(self, scan, indexes, verify=None):
        """scan: the table's items; indexes: {ix: its entries}; verify:
        ddb_verify_gsi's answer (or the error it raised)."""
        base = {key_of(i): i for i in scan}
        replay = {k: v for k, v in (self.final_state or {}).items() if v is not None}
        if self.final_state is not None and base != replay:
            diff = {k: (base.get(k), replay.get(k)) for k in set(base) | set(replay) if base.get(k) != replay.get(k)}
            self.violate(f"the table differs from the stream's replay (table, replay): {diff}")
        for ix, entries in indexes.items():
            got = {key_of(e): e for e in entries}
            if len(got) != len(entries):
                self.violate(f"{ix}: a key twice")
            want = {k: proj(ix, it) for k, it in base.items() if proj(ix, it) is not None}
            if got != want:
                diff = {k: (got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)}
                self.violate(f"{ix} differs from the table's projection (index, table): {diff}")
        if verify is not None:
            if isinstance(verify, Exception):
                self.violate(f"ddb_verify_gsi: {verify}")
            else:
                counts = {v["IndexName"]: v for v in verify["indexes"]}
                for ix in INDEXES:
                    want = sum(proj(ix, it) is not None for it in base.values())
                    if ix not in counts or counts[ix]["entries"] != want or counts[ix]["items"] != len(base):
                        self.violate(f"ddb_verify_gsi {ix}: {counts.get(ix)}, "
                                     f"expected {want} entries of {len(base)} items")


# -- the workload ---------------------------------------------------------------

def random_item(rng, k, tag, invalid=False):
    it = dict(tkey(k), w=S(tag))
    if rng.random() < 0.6:
        it["gp"] = S("g%d" % rng.randrange(3))
    if rng.random() < 0.7:
        it["gs"] = N(rng.randrange(5))
    if rng.random() < 0.5:
        it["h"] = S("h%d" % rng.randrange(2))
    if rng.random() < 0.6:
        it["l"] = N(rng.randrange(10))
    if rng.random() < 0.5:
        it["x"] = N(rng.randrange(1000))
    if rng.random() < 0.3:
        it["y"] = S("pad" * rng.randrange(1, 10))
    if invalid:
        a, v = rng.choice([("gs", S("five")), ("l", S("ten")), ("gp", S("")), ("h", N(1))])
        it[a] = v
    return it


GEN = {"gp": lambda r: S("g%d" % r.randrange(3)), "gs": lambda r: N(r.randrange(5)),
       "h": lambda r: S("h%d" % r.randrange(2)), "l": lambda r: N(r.randrange(10)),
       "x": lambda r: N(r.randrange(1000))}


def random_update(rng, tag, invalid=False):
    ops = [("set", "w", S(tag))]
    for a, gen in GEN.items():
        x = rng.random()
        if x < 0.3:
            ops.append(("set", a, gen(rng)))
        elif x < 0.45:
            ops.append(("remove", a))
    if rng.random() < 0.2:
        ops.append(("inc", "cnt"))
    if invalid:
        a, v = rng.choice([("gs", S("five")), ("l", S("ten")), ("gp", S("")), ("h", N(1))])
        ops = [op for op in ops if op[1] != a] + [("set", a, v)]
    return ops


def random_cond(rng, k, known, kinds=("exists", "not_exists", "gp", "w")):
    if rng.random() < 0.4:
        return None
    kind = rng.choice(kinds)
    if kind == "gp":
        return ("eq", "gp", S("g%d" % rng.randrange(3)))
    if kind == "w":
        return ("eq", "w", S(known.get(k, "w-none")))
    return (kind,)


class Workload:
    def __init__(self, table, oracle):
        self.table, self.oracle = table, oracle
        self.requests, self.reads = [], []
        self.stats = Counter()
        self.lock = threading.Lock()

    def count(self, what):
        with self.lock:
            self.stats[what] += 1

    def record_read(self, rd):
        with self.lock:
            self.reads.append(rd)

    def failure(self, req, e):
        """The outcome of a refused request; reads in the items that failed
        conditions returned."""
        resp = e.response
        code = resp.get("Error", {}).get("Code")
        if code == "ConditionalCheckFailedException" and req.op != "TransactWriteItems":
            a = req.actions[0]
            item = resp.get("Item")
            self.oracle.check_condition_failure(a.cond, item, f"{req.op} of {a.key}")
            self.record_read(Read("get", req.start, req.end, {a.key: item} if item else {}, key=a.key,
                                  what=f"{req.op}'s condition failure"))
            return "condition"
        if code == "TransactionCanceledException" and req.op == "TransactWriteItems":
            reasons = resp.get("CancellationReasons", [])
            codes = {r.get("Code") for r in reasons} - {"None", None}
            # (a bad index key value is its action's ValidationError, unless
            # the action's condition failed first)
            allowed = {"ConditionalCheckFailed", "TransactionConflict"}
            if req.invalid:
                allowed.add("ValidationError")
            if len(reasons) != len(req.actions) or not codes <= allowed:
                self.oracle.violate(f"TransactWriteItems: reasons {reasons} for {len(req.actions)} actions")
                return "error"
            for a, r in zip(req.actions, reasons):
                if r.get("Code") == "ConditionalCheckFailed":
                    item = r.get("Item")
                    self.oracle.check_condition_failure(a.cond, item, f"TransactWriteItems {a.kind} of {a.key}")
                    self.record_read(Read("get", req.start, req.end, {a.key: item} if item else {}, key=a.key,
                                          what="TransactWriteItems' condition failure"))
            if "ValidationError" in codes:
                return "invalid"
            return "cancelled" if codes == {"ConditionalCheckFailed"} else "conflict"
        if code == "ValidationException" and req.invalid:
            return "invalid"
        if code == "TransactionConflictException":
            return "conflict"
        self.oracle.violate(f"{req.op} {[(a.kind, a.key, a.tag) for a in req.actions]}: {resp.get('Error')}")
        return "error"

    def send(self, c, req, call, **kw):
        req.start = time.monotonic()
        try:
            resp = call(**kw)
            req.end = time.monotonic()
            req.outcome = "ok"
            if req.invalid:
                self.oracle.violate(f"{req.op} with a bad index key value succeeded: {kw}")
        except botocore.exceptions.ClientError as e:
            req.end = time.monotonic()
            req.outcome = self.failure(req, e)
            resp = None
        except Exception as e:   # a transport failure: the outcome is unknown
            req.end = time.monotonic()
            req.outcome = "error"
            resp = None
            self.oracle.violate(f"{req.op}: {e!r}")
        with self.lock:
            self.requests.append(req)
            self.stats[f"{req.op}_{req.outcome}"] += 1
        return resp

    def writer(self, w, c):
        rng = random.Random(SEEDS[w])
        t = self.table
        known = {}                   # key -> the w this writer last saw
        n = 0

        def tag():
            nonlocal n
            n += 1
            return "w%d-%d" % (w, n)

        def learn(a, item):
            if a.kind == "delete" or item is None:
                known.pop(a.key, None)
            else:
                known[a.key] = tag_of(item)

        for _ in range(ITERATIONS):
            m = rng.random()
            bad = rng.random() < INVALID_SHARE
            k = rng.choice(KEYS)
            if m < 0.25:
                a = Action("put", k, tag(), cond=random_cond(rng, k, known), rv=rng.choice(["NONE", "ALL_OLD"]))
                a.item = random_item(rng, k, a.tag, bad)
                req = Request("PutItem", [a], bad)
                resp = self.send(c, req, c.put_item, TableName=t, Item=a.item, ReturnValues=a.rv,
                                 **cond_args(a.cond))
                if resp is not None:
                    a.returned = resp.get("Attributes")
                    learn(a, a.item)
            elif m < 0.5:
                tg = tag()
                a = Action("update", k, tg, ops=random_update(rng, tg, bad),
                           cond=random_cond(rng, k, known), rv=rng.choice(["NONE", "ALL_NEW", "ALL_OLD"]))
                args = update_args(a.ops)
                ca = cond_args(a.cond)
                args["ExpressionAttributeValues"].update(ca.pop("ExpressionAttributeValues", {}))
                req = Request("UpdateItem", [a], bad)
                resp = self.send(c, req, c.update_item, TableName=t, Key=tkey(k), ReturnValues=a.rv,
                                 **args, **ca)
                if resp is not None:
                    a.returned = resp.get("Attributes")
                    if a.rv == "ALL_NEW":
                        learn(a, a.returned)
            elif m < 0.62:
                a = Action("delete", k, cond=random_cond(rng, k, known, ("exists", "gp", "w")), rv="ALL_OLD")
                req = Request("DeleteItem", [a])
                resp = self.send(c, req, c.delete_item, TableName=t, Key=tkey(k), ReturnValues="ALL_OLD",
                                 **cond_args(a.cond))
                if resp is not None:
                    a.returned = resp.get("Attributes")
                    if a.returned is None:
                        a.noop = True
                    else:
                        a.version = tag_of(a.returned)
                    learn(a, None)
            elif m < 0.82:
                keys = rng.sample(KEYS, rng.randint(1, 4))
                acts, items = [], []
                bad_at = rng.randrange(len(keys)) if bad else -1
                for i, kk in enumerate(keys):
                    x = rng.random()
                    if x < 0.3 or i == bad_at:
                        a = Action("put", kk, tag(), cond=random_cond(rng, kk, known))
                        a.item = random_item(rng, kk, a.tag, i == bad_at)
                        body = {"Put": dict(TableName=t, Item=a.item, **cond_args(a.cond))}
                    elif x < 0.65:
                        tg = tag()
                        a = Action("update", kk, tg, ops=random_update(rng, tg), cond=random_cond(rng, kk, known))
                        args = update_args(a.ops)
                        ca = cond_args(a.cond)
                        args["ExpressionAttributeValues"].update(ca.pop("ExpressionAttributeValues", {}))
                        body = {"Update": dict(TableName=t, Key=tkey(kk), **args, **ca)}
                    elif x < 0.85:
                        a = Action("delete", kk, cond=random_cond(rng, kk, known, ("exists", "w")))
                        if a.cond and a.cond[0] == "eq":
                            a.version = a.cond[2]["S"]
                        a.definite = a.cond is not None
                        body = {"Delete": dict(TableName=t, Key=tkey(kk), **cond_args(a.cond))}
                    else:
                        a = Action("check", kk, cond=random_cond(rng, kk, known) or ("exists",))
                        body = {"ConditionCheck": dict(TableName=t, Key=tkey(kk), **cond_args(a.cond))}
                    if a.cond is not None:
                        list(body.values())[0]["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
                    acts.append(a)
                    items.append(body)
                req = Request("TransactWriteItems", acts, bad)
                if self.send(c, req, c.transact_write_items, TransactItems=items) is not None:
                    for a in acts:
                        if a.kind == "put":
                            learn(a, a.item)
                        elif a.kind == "delete":
                            learn(a, None)
            else:
                keys = rng.sample(KEYS, rng.randint(1, 6))
                acts, items = [], []
                bad_at = rng.randrange(len(keys)) if bad else -1
                for i, kk in enumerate(keys):
                    if rng.random() < 0.7 or i == bad_at:
                        a = Action("put", kk, tag())
                        a.item = random_item(rng, kk, a.tag, i == bad_at)
                        items.append({"PutRequest": {"Item": a.item}})
                    else:
                        a = Action("delete", kk)
                        items.append({"DeleteRequest": {"Key": tkey(kk)}})
                    acts.append(a)
                req = Request("BatchWriteItem", acts, bad)
                resp = self.send(c, req, c.batch_write_item, RequestItems={t: items})
                if resp is not None:
                    if resp.get("UnprocessedItems"):
                        self.oracle.violate(f"BatchWriteItem left {resp['UnprocessedItems']} unprocessed")
                    for a in acts:
                        learn(a, a.item if a.kind == "put" else None)

    def reader(self, r, c, done):
        rng = random.Random(READER_SEEDS[r])
        t = self.table
        while not done.is_set():
            x = rng.random()
            kw, full = {}, False
            if x < 0.3:
                ix, v = "ByG", S("g%d" % rng.randrange(3))
            elif x < 0.45:
                ix, v = "ByH", S("h%d" % rng.randrange(2))
            elif x < 0.7:
                ix, v = "ByL", S("P%d" % rng.randrange(NP))
                kw["ConsistentRead"] = rng.random() < 0.5
                if rng.random() < 0.4:
                    kw["Select"], full = "ALL_ATTRIBUTES", True
            else:
                ix, v = None, None
            try:
                if ix is not None:
                    what = f"reader {r}: Query {ix} = {v}{' ALL_ATTRIBUTES' if full else ''}"
                    pk = INDEXES[ix][0]
                    start = time.monotonic()
                    page = c.query(TableName=t, IndexName=ix, KeyConditionExpression="#k = :v",
                                   ExpressionAttributeNames={"#k": pk}, ExpressionAttributeValues={":v": v}, **kw)
                    rd = Read("index", start, time.monotonic(), None, ix=ix, value=v, full=full, what=what)
                elif x < 0.82:
                    k = rng.choice(KEYS)
                    start = time.monotonic()
                    page = c.get_item(TableName=t, Key=tkey(k), ConsistentRead=True)
                    rd = Read("get", start, time.monotonic(), None, key=k, what=f"reader {r}: GetItem {k}")
                    page = {"Items": [page["Item"]] if "Item" in page else []}
                elif x < 0.92:
                    start = time.monotonic()
                    page = c.scan(TableName=t, ConsistentRead=True)
                    rd = Read("scan", start, time.monotonic(), None, what=f"reader {r}: Scan")
                else:
                    ix = rng.choice(STATIC)
                    start = time.monotonic()
                    page = c.scan(TableName=t, IndexName=ix)
                    rd = Read("index", start, time.monotonic(), None, ix=ix, what=f"reader {r}: Scan {ix}")
                raw = page["Items"]
                rd.items = {key_of(i): i for i in raw}
                self.oracle.check_page(rd, page, raw)
                self.record_read(rd)
                self.count(f"read_{rd.kind}{'_' + rd.ix if rd.ix else ''}")
            except botocore.exceptions.ClientError as e:
                self.oracle.violate(f"reader {r}: {e.response.get('Error')}")
            except Exception as e:
                self.oracle.violate(f"reader {r}: {e!r}")
                return


def writer_client():
    """A client whose conditional PutItem, UpdateItem and DeleteItem ask
    for the item on a condition failure (ReturnValuesOnConditionCheckFailure
    ALL_OLD) and keep it in the error's response as "Item": Debian's
    botocore 1.29 knows neither for these operations."""
    c = client()

    def ask(params, **kw):
        body = json.loads(params["body"])
        if "ConditionExpression" in body:
            body["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
            params["body"] = json.dumps(body).encode()

    def keep(http_response, parsed, **kw):
        if http_response.status_code >= 300 and "Item" not in parsed:
            try:
                item = json.loads(http_response.content).get("Item")
            except ValueError:
                return
            if item is not None:
                parsed["Item"] = item
    for op in ("PutItem", "UpdateItem", "DeleteItem"):
        c.meta.events.register(f"before-call.dynamodb.{op}", ask)
        c.meta.events.register(f"after-call.dynamodb.{op}", keep)
    return c


def streams_client():
    return boto3.client(
        "dynamodbstreams", endpoint_url=ENDPOINT, region_name=REGION,
        aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET,
        config=botocore.config.Config(retries={"max_attempts": 0, "mode": "standard"}))


def read_shards(sc, arn, shards, iters=None):
    """Every record of each shard from TRIM_HORIZON (or from iters), until a
    page comes back empty."""
    out = {}
    for sh in shards:
        it = iters[sh] if iters else sc.get_shard_iterator(
            StreamArn=arn, ShardId=sh, ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        recs = out.setdefault(sh, [])
        while it:
            page = sc.get_records(ShardIterator=it)
            recs += page["Records"]
            it = page.get("NextShardIterator")
            if not page["Records"]:
                break
        if iters is not None:
            iters[sh] = it
    return out


@pytest.fixture
def indexed_table(ddb, table_name):
    ddb.create_table(
        TableName=table_name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}, {"AttributeName": "s", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": ty} for a, ty in
                              (("p", "S"), ("s", "S"), ("gp", "S"), ("gs", "N"), ("h", "S"), ("l", "N"))],
        GlobalSecondaryIndexes=[
            {"IndexName": "ByG", "KeySchema": [{"AttributeName": "gp", "KeyType": "HASH"},
                                                {"AttributeName": "gs", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x", "w"]}},
            {"IndexName": "ByH", "KeySchema": [{"AttributeName": "h", "KeyType": "HASH"}],
             "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        LocalSecondaryIndexes=[
            {"IndexName": "ByL", "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"},
                                                {"AttributeName": "l", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["w"]}}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
    yield table_name
    ddb.delete_table(TableName=table_name)


def scan_all(c, **kw):
    items, start = [], {}
    while True:
        page = c.scan(**kw, **start)
        items += page["Items"]
        if "LastEvaluatedKey" not in page:
            return items
        start = {"ExclusiveStartKey": page["LastEvaluatedKey"]}


def verify_gsi(table):
    try:
        return json.loads(psql(f"SELECT ddb_verify_gsi('{table}')"))
    except RuntimeError as e:
        return e


def test_indexes_and_stream_under_concurrent_writes(ddb, indexed_table):
    t = indexed_table
    oracle = Oracle()
    wl = Workload(t, oracle)
    writing, done = threading.Event(), threading.Event()
    writing.set()

    sc = streams_client()
    arn = ddb.describe_table(TableName=t)["Table"]["LatestStreamArn"]
    shards = [s["ShardId"] for s in sc.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]]
    tail = {}
    # (clients are made here: boto3's default session is not thread-safe)
    tail_client = streams_client()

    def tailer():
        """Tails every shard with NextShardIterator while the writers run,
        then until a pass over all shards finds nothing."""
        c = tail_client
        try:
            iters = {sh: c.get_shard_iterator(StreamArn=arn, ShardId=sh, ShardIteratorType="TRIM_HORIZON")
                     ["ShardIterator"] for sh in shards}
            while True:
                last = not writing.is_set()
                got = read_shards(c, arn, shards, iters)
                for sh, recs in got.items():
                    tail.setdefault(sh, []).extend(recs)
                wl.count("tail_pass")
                if last and not any(got.values()):
                    return
                time.sleep(0.02)
        except Exception as e:
            oracle.violate(f"stream tail: {e!r}")

    idx_tables = psql("SELECT string_agg(index_table::text, ', ') FROM ddb_internal.gsi "
                      f"WHERE base = 'public.{t}'::regclass")

    ddl_client = client()

    def ddl():
        """Creates the GSI ByZ (h, x; ALL) while the writers run (a backfill),
        Queries it, drops it, and again; leaves it for the final checks."""
        rng = random.Random(5)
        c = ddl_client
        exists = False

        def update_gsis(what, **kw):
            """UpdateTable; False when it met a writer's lock (counted)."""
            try:
                c.update_table(TableName=t, **kw)
            except botocore.exceptions.ClientError as e:
                if e.response["Error"]["Code"] != "TransactionConflictException":
                    raise
                wl.count("ddl_conflict")
                return False
            wl.count(what)
            return True

        try:
            while True:
                if not exists:
                    if not update_gsis(
                            "ddl_create", AttributeDefinitions=[{"AttributeName": "h", "AttributeType": "S"},
                                                                {"AttributeName": "x", "AttributeType": "N"}],
                            GlobalSecondaryIndexUpdates=[{"Create": {
                                "IndexName": "ByZ", "Projection": {"ProjectionType": "ALL"},
                                "KeySchema": [{"AttributeName": "h", "KeyType": "HASH"},
                                              {"AttributeName": "x", "KeyType": "RANGE"}]}}]):
                        continue
                    exists = True
                if not writing.is_set():
                    return
                time.sleep(rng.uniform(0.2, 0.6))
                for v in (S("h0"), S("h1")):
                    start = time.monotonic()
                    page = c.query(TableName=t, IndexName="ByZ", KeyConditionExpression="h = :v",
                                   ExpressionAttributeValues={":v": v})
                    rd = Read("index", start, time.monotonic(), {key_of(i): i for i in page["Items"]},
                              ix="ByZ", value=v, what=f"Query ByZ = {v}")
                    oracle.check_page(rd, page, page["Items"])
                    wl.record_read(rd)
                    wl.count("read_index_ByZ")
                if not writing.is_set():
                    return
                if update_gsis("ddl_drop", GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "ByZ"}}]):
                    exists = False
                time.sleep(rng.uniform(0.2, 0.6))
        except Exception as e:
            oracle.violate(f"ByZ: {e!r}")

    def maintenance():
        """VACUUM the table and its index tables; ddb_verify_gsi mid-run."""
        while not done.is_set():
            try:
                psql(f"VACUUM public.{t}, {idx_tables}")
                wl.count("vacuum")
            except RuntimeError as e:
                oracle.violate(f"VACUUM: {e}")
            v = verify_gsi(t)
            if isinstance(v, Exception):
                oracle.violate(f"ddb_verify_gsi mid-run: {v}")
            else:
                wl.count("verify")
            done.wait(0.4)

    t0 = time.time()
    writers = [threading.Thread(target=wl.writer, args=(w, writer_client())) for w in range(WRITERS)]
    readers = [threading.Thread(target=wl.reader, args=(r, client(), done)) for r in range(READERS)]
    others = [threading.Thread(target=tailer), threading.Thread(target=maintenance),
              threading.Thread(target=ddl)]
    for th in others + readers + writers:
        th.start()
    for th in writers:
        th.join(timeout=120)
    writing.clear()
    done.set()
    for th in readers + others:
        th.join(timeout=60)
    assert not any(th.is_alive() for th in writers + readers + others), "a thread did not finish"
    elapsed = time.time() - t0

    final = read_shards(sc, arn, shards)
    oracle.check_stream(wl.requests, final, tail)
    oracle.check_reads(wl.reads)
    oracle.check_final(scan_all(ddb, TableName=t, ConsistentRead=True),
                       {ix: scan_all(ddb, TableName=t, IndexName=ix) for ix in INDEXES},
                       verify_gsi(t))
    records = Counter(r["eventName"] for recs in final.values() for r in recs)
    stats = wl.stats
    print(f"indexes: {elapsed:.1f}s, {len(wl.requests)} writes, {len(wl.reads)} reads, "
          f"records {dict(records)}, {dict(sorted(stats.items()))}")
    assert oracle.violations == [], "\n".join(oracle.violations[:20])
    # the workload did what it is for
    for op in ("PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"):
        assert stats[f"{op}_ok"] > 0, op
    assert stats["PutItem_condition"] + stats["UpdateItem_condition"] + stats["DeleteItem_condition"] > 0
    assert stats["TransactWriteItems_cancelled"] > 0
    assert sum(v for s, v in stats.items() if s.endswith("_invalid")) > 0
    assert all(records[e] > 0 for e in ("INSERT", "MODIFY", "REMOVE"))
    for kind in ("read_index_ByG", "read_index_ByH", "read_index_ByL", "read_get", "read_scan"):
        assert stats[kind] > 0, kind
    assert stats["verify"] > 0 and stats["tail_pass"] > 1 and all(final.values())
    assert stats["ddl_create"] >= 2 and stats["ddl_drop"] >= 1 and stats["read_index_ByZ"] > 0


# -- the oracle on planted violations ---------------------------------------------

class Model:
    """A sequential server: runs requests one at a time and writes the
    history and the stream a correct one would."""

    def __init__(self):
        self.t, self.seq, self.items, self.requests = 0.0, 1000, {}, []
        self.shards = {"sh0": [], "sh1": []}

    def run(self, op, actions):
        req = Request(op, actions)
        req.start = self.t
        if all(cond_holds(a.cond, self.items.get(a.key)) for a in actions):
            req.outcome = "ok"
            for a in actions:
                old = self.items.get(a.key)
                if a.kind == "put":
                    new = a.item
                elif a.kind == "update":
                    new = apply_update(a.ops, old, a.key)
                elif a.kind == "delete":
                    new = None
                    if op == "DeleteItem":
                        a.returned = old
                        a.noop, a.version = old is None, tag_of(old)
                else:
                    continue
                if op != "TransactWriteItems" and a.rv != "NONE":
                    a.returned = new if a.rv == "ALL_NEW" else old
                if old is None and new is None:
                    continue
                self.seq += 1
                ev = "INSERT" if old is None else "REMOVE" if new is None else "MODIFY"
                d = {"Keys": tkey(a.key), "SequenceNumber": "%021d" % self.seq}
                if old is not None:
                    d["OldImage"] = old
                if new is not None:
                    d["NewImage"] = new
                    self.items[a.key] = new
                else:
                    self.items.pop(a.key, None)
                self.shards["sh%d" % (int(a.key[0][1:]) % 2)].append({"eventName": ev, "dynamodb": d})
        else:
            req.outcome = "condition"
        req.end = self.t + 0.5
        self.t += 1
        self.requests.append(req)
        return req


def model_history():
    """A small correct history over keys P0/S0, P0/S1, P1/S0."""
    m = Model()
    a, b, c = ("P0", "S0"), ("P0", "S1"), ("P1", "S0")
    put = lambda k, tag, **at: Action("put", k, tag, item=dict(tkey(k), w=S(tag), **at), rv="ALL_OLD")
    m.run("PutItem", [put(a, "t1", gp=S("g0"), gs=N(1), x=N(5), y=S("pad"), l=N(3))])
    m.run("PutItem", [put(b, "t2", gp=S("g0"), gs=N(0), h=S("h1"))])
    m.run("UpdateItem", [Action("update", a, "t3", ops=[("set", "w", S("t3")), ("set", "x", N(6)),
                                                        ("inc", "cnt")], cond=("exists",), rv="ALL_NEW")])
    m.run("PutItem", [Action("put", b, "t4", item=dict(tkey(b), w=S("t4")), cond=("not_exists",))])  # fails
    m.run("TransactWriteItems", [put(c, "t5", h=S("h0")),
                                 Action("update", b, "t6", ops=[("set", "w", S("t6")), ("remove", "gp")])])
    m.run("DeleteItem", [Action("delete", a, cond=("eq", "w", S("t3")), rv="ALL_OLD")])
    m.run("BatchWriteItem", [Action("delete", b), put(a, "t7", gp=S("g1"), gs=N(2), l=N(4))])
    m.run("UpdateItem", [Action("update", c, "t8", ops=[("set", "w", S("t8")), ("set", "gp", S("g1")),
                                                        ("set", "gs", N(0))], rv="ALL_OLD")])
    return m, (a, b, c)


def fresh(m, keys):
    o = Oracle(keys)
    o.check_stream(m.requests, m.shards, m.shards)
    return o


def copy_shards(shards):
    return json.loads(json.dumps(shards))


def test_indexes_oracle_reports_planted_stream_violations():
    m, keys = model_history()
    o = fresh(m, keys)
    assert o.violations == []
    assert o.check_final([v for v in o.final_state.values() if v], {}) is None and o.violations == []

    def planted(doctor, expect, requests=None):
        shards = copy_shards(m.shards)
        doctor(shards)
        o = Oracle(keys)
        o.check_stream(requests or m.requests, shards)
        assert any(expect in v for v in o.violations), (expect, o.violations)
        return o

    def recs(shards):
        return [r for rs in shards.values() for r in rs]

    def find(shards, tag):
        return next(r for r in recs(shards) if tag_of(r["dynamodb"].get("NewImage")) == tag)

    # a successful write without its record
    planted(lambda sh: sh["sh0"].remove(find(sh, "t6")),
            "TransactWriteItems t6 of ('P0', 'S1') succeeded but has no record")
    # a record twice
    planted(lambda sh: sh["sh1"].append(dict(sh["sh1"][0], dynamodb=dict(
        sh["sh1"][0]["dynamodb"], SequenceNumber="%021d" % 5000))), "has 2 records")
    # the write of the failed PutItem (t4) shows up
    def failed_write(sh):
        r = find(sh, "t2")
        rec = {"eventName": "MODIFY", "dynamodb": {"Keys": tkey(keys[1]), "SequenceNumber": "%021d" % 1002,
                                                   "OldImage": r["dynamodb"]["NewImage"],
                                                   "NewImage": dict(tkey(keys[1]), w=S("t4"))}}
        sh["sh0"].insert(sh["sh0"].index(r) + 1, rec)
    planted(failed_write, "the write of a failed request (t4)")
    # a NewImage that is not what the update made
    planted(lambda sh: find(sh, "t3")["dynamodb"]["NewImage"].__setitem__("x", N(7)), "but UpdateItem t3 makes")
    # an OldImage that is not the previous version
    planted(lambda sh: find(sh, "t6")["dynamodb"]["OldImage"].__setitem__("gp", N(9)), "OldImage")
    # two records of one item in the wrong order (sequence numbers swapped too)
    def swap(sh):
        i, j = sh["sh0"].index(find(sh, "t1")), sh["sh0"].index(find(sh, "t3"))
        sh["sh0"][i], sh["sh0"][j] = sh["sh0"][j], sh["sh0"][i]
        d1, d2 = sh["sh0"][i]["dynamodb"], sh["sh0"][j]["dynamodb"]
        d1["SequenceNumber"], d2["SequenceNumber"] = d2["SequenceNumber"], d1["SequenceNumber"]
    planted(swap, "INSERT over")
    # a REMOVE no request made
    def remove(sh):
        r = find(sh, "t8")
        sh["sh1"].append({"eventName": "REMOVE", "dynamodb": {
            "Keys": tkey(keys[2]), "SequenceNumber": "%021d" % 6000, "OldImage": r["dynamodb"]["NewImage"]}})
    planted(remove, "REMOVEs no DeleteItem accounts for")
    # the DeleteItem's REMOVE is missing
    def no_remove(sh):
        sh["sh0"][:] = [r for r in sh["sh0"]
                        if not (r["eventName"] == "REMOVE" and tag_of(r["dynamodb"]["OldImage"]) == "t3")]
    planted(no_remove, "removed version t3 but there is no REMOVE of it")
    # a record in the wrong shard
    planted(lambda sh: sh["sh1"].append(sh["sh0"].pop()), "records in shards")
    # a write whose condition did not hold on the version it replaced
    m2, _ = model_history()
    next(a for r in m2.requests for a in r.actions if a.tag == "t5").cond = ("exists",)
    o = Oracle(keys)
    o.check_stream(m2.requests, m.shards)
    assert any("condition ('exists',) does not hold on None" in v for v in o.violations), o.violations
    # ReturnValues that do not match the record
    m2, _ = model_history()
    next(a for r in m2.requests for a in r.actions if a.tag == "t8").returned = None
    o = Oracle(keys)
    o.check_stream(m2.requests, m.shards)
    assert any("UpdateItem t8 returned None" in v for v in o.violations), o.violations
    # real time: a write that ended before another began has the later record
    m2, _ = model_history()
    r3 = next(r for r in m2.requests if r.actions[0].tag == "t3")
    r3.start, r3.end = -2.0, -1.5
    o = Oracle(keys)
    o.check_stream(m2.requests, m.shards)
    assert any("comes after the record of one that began" in v for v in o.violations), o.violations
    # the tailing reader saw something else than the final read
    o = Oracle(keys)
    short = copy_shards(m.shards)
    short["sh0"].pop(1)
    o.check_stream(m.requests, m.shards, short)
    assert any("read while writing" in v for v in o.violations), o.violations


def test_indexes_oracle_reports_planted_read_violations():
    m, (a, b, c) = model_history()
    o = fresh(m, (a, b, c))
    assert o.violations == []
    t = {tag: r for r in m.requests for x in r.actions if x.tag for tag in [x.tag]}
    v1 = dict(tkey(a), w=S("t1"), gp=S("g0"), gs=N(1), x=N(5), y=S("pad"), l=N(3))
    v3 = apply_update(t["t3"].actions[0].ops, v1, a)
    g0 = lambda st: proj("ByG", st)

    def check(rd):
        o.violations.clear()
        o.check_reads([rd])
        return o.violations

    # between t3 and the delete, a Query of g0 shows t3's entry and b's t2
    mid = t["t3"].end + 0.1
    ok = Read("index", mid, mid + 0.1, {a: g0(v3), b: g0(m.requests[1].actions[0].item)}, ix="ByG", value=S("g0"))
    assert check(ok) == []
    # stale: t1's entry after t3 had answered
    stale = Read("index", mid, mid + 0.1, {a: g0(v1), b: ok.items[b]}, ix="ByG", value=S("g0"), what="stale")
    assert any("stale" in v and "('P0', 'S0')" in v for v in check(stale))
    # an entry left out while its item was surely in the partition
    assert any("('P0', 'S1'): got None" in v for v in check(
        Read("index", mid, mid + 0.1, {a: ok.items[a]}, ix="ByG", value=S("g0"), what="missing")))
    # a mix of two versions: t3's w with t1's x
    assert check(Read("index", mid, mid + 0.1, {**ok.items, a: dict(g0(v3), x=N(5))},
                      ix="ByG", value=S("g0"))) != []
    # the failed PutItem's version (t4) read from the table
    assert check(Read("get", mid, mid + 5, {b: dict(tkey(b), w=S("t4"))}, key=b)) != []
    # while t3 ran, either version may be read
    during = (t["t3"].start, t["t3"].end)
    for st in (v1, v3):
        assert check(Read("get", *during, {a: st}, key=a)) == []
    # a version from before it was written
    assert check(Read("get", -5, -4, {a: v1}, key=a)) != []
    # LSI with Select ALL_ATTRIBUTES: the item, not its projection
    assert check(Read("index", mid, mid + 0.1, {a: v3}, ix="ByL", value=S("P0"), full=True)) == []
    assert check(Read("index", mid, mid + 0.1, {a: proj("ByL", v3)}, ix="ByL", value=S("P0"), full=True)) != []

    # the shape of a page, at once
    def page(rd, items, more=False):
        o.violations.clear()
        o.check_page(rd, dict(Items=items, **({"LastEvaluatedKey": tkey(("P9", "S9"))} if more else {})), items)
        return o.violations
    q = Read("index", 0, 1, None, ix="ByG", value=S("g0"), what="q")
    e1 = {"p": S("P0"), "s": S("S0"), "gp": S("g0"), "gs": N(1), "w": S("t1")}
    e2 = {"p": S("P0"), "s": S("S1"), "gp": S("g0"), "gs": N(2), "w": S("t2")}
    assert page(q, [e1, e2]) == []
    assert any("not in index order" in v for v in page(q, [e2, e1]))
    assert any("not the projection" in v for v in page(q, [dict(e1, y=S("pad"))]))
    assert any("another partition" in v for v in page(q, [dict(e1, gp=S("g1"))]))
    assert any("without the index keys" in v for v in page(q, [{k: v for k, v in e1.items() if k != "gs"}]))
    assert any("a key twice" in v for v in page(q, [e1, e1]))
    assert any("more than one page" in v for v in page(q, [e1], more=True))
    o.violations.clear()
    o.check_condition_failure(("not_exists",), None, "PutItem")
    assert any("yet holds" in v for v in o.violations)


def test_indexes_oracle_reports_planted_final_violations():
    m, keys = model_history()
    o = fresh(m, keys)
    base = [v for v in o.final_state.values() if v is not None]
    good = {ix: [proj(ix, i) for i in base if proj(ix, i) is not None] for ix in INDEXES}
    verify = {"indexes": [{"IndexName": ix, "items": len(base), "entries": len(good[ix])} for ix in INDEXES]}
    o.check_final(base, good, verify)
    assert o.violations == []

    def planted(expect, scan=base, idx=None, ver=verify):
        o.violations.clear()
        o.check_final(scan, dict(good, **(idx or {})), ver)
        assert any(expect in v for v in o.violations), (expect, o.violations)

    extra = dict(tkey(("P2", "S0")), gp=S("g0"), gs=N(0))
    planted("ByG differs", idx={"ByG": good["ByG"] + [extra]})
    planted("ByG differs", idx={"ByG": good["ByG"][1:]})
    planted("ByL differs", idx={"ByL": [dict(e, w=S("t0")) for e in good["ByL"]]})
    planted("ByH differs", idx={"ByH": [dict(e, x=N(1)) for e in good["ByH"]]})
    planted("the table differs from the stream's replay", scan=base[1:])
    planted("ddb_verify_gsi: boom", ver=RuntimeError("boom"))
    planted("ddb_verify_gsi ByL", ver={"indexes": verify["indexes"][:2]})
