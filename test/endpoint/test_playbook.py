"""The DynamoDB single-table playbook through boto3's low-level client,
unchanged but for the endpoint URL and the key: customers and their orders
in one table (PK/SK with prefixes), a sparse GSI of open orders, every
write landing in a PostgreSQL table that plain SQL reads."""
import pytest

from conftest import create_table, psql


def S(v):
    return {"S": v}


def N(v):
    return {"N": str(v)}


GSI1 = {"IndexName": "GSI1",
        "KeySchema": [{"AttributeName": "GSI1PK", "KeyType": "HASH"},
                      {"AttributeName": "GSI1SK", "KeyType": "RANGE"}],
        "Projection": {"ProjectionType": "ALL"}}
GSI1_ATTRS = [{"AttributeName": "GSI1PK", "AttributeType": "S"},
              {"AttributeName": "GSI1SK", "AttributeType": "S"}]


@pytest.fixture
def shop(ddb, table_name):
    """A table, and a GSI added with UpdateTable, waited for with boto3's
    waiter."""
    create_table(ddb, table_name)
    ddb.update_table(TableName=table_name, AttributeDefinitions=GSI1_ATTRS,
                     GlobalSecondaryIndexUpdates=[{"Create": GSI1}])
    ddb.get_waiter("table_exists").wait(TableName=table_name, WaiterConfig={"Delay": 1, "MaxAttempts": 5})
    yield table_name
    ddb.delete_table(TableName=table_name)


def test_create_table_with_a_gsi(ddb, table_name):
    """The playbook's usual start: CreateTable with GlobalSecondaryIndexes."""
    create_table(ddb, table_name, attrs={"GSI1PK": "S", "GSI1SK": "S"}, gsis=[GSI1])
    d = ddb.describe_table(TableName=table_name)["Table"]
    assert [g["IndexName"] for g in d["GlobalSecondaryIndexes"]] == ["GSI1"]
    assert d["GlobalSecondaryIndexes"][0]["IndexStatus"] == "ACTIVE"
    ddb.delete_table(TableName=table_name)


def load_orders(ddb, t):
    """A customer profile and five orders; the open ones (PENDING) carry
    the sparse GSI's keys."""
    ddb.put_item(TableName=t, Item={"PK": S("CUST#42"), "SK": S("PROFILE"), "name": S("Ada"), "version": N(1)})
    for i, (day, status) in enumerate([("2025-01-09", "DELIVERED"), ("2025-02-14", "PENDING"),
                                       ("2025-03-01", "SHIPPED"), ("2025-03-15", "PENDING"),
                                       ("2025-04-02", "DELIVERED")]):
        item = {"PK": S("CUST#42"), "SK": S(f"ORDER#{day}#{i}"), "status": S(status), "total": N(10 + i)}
        if status == "PENDING":
            item["GSI1PK"] = S("OPEN")
            item["GSI1SK"] = S(f"{day}#CUST#42")
        ddb.put_item(TableName=t, Item=item)


def test_describe_table(ddb, shop):
    d = ddb.describe_table(TableName=shop)["Table"]
    assert d["TableName"] == shop and d["TableStatus"] == "ACTIVE"
    assert {k["AttributeName"]: k["KeyType"] for k in d["KeySchema"]} == {"PK": "HASH", "SK": "RANGE"}
    assert d["TableArn"].endswith(f":table/{shop}")
    assert [g["IndexName"] for g in d["GlobalSecondaryIndexes"]] == ["GSI1"]
    assert shop in ddb.list_tables()["TableNames"]


def test_create_only_put(ddb, shop):
    """attribute_not_exists(PK): the second put of a key fails with
    ConditionalCheckFailedException and changes nothing."""
    item = {"PK": S("USER#ann"), "SK": S("PROFILE"), "email": S("ann@example.com")}
    ddb.put_item(TableName=shop, Item=item, ConditionExpression="attribute_not_exists(PK)")
    with pytest.raises(ddb.exceptions.ConditionalCheckFailedException):
        ddb.put_item(TableName=shop, Item=dict(item, email=S("other@example.com")),
                     ConditionExpression="attribute_not_exists(PK)")
    got = ddb.get_item(TableName=shop, Key={"PK": S("USER#ann"), "SK": S("PROFILE")})["Item"]
    assert got["email"] == S("ann@example.com")


def test_optimistic_locking(ddb, shop):
    """Update only if the version is the one read; a stale writer fails."""
    load_orders(ddb, shop)
    key = {"PK": S("CUST#42"), "SK": S("PROFILE")}
    v = int(ddb.get_item(TableName=shop, Key=key, ConsistentRead=True)["Item"]["version"]["N"])
    r = ddb.update_item(TableName=shop, Key=key, UpdateExpression="SET #n = :n, version = version + :one",
                        ConditionExpression="version = :v", ExpressionAttributeNames={"#n": "name"},
                        ExpressionAttributeValues={":n": S("Ada L."), ":one": N(1), ":v": N(v)},
                        ReturnValues="ALL_NEW")
    assert r["Attributes"]["version"] == N(v + 1)
    with pytest.raises(ddb.exceptions.ConditionalCheckFailedException):
        ddb.update_item(TableName=shop, Key=key, UpdateExpression="SET #n = :n, version = version + :one",
                        ConditionExpression="version = :v", ExpressionAttributeNames={"#n": "name"},
                        ExpressionAttributeValues={":n": S("stale"), ":one": N(1), ":v": N(v)})
    assert ddb.get_item(TableName=shop, Key=key)["Item"]["name"] == S("Ada L.")


def test_counter(ddb, shop):
    """ADD on a missing item creates it; counters return UPDATED_NEW."""
    key = {"PK": S("PAGE#home"), "SK": S("COUNTER")}
    for i in range(1, 6):
        r = ddb.update_item(TableName=shop, Key=key, UpdateExpression="ADD hits :one",
                            ExpressionAttributeValues={":one": N(1)}, ReturnValues="UPDATED_NEW")
        assert r["Attributes"] == {"hits": N(i)}


def test_begins_with_newest_first_with_limit(ddb, shop):
    """The latest two orders of a customer: begins_with on the sort key,
    ScanIndexForward = false, Limit = 2."""
    load_orders(ddb, shop)
    r = ddb.query(TableName=shop, KeyConditionExpression="PK = :c AND begins_with(SK, :o)",
                  ExpressionAttributeValues={":c": S("CUST#42"), ":o": S("ORDER#")},
                  ScanIndexForward=False, Limit=2)
    assert [i["SK"]["S"] for i in r["Items"]] == ["ORDER#2025-04-02#4", "ORDER#2025-03-15#3"]
    assert r["Count"] == 2 and "LastEvaluatedKey" in r


def test_paging_with_last_evaluated_key(ddb, shop):
    """Pages of two, each started at the previous LastEvaluatedKey, return
    every order once, in order."""
    load_orders(ddb, shop)
    seen, start = [], None
    for _ in range(10):
        kw = dict(TableName=shop, KeyConditionExpression="PK = :c AND begins_with(SK, :o)",
                  ExpressionAttributeValues={":c": S("CUST#42"), ":o": S("ORDER#")}, Limit=2)
        if start:
            kw["ExclusiveStartKey"] = start
        r = ddb.query(**kw)
        seen += [i["SK"]["S"] for i in r["Items"]]
        start = r.get("LastEvaluatedKey")
        if not start:
            break
    assert len(seen) == 5 and seen == sorted(seen)


def test_start_key_errors(ddb, shop):
    """A start key that is not the read's key attributes, or that lies
    outside the key condition, is refused in DynamoDB's words: a Query's
    and an index Scan's "The provided starting key is invalid" stands
    alone, a table Scan's gives the key-schema reason."""
    load_orders(ddb, shop)

    def refused(call, **kw):
        with pytest.raises(ddb.exceptions.ClientError) as e:
            call(TableName=shop, **kw)
        assert e.value.response["Error"]["Code"] == "ValidationException"
        return e.value.response["Error"]["Message"]

    q = dict(KeyConditionExpression="PK = :c", ExpressionAttributeValues={":c": S("CUST#42")})
    gq = dict(IndexName="GSI1", KeyConditionExpression="GSI1PK = :s",
              ExpressionAttributeValues={":s": S("PENDING")})
    for start in ({"PK": S("CUST#42")}, {"PK": S("CUST#42"), "SK": S("PROFILE"), "x": S("y")},
                  {"PK": S("CUST#42"), "x": S("y")}):
        assert refused(ddb.query, ExclusiveStartKey=start, **q) == "The provided starting key is invalid"
    assert refused(ddb.query, ExclusiveStartKey={"PK": S("CUST#42"), "SK": S("PROFILE")},
                   **gq) == "The provided starting key is invalid"
    assert refused(ddb.scan, IndexName="GSI1", ExclusiveStartKey={"PK": S("CUST#42"), "SK": S("PROFILE")}) == \
        "The provided starting key is invalid"
    assert refused(ddb.scan, ExclusiveStartKey={"PK": S("CUST#42")}) == \
        "The provided starting key is invalid: The provided key element does not match the schema"
    assert refused(ddb.query, ExclusiveStartKey={"PK": S("CUST#7"), "SK": S("PROFILE")}, **q) == \
        "The provided starting key is outside query boundaries based on provided conditions"
    assert refused(ddb.query, KeyConditionExpression="PK = :c AND SK > :s",
                   ExpressionAttributeValues={":c": S("CUST#42"), ":s": S("P")},
                   ExclusiveStartKey={"PK": S("CUST#42"), "SK": S("ORDER#2025-01-09#0")}) == \
        "The provided starting key does not match the range key predicate"


def test_sparse_gsi(ddb, shop):
    """Only items with the GSI's keys are in the index: the open orders,
    oldest first."""
    load_orders(ddb, shop)
    r = ddb.query(TableName=shop, IndexName="GSI1", KeyConditionExpression="GSI1PK = :o",
                  ExpressionAttributeValues={":o": S("OPEN")})
    assert [i["SK"]["S"] for i in r["Items"]] == ["ORDER#2025-02-14#1", "ORDER#2025-03-15#3"]
    assert all(i["status"] == S("PENDING") for i in r["Items"])


def test_filter_and_projection(ddb, shop):
    load_orders(ddb, shop)
    r = ddb.query(TableName=shop, KeyConditionExpression="PK = :c AND begins_with(SK, :o)",
                  FilterExpression="#s = :s", ProjectionExpression="SK, #t",
                  ExpressionAttributeNames={"#s": "status", "#t": "total"},
                  ExpressionAttributeValues={":c": S("CUST#42"), ":o": S("ORDER#"), ":s": S("DELIVERED")})
    assert r["Count"] == 2 and r["ScannedCount"] == 5
    assert all(set(i) == {"SK", "total"} for i in r["Items"])


def test_legacy_parameters(ddb, shop):
    """The pre-expression parameters many libraries still send:
    KeyConditions, QueryFilter, AttributesToGet, Expected, AttributeUpdates,
    ScanFilter, ConditionalOperator."""
    load_orders(ddb, shop)
    r = ddb.query(TableName=shop, KeyConditions={
        "PK": {"AttributeValueList": [S("CUST#42")], "ComparisonOperator": "EQ"},
        "SK": {"AttributeValueList": [S("ORDER#2025-03")], "ComparisonOperator": "BEGINS_WITH"}},
        QueryFilter={"status": {"AttributeValueList": [S("PENDING")], "ComparisonOperator": "EQ"}},
        AttributesToGet=["SK", "status"])
    assert r["Items"] == [{"SK": S("ORDER#2025-03-15#3"), "status": S("PENDING")}]

    key = {"PK": S("CUST#42"), "SK": S("PROFILE")}
    ddb.update_item(TableName=shop, Key=key,
                    AttributeUpdates={"tier": {"Value": S("gold"), "Action": "PUT"},
                                      "version": {"Value": N(1), "Action": "ADD"}},
                    Expected={"version": {"Value": N(1), "ComparisonOperator": "EQ"}})
    with pytest.raises(ddb.exceptions.ConditionalCheckFailedException):
        ddb.put_item(TableName=shop, Item={"PK": S("CUST#42"), "SK": S("PROFILE")},
                     Expected={"tier": {"Value": S("silver")}, "version": {"Exists": False}},
                     ConditionalOperator="OR")
    got = ddb.get_item(TableName=shop, Key=key, AttributesToGet=["tier", "version"])["Item"]
    assert got == {"tier": S("gold"), "version": N(2)}

    r = ddb.scan(TableName=shop, ScanFilter={"total": {"AttributeValueList": [N(12)], "ComparisonOperator": "GE"}},
                 Select="COUNT")
    assert r["Count"] == 3


def test_error_classes(ddb, shop):
    """DynamoDB's errors arrive as boto3's exception classes, with
    DynamoDB's messages."""
    with pytest.raises(ddb.exceptions.ResourceNotFoundException) as e:
        ddb.get_item(TableName="no_such_table", Key={"PK": S("x"), "SK": S("y")})
    assert e.value.response["Error"]["Message"] == "Requested resource not found"
    with pytest.raises(ddb.exceptions.ClientError) as e:
        ddb.get_item(TableName=shop, Key={"PK": S("x")})
    assert e.value.response["Error"]["Code"] == "ValidationException"
    assert e.value.response["Error"]["Message"] == "The provided key element does not match the schema"
    with pytest.raises(ddb.exceptions.ClientError) as e:
        ddb.put_item(TableName=shop, Item={"PK": N(1), "SK": S("y")})
    assert e.value.response["Error"]["Code"] == "ValidationException"
    with pytest.raises(ddb.exceptions.ResourceInUseException):
        create_table(ddb, shop)
    with pytest.raises(ddb.exceptions.ConditionalCheckFailedException):
        ddb.delete_item(TableName=shop, Key={"PK": S("x"), "SK": S("y")},
                        ConditionExpression="attribute_exists(PK)")


def test_writes_land_in_a_sql_table(ddb, shop):
    """Every write is a row of a PostgreSQL table that plain SQL reads."""
    load_orders(ddb, shop)
    ddb.delete_item(TableName=shop, Key={"PK": S("CUST#42"), "SK": S("ORDER#2025-01-09#0")})
    rows = psql(f'SELECT "SK", item->>\'status\' FROM "{shop}" WHERE "PK" = \'CUST#42\' ORDER BY "SK"')
    assert rows.splitlines() == [
        "ORDER#2025-02-14#1|PENDING", "ORDER#2025-03-01#2|SHIPPED", "ORDER#2025-03-15#3|PENDING",
        "ORDER#2025-04-02#4|DELIVERED", "PROFILE|"]


def test_scan_segments(ddb, shop):
    """A parallel scan's segments partition the table."""
    load_orders(ddb, shop)
    keys = []
    for seg in range(3):
        r = ddb.scan(TableName=shop, Segment=seg, TotalSegments=3)
        keys += [i["SK"]["S"] for i in r["Items"]]
    assert sorted(keys) == sorted(set(keys)) and len(keys) == 6


def test_condition_failure_returns_the_item(ddb, shop):
    """ReturnValuesOnConditionCheckFailure = ALL_OLD: the error response
    carries the item next to __type and message, as DynamoDB's does."""
    from conftest import Raw
    ddb.put_item(TableName=shop, Item={"PK": S("K"), "SK": S("1"), "v": N(7)})
    r, data = Raw().post({"TableName": shop, "Item": {"PK": S("K"), "SK": S("1")},
                          "ConditionExpression": "attribute_not_exists(PK)",
                          "ReturnValuesOnConditionCheckFailure": "ALL_OLD"},
                         target="DynamoDB_20120810.PutItem")
    import json
    body = json.loads(data)
    assert r.status == 400
    assert body["__type"].endswith("#ConditionalCheckFailedException")
    assert body["message"] == "The conditional request failed"
    assert body["Item"] == {"PK": S("K"), "SK": S("1"), "v": N(7)}
