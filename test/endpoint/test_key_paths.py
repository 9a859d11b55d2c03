"""UpdateExpression paths into key attributes: a table's or an index's key
is a scalar, so DynamoDB refuses any path below one (k.x, k[0]) -- as an
action's target or inside a SET value -- with "Key attributes must be
scalars; ...: Key: k" or "...: IndexKey: k", before the item is read.
The texts are the service's, as recorded in dynalite's tests and quoted
in ScyllaDB's GSI tests, which run against DynamoDB."""
import pytest
from botocore.exceptions import ClientError

NOT_SCALAR = ("Key attributes must be scalars; list random access '[]' and "
              "map lookup '.' are not allowed: ")


def S(v):
    return {"S": v}


def N(v):
    return {"N": str(v)}


def refused(call, **kw):
    with pytest.raises(ClientError) as e:
        call(**kw)
    err = e.value.response["Error"]
    assert err["Code"] == "ValidationException", err
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
    ddb.put_item(TableName=table_name, Item=dict(key, g=S("g1"), l=S("l1"), m={"M": {}}))
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
