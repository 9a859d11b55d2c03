"""The endpoint against dynalite, request by request.

dynalite (npm, pinned in test/bench/dynalite) is a DynamoDB emulator whose
validation messages were recorded from the real service.  The same fixed,
seeded list of requests goes to both: valid requests of every operation
dynalite implements, and mutations of them (a member missing, null, of the
wrong type or unknown; bad attribute values; key type mismatches; malformed
expressions; out-of-range limits).  For each answer the HTTP status, the
error's __type (after '#') and message, and a success's body (less what
legitimately differs: ids, ARNs, times, capacity, undefined orders) must
agree, unless the case is in KNOWN, where each difference says why ddb is
right (DynamoDB's current behaviour, which dynalite predates).  A KNOWN
entry that no longer differs fails too, so that the list stays true.

dynalite is started here when node and test/bench/dynalite/node_modules
(or node_modules here) have it; run.sh installs it.  DDB_DIFF_OUT=<file>
writes every difference found, listed or not, to the file.
"""
import copy
import json
import os
import random
import shutil
import subprocess

import pytest

from conftest import Raw, free_port, wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
DYNALITE = [os.path.join(HERE, "..", "bench", "dynalite", "node_modules", "dynalite", "cli.js"),
            os.path.join(HERE, "node_modules", "dynalite", "cli.js")]
SEED = 20120810

# Tables: a hash key, and a hash and range key with a GSI and an LSI.
HASH = "dyndiff_h"
RANGE = "dyndiff_r"
PREFIX = "dyndiff_"

# Known, justified differences: case id -> why ddb's answer stands.
SYNTAX = "DynamoDB's syntax errors name the token and its surroundings (token: ..., near: ...); dynalite's are PEG.js's"
TABLE_ACTIVE = "ddb creates and changes a table at once (ACTIVE, README); DeletionProtectionEnabled and the pay-per-request time are newer than dynalite"
KNOWN = {
    "setup:create-hash": TABLE_ACTIVE,
    "setup:create-range": TABLE_ACTIVE,
    "CreateTable.0:valid": "ResourceInUseException names the table in DynamoDB's message; dynalite's is empty",
    "CreateTable.0:extra-member": "as CreateTable.0:valid",
    "create:exists": "as CreateTable.0:valid",
    "DescribeTable.0:valid": TABLE_ACTIVE,
    "DescribeTable.0:extra-member": TABLE_ACTIVE,
    "UpdateTable.0:valid": TABLE_ACTIVE,
    "UpdateTable.0:extra-member": TABLE_ACTIVE,
    "create:ok-then-delete": TABLE_ACTIVE,
    "delete:ok": "DeleteTable's TableDescription as the API reference's example shows it (no schema); dynalite returns the whole table",
    "Query.1:valid": "items of one hash key of a GSI without a sort key come in no defined order",
    "Query.1:extra-member": "as Query.1:valid",
    "UpdateItem.0:missing:ExpressionAttributeValues": "of several undefined :values DynamoDB names the last one walked; dynalite the first",
    "UpdateItem.0:null:ExpressionAttributeValues": "as UpdateItem.0:missing:ExpressionAttributeValues",
    "key:empty-string": "DynamoDB now says 'One or more parameter values are not valid.' for an empty key string (since 2020)",
    "put:gsi-key-empty": "DynamoDB refuses an empty string as a secondary index key (developer guide); dynalite predates empty strings",
    "scan:filter:1": SYNTAX, "scan:filter:4": SYNTAX, "scan:filter:5": SYNTAX, "scan:filter:7": SYNTAX,
    "scan:filter:8": SYNTAX, "scan:filter:11": SYNTAX, "scan:filter:12": SYNTAX, "scan:filter:15": SYNTAX,
    "scan:filter:16": SYNTAX, "scan:filter:17": SYNTAX,
    "update:expr:1": SYNTAX, "update:expr:17": SYNTAX,
    "update:expr:8": "DynamoDB's operand-type message ends with the typeSet; dynalite's is older",
    "update:expr:22": "DynamoDB: 'The function is not allowed in an update expression' for size(); dynalite calls it an invalid name",
    "scan:segments-big": "TotalSegments is at most 1000000 (API reference); dynalite has no upper bound",
    "scan:select-specific": "SPECIFIC_ATTRIBUTES needs ProjectionExpression or AttributesToGet (DynamoDB); dynalite returns all",
    "scan:select-count-proj": "with ProjectionExpression Select can only be SPECIFIC_ATTRIBUTES (API reference); dynalite ignores it",
    "query:key:0": "unused :values are listed in DynamoDB's (sorted) order; dynalite keeps the request's",
    "query:key:8": "as query:key:0",
    "batchget:101": "ddb abbreviates a long list in a constraint message ('[101 keys]') rather than echo the whole request",
    "batchwrite:no-requests": "ddb renders the map value as DynamoDB's Java toString ('{t=[0 requests]}'), dynalite as JSON",
    "batchwrite:26": "as batchwrite:no-requests",
    "batchwrite:both": "a WriteRequest holds exactly one of PutRequest and DeleteRequest; dynalite takes the put",
    "create:two-hash": "two HASH elements: DynamoDB says the second is not a RANGE key; dynalite's check runs on definitions first",
    "create:include-no-attrs": "INCLUDE without NonKeyAttributes is refused by DynamoDB; dynalite accepts it",
    "tags:bad-arn": "ddb has no IAM user ARN to put in AccessDeniedException's message",
}


def S(v):
    return {"S": v}


def N(v):
    return {"N": str(v)}


@pytest.fixture(scope="module")
def dynalite():
    """The port of a dynalite of our own (tables ACTIVE at once)."""
    cli = next((p for p in DYNALITE if os.path.exists(p)), None)
    if cli is None or not shutil.which("node"):
        pytest.skip("node or dynalite is not installed (npm install in test/bench/dynalite)")
    port = free_port()
    proc = subprocess.Popen(["node", cli, "--port", str(port), "--host", "127.0.0.1",
                             "--createTableMs", "0", "--deleteTableMs", "0", "--updateTableMs", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def up():
            try:
                r = Raw(port=port, timeout=2)
                r.post({}, port=port)
                r.close()
                return True
            except OSError:
                return False
        assert wait_for(up, 20), "dynalite did not start"
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


# ---------------------------------------------------------------------------
# Answers and their comparison

def answer(raw, op, body, port):
    """(status, body as JSON or text) of one request."""
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    kw = {} if port is None else {"port": port}
    resp, out = raw.post(data, target=f"DynamoDB_20120810.{op}", **kw)
    try:
        return resp.status, json.loads(out)
    except ValueError:
        return resp.status, out.decode(errors="replace")


# Members whose values legitimately differ between two implementations;
# dynalite's TableThroughputModeSummary, which DynamoDB's API does not have;
# ddb's IndexingViolations, the count of items a GSI could not take (README).
VOLATILE = {"TableId", "TableArn", "IndexArn", "LatestStreamArn", "LatestStreamLabel",
            "CreationDateTime", "ConsumedCapacity", "LastIncreaseDateTime",
            "LastDecreaseDateTime", "NumberOfDecreasesToday", "ItemCount", "TableSizeBytes",
            "IndexSizeBytes", "TableThroughputModeSummary", "IndexingViolations"}
# Lists in no defined order: a Scan's items, a batch's tables' items,
# attribute definitions and indexes.
UNORDERED = {"AttributeDefinitions", "GlobalSecondaryIndexes", "LocalSecondaryIndexes"}


def canon(op, req, v, key=None):
    """A success body less its volatile members, its unordered lists
    sorted.  A table ddb creates is ACTIVE at once (README), dynalite's is
    CREATING for a moment; a Scan with a Limit reads a page of an order
    DynamoDB does not define, so only its counts are compared."""
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if k in VOLATILE or (op == "CreateTable" and k in ("TableStatus", "IndexStatus")):
                continue
            if op == "Scan" and isinstance(req, dict) and "Limit" in req and k in ("Items", "LastEvaluatedKey"):
                continue
            out[k] = canon(op, req, x, k)
        return out
    if isinstance(v, list):
        items = [canon(op, req, x) for x in v]
        if key in UNORDERED or (op == "Scan" and key == "Items") or (op == "BatchGetItem" and key != "Keys"):
            items.sort(key=lambda x: json.dumps(x, sort_keys=True))
        return items
    return v


def error_part(status, body):
    if not isinstance(body, dict) or "__type" not in body:
        return None
    return (body["__type"].split("#")[-1], body.get("message", body.get("Message")))


def difference(a, b, op=None, req=None):
    """None when the two answers (status, body) agree, else what differs."""
    (sa, ba), (sb, bb) = a, b
    if sa != sb:
        return f"status {sa} != {sb}: {ba!r} / {bb!r}"
    if sa != 200:
        ea, eb = error_part(sa, ba), error_part(sb, bb)
        return None if ea == eb else f"error {ea!r} != {eb!r}"
    ca, cb = canon(op, req, ba), canon(op, req, bb)
    return None if ca == cb else f"body {json.dumps(ca, sort_keys=True)} != {json.dumps(cb, sort_keys=True)}"


# ---------------------------------------------------------------------------
# Requests

def key_schema(*pairs):
    return [{"AttributeName": n, "KeyType": t} for n, t in pairs]


def create_hash():
    return {"TableName": HASH, "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
            "KeySchema": key_schema(("id", "HASH"))}


def create_range():
    return {"TableName": RANGE, "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                     {"AttributeName": "sk", "AttributeType": "N"},
                                     {"AttributeName": "g", "AttributeType": "S"}],
            "KeySchema": key_schema(("pk", "HASH"), ("sk", "RANGE")),
            "GlobalSecondaryIndexes": [{"IndexName": "byg", "KeySchema": key_schema(("g", "HASH")),
                                        "Projection": {"ProjectionType": "ALL"}}]}


ITEMS = {HASH: [{"id": S(f"i{i}"), "n": N(i), "s": S("x" * i), "ss": {"SS": ["a", "b"]},
                 "m": {"M": {"k": S("v"), "l": {"L": [N(1), {"BOOL": True}]}}}} for i in range(4)],
         RANGE: [{"pk": S("p"), "sk": N(i), "g": S("even" if i % 2 == 0 else "odd"), "v": N(i * 10)}
                 for i in range(6)]}

# Valid requests, one or more an operation; mutations start from these.
BASES = {
    "CreateTable": [create_hash()],
    "DescribeTable": [{"TableName": HASH}],
    "DeleteTable": [{"TableName": PREFIX + "nosuch"}],
    "ListTables": [{"Limit": 100}],
    "UpdateTable": [{"TableName": HASH, "BillingMode": "PAY_PER_REQUEST"}],
    "PutItem": [{"TableName": HASH, "Item": {"id": S("w1"), "n": N(5), "b": {"B": "AAEC"}},
                 "ReturnValues": "ALL_OLD"},
                {"TableName": RANGE, "Item": {"pk": S("w"), "sk": N(1), "g": S("x")},
                 "ConditionExpression": "attribute_not_exists(#p)",
                 "ExpressionAttributeNames": {"#p": "pk"}}],
    "GetItem": [{"TableName": HASH, "Key": {"id": S("i2")}, "ConsistentRead": True},
                {"TableName": RANGE, "Key": {"pk": S("p"), "sk": N(3)},
                 "ProjectionExpression": "#v, g", "ExpressionAttributeNames": {"#v": "v"}}],
    "UpdateItem": [{"TableName": HASH, "Key": {"id": S("w2")},
                    "UpdateExpression": "SET n = if_not_exists(n, :z) + :one, s = :s REMOVE gone",
                    "ExpressionAttributeValues": {":z": N(0), ":one": N(1), ":s": S("t")},
                    "ReturnValues": "ALL_NEW"}],
    "DeleteItem": [{"TableName": HASH, "Key": {"id": S("w3")}, "ReturnValues": "ALL_OLD",
                    "ConditionExpression": "attribute_not_exists(id) OR n > :n",
                    "ExpressionAttributeValues": {":n": N(100)}}],
    "Query": [{"TableName": RANGE, "KeyConditionExpression": "pk = :p AND sk BETWEEN :a AND :b",
               "ExpressionAttributeValues": {":p": S("p"), ":a": N(1), ":b": N(4)},
               "ScanIndexForward": False, "Limit": 3},
              {"TableName": RANGE, "IndexName": "byg", "KeyConditionExpression": "g = :g",
               "FilterExpression": "v >= :v", "ExpressionAttributeValues": {":g": S("even"), ":v": N(10)}}],
    "Scan": [{"TableName": HASH, "FilterExpression": "size(s) > :n AND contains(ss, :a)",
              "ExpressionAttributeValues": {":n": N(1), ":a": S("a")}},
             {"TableName": RANGE, "Select": "COUNT", "Limit": 4}],
    "BatchGetItem": [{"RequestItems": {HASH: {"Keys": [{"id": S("i1")}, {"id": S("i3")}, {"id": S("zz")}]},
                                       RANGE: {"Keys": [{"pk": S("p"), "sk": N(0)}],
                                               "ProjectionExpression": "v"}}}],
    "BatchWriteItem": [{"RequestItems": {HASH: [{"PutRequest": {"Item": {"id": S("w4"), "n": N(4)}}},
                                                {"DeleteRequest": {"Key": {"id": S("w5")}}}]}}],
    "TagResource": [{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/" + PREFIX + "nosuch",
                     "Tags": [{"Key": "k", "Value": "v"}]}],
    "UntagResource": [{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/" + PREFIX + "nosuch",
                       "TagKeys": ["k"]}],
    "ListTagsOfResource": [{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/" + PREFIX + "nosuch"}],
    "DescribeTimeToLive": [{"TableName": HASH}],
}

# Attribute values no implementation may accept.
BAD_VALUES = {
    "empty": {},
    "two_types": {"S": "a", "N": "1"},
    "n_text": {"N": "abc"},
    "n_empty": {"N": ""},
    "n_big": {"N": "1e126"},
    "n_small": {"N": "1e-131"},
    "n_digits": {"N": "1234567890123456789012345678901234567890"},
    "ss_empty": {"SS": []},
    "ns_empty": {"NS": []},
    "bs_empty": {"BS": []},
    "ss_dup": {"SS": ["a", "a"]},
    "ns_dup": {"NS": ["1", "1.0"]},
    "null_false": {"NULL": False},
    "s_number": {"S": 5},
    "l_bad": {"L": [{}]},
    "m_bad": {"M": {"x": {"N": "x"}}},
    "unknown_type": {"Z": "a"},
}

# Values of the wrong JSON type for a member.
WRONG = {"str": "x", "int": 5, "float": 1.5, "bool": True, "list": [], "map": {}}


def json_type(v):
    return {str: "str", int: "int", float: "float", bool: "bool", list: "list", dict: "map"}.get(type(v))


def paths(v, path=()):
    """Every (path, value) in a request, depth first."""
    yield path, v
    if isinstance(v, dict):
        for k in sorted(v):
            yield from paths(v[k], path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from paths(x, path + (i,))


def replaced(req, path, value):
    """A copy of req with the value at path replaced (value DROP: removed)."""
    out = copy.deepcopy(req)
    cur = out
    for p in path[:-1]:
        cur = cur[p]
    if value is DROP:
        del cur[path[-1]]
    else:
        cur[path[-1]] = copy.deepcopy(value)
    return out


DROP = object()


def is_attr_value(path, v):
    """Is v an attribute value (under Item, Key, Keys, ExpressionAttributeValues)?"""
    return (isinstance(v, dict) and len(path) >= 2 and len(v) == 1
            and next(iter(v)) in ("S", "N", "B", "SS", "NS", "BS", "M", "L", "BOOL", "NULL")
            and any(p in ("Item", "Key", "Keys", "ExpressionAttributeValues") for p in path))


def mutations(op, n, base, rnd):
    """(case id, request) mutations of one valid request."""
    name = f"{op}.{n}"
    yield f"{name}:valid", base
    yield f"{name}:extra-member", dict(base, NoSuchMember=1)
    for k in sorted(base):
        yield f"{name}:missing:{k}", replaced(base, (k,), DROP)
        yield f"{name}:null:{k}", replaced(base, (k,), None)
        t = json_type(base[k])
        for w in sorted(WRONG):
            if w != t and not (t == "int" and w == "float"):
                yield f"{name}:type:{k}:{w}", replaced(base, (k,), WRONG[w])
    every = list(paths(base))
    values = [(p, v) for p, v in every if is_attr_value(p, v)]
    for p, v in values:
        for bad in sorted(BAD_VALUES):
            yield f"{name}:value:{'.'.join(map(str, p))}:{bad}", replaced(base, p, BAD_VALUES[bad])
    # a seeded sample of deeper mutations: drop or retype a nested member
    deep = [(p, v) for p, v in every if len(p) >= 2]
    done = set()
    for _ in range(min(6, len(deep))):
        p, v = rnd.choice(deep)
        w = rnd.choice(sorted(WRONG) + ["drop"])
        cid = f"{name}:deep:{'.'.join(map(str, p))}:{w}"
        if cid not in done:
            done.add(cid)
            yield cid, replaced(base, p, DROP if w == "drop" else WRONG[w])


# Hand-written cases: names, limits, keys and expressions.
def special():
    h, r = HASH, RANGE
    get = {"TableName": h, "Key": {"id": S("i1")}}
    yield "name:short", "DescribeTable", {"TableName": "ab"}
    yield "name:long", "DescribeTable", {"TableName": "t" * 256}
    yield "name:chars", "DescribeTable", {"TableName": "a b$"}
    yield "name:missing-table", "DescribeTable", {"TableName": PREFIX + "nosuch"}
    yield "name:missing-get", "GetItem", dict(get, TableName=PREFIX + "nosuch")
    yield "name:short-and-key", "GetItem", {"TableName": "ab"}
    yield "list:limit0", "ListTables", {"Limit": 0}
    yield "list:limit101", "ListTables", {"Limit": 101}
    yield "list:start", "ListTables", {"ExclusiveStartTableName": HASH, "Limit": 1}
    yield "list:start-short", "ListTables", {"ExclusiveStartTableName": "ab"}
    yield "key:missing-attr", "GetItem", {"TableName": h, "Key": {}}
    yield "key:extra-attr", "GetItem", {"TableName": h, "Key": {"id": S("i1"), "n": N(1)}}
    yield "key:wrong-type", "GetItem", {"TableName": h, "Key": {"id": N(1)}}
    yield "key:wrong-name", "GetItem", {"TableName": h, "Key": {"idx": S("i1")}}
    yield "key:empty-string", "GetItem", {"TableName": h, "Key": {"id": S("")}}
    yield "key:range-missing", "GetItem", {"TableName": r, "Key": {"pk": S("p")}}
    yield "key:range-wrong-type", "GetItem", {"TableName": r, "Key": {"pk": S("p"), "sk": S("1")}}
    yield "put:key-missing", "PutItem", {"TableName": h, "Item": {"n": N(1)}}
    yield "put:key-wrong-type", "PutItem", {"TableName": h, "Item": {"id": N(1)}}
    yield "put:key-empty", "PutItem", {"TableName": h, "Item": {"id": S("")}}
    yield "put:gsi-key-wrong-type", "PutItem", {"TableName": r, "Item": {"pk": S("w"), "sk": N(2), "g": N(1)}}
    yield "put:gsi-key-empty", "PutItem", {"TableName": r, "Item": {"pk": S("w"), "sk": N(3), "g": S("")}}
    yield "put:empty-string-attr", "PutItem", {"TableName": h, "Item": {"id": S("w6"), "e": S(""), "eb": {"B": ""}}}
    yield "put:returnvalues-bad", "PutItem", {"TableName": h, "Item": {"id": S("w1")}, "ReturnValues": "ALL_NEW"}
    yield "put:condition-fails", "PutItem", {"TableName": h, "Item": {"id": S("i1")},
                                             "ConditionExpression": "attribute_not_exists(id)"}
    yield "put:expected-and-expr", "PutItem", {"TableName": h, "Item": {"id": S("w1")},
                                               "Expected": {"id": {"Exists": False}},
                                               "ConditionExpression": "attribute_not_exists(id)"}
    yield "put:too-big", "PutItem", {"TableName": h, "Item": {"id": S("w7"), "x": S("x" * 409700)}}
    for i, expr in enumerate(["", "n >", "n = :nope", "#nope = :n", "n = :n AND", "size(n) = = :n",
                              "nosuchfn(n)", "n IN ()", "n BETWEEN :n", "attribute_type(n, :n)",
                              "begins_with(n)", "n = :n OR OR n = :n", "(n = :n", "n = n",
                              "contains(n)", "NOT", "n.a[x] = :n", "n[-1] = :n",
                              "#a = :n", "n = :n", "name = :n", "a.b.c.d = :n AND :n = n"]):
        yield (f"scan:filter:{i}", "Scan",
               {"TableName": h, "FilterExpression": expr, "ExpressionAttributeValues": {":n": N(1)},
                **({"ExpressionAttributeNames": {"#a": "n", "#b": "n"}} if "#a" in expr else {})})
    yield "scan:unused-value", "Scan", {"TableName": h, "ExpressionAttributeValues": {":n": N(1)}}
    yield "scan:unused-name", "Scan", {"TableName": h, "FilterExpression": "n = :n",
                                       "ExpressionAttributeValues": {":n": N(1)},
                                       "ExpressionAttributeNames": {"#x": "n"}}
    yield "scan:empty-values", "Scan", {"TableName": h, "FilterExpression": "n = :n",
                                        "ExpressionAttributeValues": {}}
    yield "scan:limit0", "Scan", {"TableName": h, "Limit": 0}
    yield "scan:segment", "Scan", {"TableName": h, "Segment": 1}
    yield "scan:segments", "Scan", {"TableName": h, "Segment": 1, "TotalSegments": 1}
    yield "scan:segments-big", "Scan", {"TableName": h, "Segment": 0, "TotalSegments": 1000001}
    yield "scan:select-bad", "Scan", {"TableName": h, "Select": "NONE"}
    yield "scan:select-specific", "Scan", {"TableName": h, "Select": "SPECIFIC_ATTRIBUTES"}
    yield "scan:select-count-proj", "Scan", {"TableName": h, "Select": "COUNT", "ProjectionExpression": "n"}
    yield "scan:attrs-and-proj", "Scan", {"TableName": h, "AttributesToGet": ["n"], "ProjectionExpression": "n"}
    yield "scan:proj-dup", "Scan", {"TableName": h, "ProjectionExpression": "n, n"}
    yield "scan:proj-overlap", "Scan", {"TableName": h, "ProjectionExpression": "m, m.k"}
    yield "scan:proj-nested", "Scan", {"TableName": h, "ProjectionExpression": "m.l[1], m.k, nosuch"}
    yield "scan:index-missing", "Scan", {"TableName": h, "IndexName": "nosuch"}
    yield "scan:start-key", "Scan", {"TableName": h, "ExclusiveStartKey": {"id": S("i1")}, "Limit": 1}
    yield "scan:start-key-bad", "Scan", {"TableName": h, "ExclusiveStartKey": {"nope": S("i1")}}
    yield "query:no-key", "Query", {"TableName": r}
    yield "query:hash-only", "Query", {"TableName": r, "KeyConditionExpression": "pk = :p",
                                        "ExpressionAttributeValues": {":p": S("p")}}
    for i, expr in enumerate(["sk = :a", "pk = :p AND v = :a", "pk > :p", "pk = :p OR sk = :a",
                              "pk = :p AND begins_with(sk, :a)", "pk = :p AND sk <> :a",
                              "pk = :p AND pk = :p", "pk = :p AND sk IN (:a)", "pk = :a",
                              "pk = :p AND sk BETWEEN :b AND :a", "pk = :p AND (sk > :a)",
                              "pk = :p AND size(sk) > :a", "pk=:p and sk<:b"]):
        yield (f"query:key:{i}", "Query",
               {"TableName": r, "KeyConditionExpression": expr,
                "ExpressionAttributeValues": {":p": S("p"), ":a": N(1), ":b": N(0)}})
    yield "query:filter-on-key", "Query", {"TableName": r, "KeyConditionExpression": "pk = :p",
                                           "FilterExpression": "sk > :a",
                                           "ExpressionAttributeValues": {":p": S("p"), ":a": N(1)}}
    yield "query:gsi-consistent", "Query", {"TableName": r, "IndexName": "byg", "ConsistentRead": True,
                                            "KeyConditionExpression": "g = :g",
                                            "ExpressionAttributeValues": {":g": S("odd")}}
    yield "query:limit-neg", "Query", {"TableName": r, "KeyConditionExpression": "pk = :p", "Limit": -1,
                                       "ExpressionAttributeValues": {":p": S("p")}}
    yield "query:start-key", "Query", {"TableName": r, "KeyConditionExpression": "pk = :p", "Limit": 2,
                                       "ExclusiveStartKey": {"pk": S("p"), "sk": N(1)},
                                       "ExpressionAttributeValues": {":p": S("p")}}
    upd = {"TableName": h, "Key": {"id": S("w8")}, "ExpressionAttributeValues": {":n": N(1), ":s": {"SS": ["a"]}}}
    for i, expr in enumerate(["", "SET", "SET n = :n SET n = :n", "SET n = :n, n = :n", "SET n = :n REMOVE n",
                              "ADD n :n", "ADD s :n, n :n", "DELETE s :s", "DELETE n :n", "SET id = :n",
                              "REMOVE id", "SET n = n + :s", "SET n = :n + :n", "SET m.a = :n",
                              "SET n = list_append(:n, :n)", "SET l = list_append(:s, :s)",
                              "SET n = if_not_exists(n)", "SET n = :n - :n - :n", "SET a[0] = :n",
                              "REMOVE a, a.b", "SET #x = :n", "ADD n :s", "SET n = size(n)",
                              "SET n = :n ADD s :s DELETE s :s"]):
        yield f"update:expr:{i}", "UpdateItem", dict(upd, UpdateExpression=expr)
    yield "update:attr-updates-and-expr", "UpdateItem", dict(upd, UpdateExpression="SET n = :n",
                                                             AttributeUpdates={"n": {"Action": "DELETE"}})
    yield "update:attr-updates", "UpdateItem", {"TableName": h, "Key": {"id": S("w9")},
                                                "AttributeUpdates": {"n": {"Action": "ADD", "Value": N(3)},
                                                                     "q": {"Action": "PUT", "Value": S("z")}},
                                                "ReturnValues": "UPDATED_NEW"}
    yield "update:attr-updates-key", "UpdateItem", {"TableName": h, "Key": {"id": S("w9")},
                                                    "AttributeUpdates": {"id": {"Action": "PUT", "Value": S("z")}}}
    yield "update:returnvalues-bad", "UpdateItem", dict(upd, UpdateExpression="SET n = :n", ReturnValues="NEW")
    yield "batchget:empty", "BatchGetItem", {"RequestItems": {}}
    yield "batchget:no-keys", "BatchGetItem", {"RequestItems": {h: {"Keys": []}}}
    yield "batchget:dup-keys", "BatchGetItem", {"RequestItems": {h: {"Keys": [{"id": S("a")}, {"id": S("a")}]}}}
    yield "batchget:101", "BatchGetItem", {"RequestItems": {h: {"Keys": [{"id": S(str(i))} for i in range(101)]}}}
    yield "batchget:missing-table", "BatchGetItem", {"RequestItems": {PREFIX + "nosuch": {"Keys": [{"id": S("a")}]}}}
    yield "batchget:bad-key", "BatchGetItem", {"RequestItems": {h: {"Keys": [{"id": N(1)}]}}}
    yield "batchwrite:empty", "BatchWriteItem", {"RequestItems": {}}
    yield "batchwrite:no-requests", "BatchWriteItem", {"RequestItems": {h: []}}
    yield "batchwrite:both", "BatchWriteItem", {"RequestItems": {h: [{"PutRequest": {"Item": {"id": S("a")}},
                                                                    "DeleteRequest": {"Key": {"id": S("a")}}}]}}
    yield "batchwrite:neither", "BatchWriteItem", {"RequestItems": {h: [{}]}}
    yield "batchwrite:dup", "BatchWriteItem", {"RequestItems": {h: [{"PutRequest": {"Item": {"id": S("a")}}},
                                                                   {"DeleteRequest": {"Key": {"id": S("a")}}}]}}
    yield "batchwrite:26", "BatchWriteItem", {"RequestItems": {h: [{"PutRequest": {"Item": {"id": S(str(i))}}}
                                                                  for i in range(26)]}}
    yield "batchwrite:bad-key", "BatchWriteItem", {"RequestItems": {h: [{"PutRequest": {"Item": {"id": N(1)}}}]}}
    yield "batchwrite:missing-table", "BatchWriteItem", {"RequestItems": {PREFIX + "nosuch": [
        {"PutRequest": {"Item": {"id": S("a")}}}]}}
    yield "create:exists", "CreateTable", create_hash()
    yield "create:no-attr-defs", "CreateTable", dict(create_hash(), TableName=PREFIX + "c1", AttributeDefinitions=[])
    yield "create:extra-attr-def", "CreateTable", dict(create_hash(), TableName=PREFIX + "c1", AttributeDefinitions=[
        {"AttributeName": "id", "AttributeType": "S"}, {"AttributeName": "x", "AttributeType": "S"}])
    yield "create:bad-attr-type", "CreateTable", dict(create_hash(), TableName=PREFIX + "c1", AttributeDefinitions=[
        {"AttributeName": "id", "AttributeType": "BOOL"}])
    yield "create:two-hash", "CreateTable", dict(create_hash(), TableName=PREFIX + "c1",
                                                 KeySchema=key_schema(("id", "HASH"), ("id", "HASH")))
    yield "create:range-first", "CreateTable", dict(create_hash(), TableName=PREFIX + "c1",
                                                    KeySchema=key_schema(("id", "RANGE")))
    yield "create:provisioned-no-throughput", "CreateTable", dict(create_hash(), TableName=PREFIX + "c1",
                                                                  BillingMode="PROVISIONED")
    yield "create:ppr-with-throughput", "CreateTable", dict(create_hash(), TableName=PREFIX + "c1",
                                                           ProvisionedThroughput={"ReadCapacityUnits": 1,
                                                                                  "WriteCapacityUnits": 1})
    yield "create:throughput-zero", "CreateTable", dict(create_hash(), TableName=PREFIX + "c1", BillingMode="PROVISIONED",
                                                        ProvisionedThroughput={"ReadCapacityUnits": 0,
                                                                               "WriteCapacityUnits": 1})
    yield "create:gsi-dup", "CreateTable", dict(create_range(), TableName=PREFIX + "c1", GlobalSecondaryIndexes=[
        create_range()["GlobalSecondaryIndexes"][0]] * 2)
    yield "create:gsi-empty", "CreateTable", dict(create_range(), TableName=PREFIX + "c1", GlobalSecondaryIndexes=[])
    yield "create:lsi-other-hash", "CreateTable", dict(create_range(), TableName=PREFIX + "c1", LocalSecondaryIndexes=[
        {"IndexName": "l", "KeySchema": key_schema(("g", "HASH"), ("sk", "RANGE")),
         "Projection": {"ProjectionType": "ALL"}}])
    yield "create:lsi-no-range", "CreateTable", dict(create_hash(), TableName=PREFIX + "c1", LocalSecondaryIndexes=[
        {"IndexName": "l", "KeySchema": key_schema(("id", "HASH")), "Projection": {"ProjectionType": "ALL"}}])
    yield "create:include-no-attrs", "CreateTable", dict(create_range(), TableName=PREFIX + "c1", GlobalSecondaryIndexes=[
        {"IndexName": "byg", "KeySchema": key_schema(("g", "HASH")), "Projection": {"ProjectionType": "INCLUDE"}}])
    yield "create:keys-only-attrs", "CreateTable", dict(create_range(), TableName=PREFIX + "c1", GlobalSecondaryIndexes=[
        {"IndexName": "byg", "KeySchema": key_schema(("g", "HASH")),
         "Projection": {"ProjectionType": "KEYS_ONLY", "NonKeyAttributes": ["v"]}}])
    yield "create:ok-then-delete", "CreateTable", dict(create_hash(), TableName=PREFIX + "c2")
    yield "delete:ok", "DeleteTable", {"TableName": PREFIX + "c2"}
    yield "update:nothing", "UpdateTable", {"TableName": h}
    yield "update:throughput-ppr", "UpdateTable", {"TableName": h, "ProvisionedThroughput": {
        "ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}
    yield "ttl:missing-table", "DescribeTimeToLive", {"TableName": PREFIX + "nosuch"}
    yield "tags:bad-arn", "ListTagsOfResource", {"ResourceArn": "nope"}
    yield "tags:no-tags", "TagResource", {"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/x",
                                          "Tags": []}
    yield "tags:no-keys", "UntagResource", {"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/x",
                                            "TagKeys": []}


def cases():
    """The fixed list: (case id, operation, request)."""
    rnd = random.Random(SEED)
    out = []
    for op in sorted(BASES):
        for n, base in enumerate(BASES[op]):
            out += [(cid, op, req) for cid, req in mutations(op, n, base, rnd)]
    out += list(special())
    return out


def setup_requests():
    """Creates the tables and their items (compared like the rest)."""
    yield "setup:create-hash", "CreateTable", create_hash()
    yield "setup:create-range", "CreateTable", create_range()
    for t, items in ITEMS.items():
        for i, item in enumerate(items):
            yield f"setup:put:{t}:{i}", "PutItem", {"TableName": t, "Item": item}


# ---------------------------------------------------------------------------
# Tests

def own_tables(ddb, page):
    """A ddb ListTables page as dynalite, which holds only this file's
    tables, would give it: other tests' tables (the endpoint's database is
    shared, and their names sort after this file's) left out, and
    LastEvaluatedTableName only when one of this file's tables follows."""
    names, start = [], None
    while True:
        _, more = answer(ddb, "ListTables", dict({"ExclusiveStartTableName": start} if start else {}), None)
        names += more.get("TableNames", [])
        start = more.get("LastEvaluatedTableName")
        if not start:
            break
    ours = [n for n in names if n.startswith(PREFIX)]
    page = dict(page, TableNames=[n for n in page.get("TableNames", []) if n.startswith(PREFIX)])
    last = page.get("LastEvaluatedTableName")
    if last is not None and not any(n > last for n in ours):
        del page["LastEvaluatedTableName"]
    return page


@pytest.fixture(scope="module")
def both(dynalite):
    """A function that sends one request to ddb and dynalite: their answers."""
    ddb, dyn = Raw(), Raw(port=dynalite)
    for t in (HASH, RANGE, PREFIX + "c1", PREFIX + "c2"):   # left by an earlier run
        answer(ddb, "DeleteTable", {"TableName": t}, None)

    def send(op, req):
        a = answer(ddb, op, req, None)
        if op == "ListTables" and a[0] == 200 and isinstance(a[1], dict):
            a = (a[0], own_tables(ddb, a[1]))
        return a, answer(dyn, op, req, dynalite)
    yield send
    ddb.close()
    dyn.close()


def test_same_answers_as_dynalite(both):
    """Every request of the list gets the same answer from both, or is a
    KNOWN difference; every KNOWN difference still differs."""
    reported, seen = [], set()
    for cid, op, req in list(setup_requests()) + cases():
        a, b = both(op, req)
        d = difference(a, b, op, req)
        seen.add(cid)
        if d and cid not in KNOWN:
            reported.append(f"{cid} ({op} {json.dumps(req)[:300]}): {d}")
        elif not d and cid in KNOWN:
            reported.append(f"{cid}: listed in KNOWN but the answers agree")
    reported += [f"{cid}: listed in KNOWN but not a case" for cid in KNOWN if cid not in seen]
    if os.environ.get("DDB_DIFF_OUT"):   # for study: every difference, one a line
        with open(os.environ["DDB_DIFF_OUT"], "w") as f:
            f.write("\n".join(reported) + "\n")
    assert not reported, f"{len(reported)} differences:\n" + "\n".join(reported)


def test_a_difference_is_reported(both):
    """The oracle can fail: an item that only ddb has is a different
    GetItem answer, and an altered message or status is a difference."""
    item = {"TableName": HASH, "Item": {"id": S("only-ddb"), "n": N(1)}}
    r = Raw()
    assert answer(r, "PutItem", item, None)[0] == 200
    r.close()
    a, b = both("GetItem", {"TableName": HASH, "Key": {"id": S("only-ddb")}})
    assert a[1] == {"Item": item["Item"]} and b[1] == {}
    assert difference(a, b) is not None
    bad = both("DescribeTable", {"TableName": "ab"})[0]
    assert difference(bad, bad) is None
    assert "error" in difference(bad, (bad[0], dict(bad[1], message="other")))
    assert "status" in difference(bad, (500, bad[1]))
    assert "body" in difference((200, {"Count": 1}), (200, {"Count": 2}))
