"""UpdateExpression paths into key attributes: a table's or an index's key
is a scalar, so DynamoDB refuses any path below one (k.x, k[0]) -- as an
action's target or inside a SET value -- with "Key attributes must be
scalars; ...: Key: k" or "...: IndexKey: k", before the item is read.
The texts are the service's, as recorded in dynalite's tests and quoted
in ScyllaDB's GSI tests, which run against DynamoDB.

The same holds for a ProjectionExpression (GetItem, BatchGetItem,
TransactGetItems, Query, Scan) and a FilterExpression (Query, Scan), any
of the table's and its indexes' keys whatever is read; a Query's filter
naming a key of what it queries keeps "Filter Expression can only contain
non-primary key attributes", which comes first (dynalite's recorded tests:
GetItem's projection, Scan's and Query's filters).  And for a
ConditionExpression (PutItem, UpdateItem, DeleteItem, every action of
TransactWriteItems) and a PartiQL statement's WHERE, SET and projection,
as DynamoDB Local -- AWS's own emulator -- checks them.

An update that gives an index key a value of another type that the
request shows (a value, arithmetic, list_append, ADD) is "Type mismatch
for Index Key ...", refused before the item is read and before a path
below a key; one whose value comes from the item (SET c = e) is "The
update expression attempted to update the secondary index key to
unsupported type" (dynalite's recorded tests; the TransactWriteItems API
reference lists the text among its ValidationError reasons).  A DELETE of
a set from an index key gives it the set's type: "Type mismatch" too."""
import pytest
from botocore.exceptions import ClientError

NOT_SCALAR = ("Key attributes must be scalars; list random access '[]' and "
              "map lookup '.' are not allowed: ")
UNSUPPORTED = ("The update expression attempted to update the secondary "
               "index key to unsupported type")


def S(v):
    return {"S": v}


def N(v):
    return {"N": str(v)}


def refused(call, code="ValidationException", **kw):
    with pytest.raises(ClientError) as e:
        call(**kw)
    err = e.value.response["Error"]
    assert err["Code"] == code, err
    return err["Message"]


@pytest.fixture
def indexed(ddb, table_name):
    # PK/SK the table's keys, g the key of a global index, l of a local one
    ddb.create_table(
        TableName=table_name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"},
                   {"AttributeName": "SK", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"}
                              for a in ("PK", "SK", "g", "l")],
        GlobalSecondaryIndexes=[{"IndexName": "ByG",
                                 "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}],
        LocalSecondaryIndexes=[{"IndexName": "ByL",
                                "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"},
                                              {"AttributeName": "l", "KeyType": "RANGE"}],
                                "Projection": {"ProjectionType": "ALL"}}])
    key = {"PK": S("p"), "SK": S("s")}
    ddb.put_item(TableName=table_name, Item=dict(key, g=S("g1"), l=S("l1"), m={"M": {}},
                                                 n=N(1), o={"M": {"x": N(1)}}))
    return key


@pytest.mark.parametrize("expr, values, which", [
    ("SET g.x = :v", {":v": N(1)}, "IndexKey: g"),
    ("ADD g.x :v", {":v": N(1)}, "IndexKey: g"),
    ("SET l[0] = :v", {":v": N(1)}, "IndexKey: l"),
    ("REMOVE l.x", None, "IndexKey: l"),
    # a path read by a SET value counts too
    ("SET m.a = g.x", None, "IndexKey: g"),
    ("SET m.a = if_not_exists(l[1], :v)", {":v": N(1)}, "IndexKey: l"),
    ("SET m.a = list_append(:v, PK.x)", {":v": {"L": []}}, "Key: PK"),
    # the table's keys come before the indexes'
    ("SET m.a = l.x, m.b = SK[0]", None, "Key: SK"),
])
def test_update_path_into_key(ddb, table_name, indexed, expr, values, which):
    kw = dict(TableName=table_name, Key=indexed, UpdateExpression=expr,
              # a condition that fails: the check comes before the item is read
              ConditionExpression="attribute_not_exists(PK)")
    if values:
        kw["ExpressionAttributeValues"] = values
    assert refused(ddb.update_item, **kw) == NOT_SCALAR + which
    # TransactWriteItems refuses it as a request error, not a cancellation
    assert refused(ddb.transact_write_items,
                   TransactItems=[{"Update": dict(kw)}]) == NOT_SCALAR + which


def test_update_key_target_first(ddb, table_name, indexed):
    # a path below a table key that is an action's target is "Cannot update"
    msg = refused(ddb.update_item, TableName=table_name, Key=indexed,
                  UpdateExpression="ADD PK.b :v", ExpressionAttributeValues={":v": N(1)})
    assert msg == ("One or more parameter values were invalid: Cannot update "
                   "attribute PK. This attribute is part of the key")


def test_update_whole_index_key_still_works(ddb, table_name, indexed):
    ddb.update_item(TableName=table_name, Key=indexed,
                    UpdateExpression="SET g = :g, m.g = g, l = :l",
                    ExpressionAttributeValues={":g": S("g2"), ":l": S("l2")})
    item = ddb.get_item(TableName=table_name, Key=indexed, ConsistentRead=True)["Item"]
    assert item["g"] == S("g2") and item["l"] == S("l2") and item["m"] == {"M": {"g": S("g1")}}


@pytest.mark.parametrize("proj, which", [
    ("#a.b.c", "Key: PK"),
    ("#a[0]", "Key: PK"),
    ("o.x, SK.y", "Key: SK"),
    ("g.x", "IndexKey: g"),
    ("o, l[0]", "IndexKey: l"),
    # the table's keys before the indexes'
    ("l.x, PK.x", "Key: PK"),
])
def test_projection_path_into_key(ddb, table_name, indexed, proj, which):
    names = {"#a": "PK"} if "#a" in proj else {}
    extra = {"ExpressionAttributeNames": names} if names else {}
    msg = NOT_SCALAR + which
    assert refused(ddb.get_item, TableName=table_name, Key=indexed,
                   ProjectionExpression=proj, **extra) == msg
    # an item that does not exist: a check of the request alone
    assert refused(ddb.get_item, TableName=table_name, Key={"PK": S("no"), "SK": S("no")},
                   ProjectionExpression=proj, **extra) == msg
    assert refused(ddb.batch_get_item, RequestItems={table_name: dict(
        Keys=[indexed], ProjectionExpression=proj, **extra)}) == msg
    assert refused(ddb.transact_get_items, TransactItems=[{"Get": dict(
        TableName=table_name, Key=indexed, ProjectionExpression=proj, **extra)}]) == msg
    assert refused(ddb.scan, TableName=table_name, ProjectionExpression=proj, **extra) == msg
    assert refused(ddb.query, TableName=table_name, KeyConditionExpression="PK = :p",
                   ExpressionAttributeValues={":p": S("p")},
                   ProjectionExpression=proj, **extra) == msg


def test_projection_nested_nonkey_still_works(ddb, table_name, indexed):
    item = ddb.get_item(TableName=table_name, Key=indexed,
                        ProjectionExpression="o.x, g, l")["Item"]
    assert item == {"o": {"M": {"x": N(1)}}, "g": S("g1"), "l": S("l1")}
    items = ddb.scan(TableName=table_name, FilterExpression="o.x = :one",
                     ExpressionAttributeValues={":one": N(1)})["Items"]
    assert len(items) == 1


def test_projection_key_checked_first(ddb, table_name, indexed):
    # the key is judged before the projection (dynalite's order)
    msg = refused(ddb.get_item, TableName=table_name, Key={"PK": S("p")},
                  ProjectionExpression="g.x")
    assert msg == "The provided key element does not match the schema"


@pytest.mark.parametrize("filt, which", [
    ("attribute_exists(PK.b.c)", "Key: PK"),
    ("attribute_exists(SK.b) AND #a = :one", "Key: SK"),
    ("g[1] = :one", "IndexKey: g"),
    ("size(l.x) > :one", "IndexKey: l"),
])
def test_scan_filter_path_into_key(ddb, table_name, indexed, filt, which):
    kw = dict(TableName=table_name, FilterExpression=filt)
    if "#a" in filt:
        kw["ExpressionAttributeNames"] = {"#a": "n"}
    if ":one" in filt:
        kw["ExpressionAttributeValues"] = {":one": N(1)}
    assert refused(ddb.scan, **kw) == NOT_SCALAR + which
    # on an index's scan too: every index's keys count
    assert refused(ddb.scan, IndexName="ByG", **kw) == NOT_SCALAR + which


def test_query_filter_path_into_key(ddb, table_name, indexed):
    kv = {":p": S("p"), ":one": N(1)}
    # the keys of what is queried: DynamoDB's own rule, first
    assert refused(ddb.query, TableName=table_name, KeyConditionExpression="PK = :p",
                   FilterExpression="attribute_exists(SK.x) AND n = :one",
                   ExpressionAttributeValues=kv) == \
        "Filter Expression can only contain non-primary key attributes: Primary key attribute: SK"
    # an index key below, when the table is queried
    assert refused(ddb.query, TableName=table_name, KeyConditionExpression="PK = :p",
                   FilterExpression="g[1] = :one", ExpressionAttributeValues=kv) == \
        NOT_SCALAR + "IndexKey: g"
    assert refused(ddb.query, TableName=table_name, KeyConditionExpression="PK = :p",
                   FilterExpression="attribute_exists(l.c) AND n = :one",
                   ExpressionAttributeValues=kv) == NOT_SCALAR + "IndexKey: l"
    # a table key below, when an index is queried
    assert refused(ddb.query, TableName=table_name, IndexName="ByG",
                   KeyConditionExpression="g = :g", FilterExpression="SK.x = :one",
                   ExpressionAttributeValues={":g": S("g1"), ":one": N(1)}) == \
        NOT_SCALAR + "Key: SK"


@pytest.mark.parametrize("cond, which", [
    ("attribute_exists(PK.x) OR n = :v", "Key: PK"),
    ("SK[0] = :v", "Key: SK"),
    ("attribute_exists(g.x) OR n = :v", "IndexKey: g"),
    ("size(l[1]) > :v", "IndexKey: l"),
    # the table's keys before the indexes'
    ("l.x = :v AND attribute_exists(SK.y)", "Key: SK"),
])
def test_condition_path_into_key(ddb, table_name, indexed, cond, which):
    # DynamoDB Local (AWS's own) checks a ConditionExpression as it checks
    # projections and filters: PutItem, UpdateItem, DeleteItem
    msg = NOT_SCALAR + which
    c = dict(ConditionExpression=cond, ExpressionAttributeValues={":v": N(1)})
    missing = {"PK": S("no"), "SK": S("no")}
    assert refused(ddb.put_item, TableName=table_name,
                   Item=dict(indexed, g=S("g2")), **c) == msg
    for key in (indexed, missing):
        # before the item is read: whether it exists does not matter
        assert refused(ddb.update_item, TableName=table_name, Key=key,
                       UpdateExpression="SET n = :v", **c) == msg
        assert refused(ddb.delete_item, TableName=table_name, Key=key, **c) == msg
    # TransactWriteItems refuses it as a request error, for each kind
    for action in ({"ConditionCheck": dict(TableName=table_name, Key=indexed, **c)},
                   {"Put": dict(TableName=table_name, Item=dict(indexed, g=S("g2")), **c)},
                   {"Update": dict(TableName=table_name, Key=indexed,
                                   UpdateExpression="SET n = :v", **c)},
                   {"Delete": dict(TableName=table_name, Key=indexed, **c)}):
        assert refused(ddb.transact_write_items, TransactItems=[action]) == msg
    item = ddb.get_item(TableName=table_name, Key=indexed, ConsistentRead=True)["Item"]
    assert item["g"] == S("g1") and item["n"] == N(1)


def test_condition_path_before_update_path(ddb, table_name, indexed):
    # the condition's paths are judged before the update's (DynamoDB Local)
    assert refused(ddb.update_item, TableName=table_name, Key=indexed,
                   UpdateExpression="SET g.x = :v",
                   ConditionExpression="attribute_exists(l.y)",
                   ExpressionAttributeValues={":v": N(1)}) == NOT_SCALAR + "IndexKey: l"


def test_condition_nested_nonkey_still_works(ddb, table_name, indexed):
    ddb.update_item(TableName=table_name, Key=indexed, UpdateExpression="SET n = :two",
                    ConditionExpression="o.x = :one AND attribute_exists(g) AND SK = :s",
                    ExpressionAttributeValues={":one": N(1), ":two": N(2), ":s": S("s")})
    assert refused(ddb.delete_item, code="ConditionalCheckFailedException",
                   TableName=table_name, Key=indexed, ConditionExpression="attribute_exists(o.y)")


@pytest.mark.parametrize("stmt, which", [
    # UPDATE and DELETE: the WHERE's other terms are the item's condition
    ("UPDATE \"{t}\" SET n = 2 WHERE PK = 'p' AND SK = 's' AND g.x = 1", "IndexKey: g"),
    ("DELETE FROM \"{t}\" WHERE PK = 'p' AND SK = 's' AND SK.x = 1", "Key: SK"),
    ("UPDATE \"{t}\" SET l[0] = 2 WHERE PK = 'p' AND SK = 's'", "IndexKey: l"),
    # SELECT: its filter and its projection
    ("SELECT * FROM \"{t}\" WHERE PK = 'p' AND g.x = 1", "IndexKey: g"),
    ("SELECT * FROM \"{t}\" WHERE l[0] = 'a'", "IndexKey: l"),
    ("SELECT PK.x FROM \"{t}\" WHERE PK = 'p'", "Key: PK"),
])
def test_partiql_path_into_key(ddb, table_name, indexed, stmt, which):
    # DynamoDB Local's PartiQL processors check the statement's condition,
    # update, filter and projection as the item operations do
    assert refused(ddb.execute_statement,
                   Statement=stmt.format(t=table_name)) == NOT_SCALAR + which
    item = ddb.get_item(TableName=table_name, Key=indexed, ConsistentRead=True)["Item"]
    assert item["n"] == N(1)


# ------------------------------------------------------------------------
# SET of an index key to a value of the wrong type
# ------------------------------------------------------------------------

@pytest.mark.parametrize("expr, values, actual", [
    ("SET g = :n", {":n": N(1)}, "N"),
    ("SET l = n + :n", {":n": N(1)}, "N"),
    ("SET g = list_append(:l, :l)", {":l": {"L": []}}, "L"),
    ("SET g = if_not_exists(g, :n)", {":n": N(1)}, "N"),
    ("ADD g :n", {":n": N(1)}, "N"),
    # before a path below an index key (dynalite's recorded 'set d.a = a add c :a')
    ("SET l.a = n ADD g :n", {":n": N(1)}, "N"),
    ("SET o.e = l[1], g = n + :n", {":n": N(1)}, "N"),
])
def test_update_index_key_type_from_request(ddb, table_name, indexed, expr, values, actual):
    kw = dict(TableName=table_name, Key=indexed, UpdateExpression=expr,
              ExpressionAttributeValues=values,
              # a condition that fails: the check comes before the item is read
              ConditionExpression="attribute_not_exists(PK)")
    which = "g" if ("g =" in expr or "ADD g" in expr) else "l"
    index = "ByG" if which == "g" else "ByL"
    msg = ("One or more parameter values were invalid: Type mismatch for Index Key "
           "%s Expected: S Actual: %s IndexName: %s" % (which, actual, index))
    assert refused(ddb.update_item, **kw) == msg
    # TransactWriteItems refuses it as a request error, not a cancellation
    assert refused(ddb.transact_write_items, TransactItems=[{"Update": dict(kw)}]) == msg


@pytest.mark.parametrize("expr, values, which, actual", [
    ("DELETE g :ss", {":ss": {"SS": ["g1"]}}, "g", "SS"),
    ("DELETE l :ns", {":ns": {"NS": ["1"]}}, "l", "NS"),
    ("DELETE m.a :bs, g :bs", {":bs": {"BS": [b"x"]}}, "g", "BS"),
])
def test_update_index_key_delete(ddb, table_name, indexed, expr, values, actual, which):
    # DELETE gives the key its set's type (dynalite judges it as ADD)
    index = "ByG" if which == "g" else "ByL"
    msg = ("One or more parameter values were invalid: Type mismatch for Index Key "
           "%s Expected: S Actual: %s IndexName: %s" % (which, actual, index))
    other = {"PK": S("p"), "SK": S("other")}    # no index keys: DELETE would do nothing
    for key in (indexed, other):
        kw = dict(TableName=table_name, Key=key, UpdateExpression=expr,
                  ExpressionAttributeValues=values)
        assert refused(ddb.update_item, **kw) == msg
        assert refused(ddb.transact_write_items, TransactItems=[{"Update": dict(kw)}]) == msg
    # AttributeUpdates' DELETE of a set too
    assert refused(ddb.update_item, TableName=table_name, Key=indexed,
                   AttributeUpdates={which: {"Action": "DELETE",
                                             "Value": list(values.values())[0]}}) == msg
    item = ddb.get_item(TableName=table_name, Key=indexed, ConsistentRead=True)["Item"]
    assert item["g"] == S("g1") and item["l"] == S("l1")
    assert "Item" not in ddb.get_item(TableName=table_name, Key=other, ConsistentRead=True)


@pytest.mark.parametrize("expr", ["SET g = n", "SET l = n", "SET g = o",
                                  "SET l = if_not_exists(nope, n)"])
def test_update_index_key_type_from_item(ddb, table_name, indexed, expr):
    assert refused(ddb.update_item, TableName=table_name, Key=indexed,
                   UpdateExpression=expr) == UNSUPPORTED
    item = ddb.get_item(TableName=table_name, Key=indexed, ConsistentRead=True)["Item"]
    assert item["g"] == S("g1") and item["l"] == S("l1")
    # in a transaction it depends on the item: a ValidationError reason
    with pytest.raises(ClientError) as e:
        ddb.transact_write_items(TransactItems=[{"Update": dict(
            TableName=table_name, Key=indexed, UpdateExpression=expr)}])
    err = e.value.response["Error"]
    assert err["Code"] == "TransactionCanceledException", err
    reasons = e.value.response.get("CancellationReasons")
    assert reasons == [{"Code": "ValidationError", "Message": UNSUPPORTED}], reasons


def test_update_index_key_from_item_right_type(ddb, table_name, indexed):
    ddb.update_item(TableName=table_name, Key=indexed,
                    UpdateExpression="SET s2 = :s", ExpressionAttributeValues={":s": S("x")})
    ddb.update_item(TableName=table_name, Key=indexed,
                    UpdateExpression="SET g = s2, l = if_not_exists(l, n)")
    item = ddb.get_item(TableName=table_name, Key=indexed, ConsistentRead=True)["Item"]
    assert item["g"] == S("x") and item["l"] == S("l1")
