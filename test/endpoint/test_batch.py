"""Batches and transactions through boto3, unchanged: the resource API's
batch_writer (25-item BatchWriteItem calls), BatchGetItem, and
TransactWriteItems with a failing ConditionCheck (TransactionCanceledException
and its CancellationReasons), ClientRequestToken replay, TransactGetItems.
Every write lands in the PostgreSQL table and its GSI."""
import uuid

import pytest

from conftest import create_table, psql, resource


def S(v):
    return {"S": v}


def N(v):
    return {"N": str(v)}


GSI1 = {"IndexName": "GSI1",
        "KeySchema": [{"AttributeName": "GSI1PK", "KeyType": "HASH"},
                      {"AttributeName": "GSI1SK", "KeyType": "RANGE"}],
        "Projection": {"ProjectionType": "ALL"}}


@pytest.fixture
def shop(ddb, table_name):
    create_table(ddb, table_name, attrs={"GSI1PK": "S", "GSI1SK": "S"}, gsis=[GSI1])
    yield table_name
    ddb.delete_table(TableName=table_name)


def test_batch_writer_loads_and_deletes(ddb, shop):
    """boto3's batch_writer sends 25 requests a call; 60 puts, then 10
    deletes, land in the table, its GSI and the PostgreSQL relation."""
    table = resource().Table(shop)
    with table.batch_writer() as batch:
        for i in range(60):
            item = {"PK": "CUST#7", "SK": f"ORDER#{i:03d}", "total": i}
            if i % 3 == 0:
                item.update(GSI1PK="OPEN", GSI1SK=f"{i:03d}")
            batch.put_item(Item=item)
    with table.batch_writer() as batch:
        for i in range(50, 60):
            batch.delete_item(Key={"PK": "CUST#7", "SK": f"ORDER#{i:03d}"})
    got = ddb.query(TableName=shop, KeyConditionExpression="PK = :p",
                    ExpressionAttributeValues={":p": S("CUST#7")}, Select="COUNT")
    assert got["Count"] == 50
    opened = ddb.query(TableName=shop, IndexName="GSI1", KeyConditionExpression="GSI1PK = :o",
                       ExpressionAttributeValues={":o": S("OPEN")})
    assert [i["SK"]["S"] for i in opened["Items"]] == [f"ORDER#{i:03d}" for i in range(0, 50, 3)]
    assert psql(f'SELECT count(*) FROM "{shop}"') == "50"


def test_batch_write_limits(ddb, shop):
    """26 requests, or two for one item: ValidationException, nothing written."""
    reqs = [{"PutRequest": {"Item": {"PK": S("P"), "SK": S(f"{i}")}}} for i in range(26)]
    with pytest.raises(ddb.exceptions.ClientError) as e:
        ddb.batch_write_item(RequestItems={shop: reqs})
    assert e.value.response["Error"]["Code"] == "ValidationException"
    assert "Member must have length less than or equal to 25" in e.value.response["Error"]["Message"]
    dup = [{"PutRequest": {"Item": {"PK": S("P"), "SK": S("1")}}},
           {"DeleteRequest": {"Key": {"PK": S("P"), "SK": S("1")}}}]
    with pytest.raises(ddb.exceptions.ClientError) as e:
        ddb.batch_write_item(RequestItems={shop: dup})
    assert e.value.response["Error"]["Message"] == "Provided list of item keys contains duplicates"
    assert ddb.scan(TableName=shop, Select="COUNT")["Count"] == 0


def test_batch_get_item(ddb, shop):
    """100 keys: the items that exist, in any order; no UnprocessedKeys."""
    ddb.batch_write_item(RequestItems={shop: [
        {"PutRequest": {"Item": {"PK": S("P"), "SK": S(f"{i:02d}"), "n": N(i)}}} for i in range(20)]})
    keys = [{"PK": S("P"), "SK": S(f"{i:02d}")} for i in range(100)]
    got = ddb.batch_get_item(RequestItems={shop: {"Keys": keys, "ProjectionExpression": "SK, n"}})
    assert got["UnprocessedKeys"] == {}
    assert sorted(int(i["n"]["N"]) for i in got["Responses"][shop]) == list(range(20))
    assert all(set(i) == {"SK", "n"} for i in got["Responses"][shop])
    # the resource API's batch_get_item, in Python values
    r = resource().batch_get_item(RequestItems={shop: {"Keys": [{"PK": "P", "SK": "03"}]}})
    assert r["Responses"][shop] == [{"PK": "P", "SK": "03", "n": 3}]


def order_transaction(shop, order, qty_needed):
    """An order, a stock decrement guarded by a ConditionCheck of the
    customer, and a uniqueness marker."""
    return [
        {"ConditionCheck": {"TableName": shop, "Key": {"PK": S("CUST#1"), "SK": S("PROFILE")},
                            "ConditionExpression": "#s = :active",
                            "ExpressionAttributeNames": {"#s": "status"},
                            "ExpressionAttributeValues": {":active": S("ACTIVE")},
                            "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}},
        {"Update": {"TableName": shop, "Key": {"PK": S("ITEM#apple"), "SK": S("STOCK")},
                    "UpdateExpression": "SET qty = qty - :n", "ConditionExpression": "qty >= :n",
                    "ExpressionAttributeValues": {":n": N(qty_needed)}}},
        {"Put": {"TableName": shop, "Item": {"PK": S("CUST#1"), "SK": S(f"ORDER#{order}"),
                                             "GSI1PK": S("OPEN"), "GSI1SK": S(order)},
                 "ConditionExpression": "attribute_not_exists(PK)"}},
    ]


def test_transact_write_items_and_cancellation_reasons(ddb, shop):
    ddb.put_item(TableName=shop, Item={"PK": S("CUST#1"), "SK": S("PROFILE"), "status": S("ACTIVE")})
    ddb.put_item(TableName=shop, Item={"PK": S("ITEM#apple"), "SK": S("STOCK"), "qty": N(5)})
    ddb.transact_write_items(TransactItems=order_transaction(shop, "A1", 2))
    stock = ddb.get_item(TableName=shop, Key={"PK": S("ITEM#apple"), "SK": S("STOCK")})["Item"]
    assert stock["qty"] == N(3)

    # the customer is suspended: the ConditionCheck fails, nothing is written
    ddb.put_item(TableName=shop, Item={"PK": S("CUST#1"), "SK": S("PROFILE"), "status": S("SUSPENDED")})
    with pytest.raises(ddb.exceptions.TransactionCanceledException) as e:
        ddb.transact_write_items(TransactItems=order_transaction(shop, "A2", 1))
    err = e.value.response
    assert err["Error"]["Message"] == (
        "Transaction cancelled, please refer cancellation reasons for specific reasons "
        "[ConditionalCheckFailed, None, None]")
    assert err["CancellationReasons"] == [
        {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed",
         "Item": {"PK": S("CUST#1"), "SK": S("PROFILE"), "status": S("SUSPENDED")}},
        {"Code": "None"}, {"Code": "None"}]
    stock = ddb.get_item(TableName=shop, Key={"PK": S("ITEM#apple"), "SK": S("STOCK")})["Item"]
    assert stock["qty"] == N(3)
    assert "Item" not in ddb.get_item(TableName=shop, Key={"PK": S("CUST#1"), "SK": S("ORDER#A2")})

    # two failures: both reasons, in request order
    with pytest.raises(ddb.exceptions.TransactionCanceledException) as e:
        ddb.transact_write_items(TransactItems=order_transaction(shop, "A1", 9))
    assert [r["Code"] for r in e.value.response["CancellationReasons"]] == [
        "ConditionalCheckFailed", "ConditionalCheckFailed", "ConditionalCheckFailed"]

    # the GSI holds exactly the committed order
    opened = ddb.query(TableName=shop, IndexName="GSI1", KeyConditionExpression="GSI1PK = :o",
                       ExpressionAttributeValues={":o": S("OPEN")})
    assert [i["SK"]["S"] for i in opened["Items"]] == ["ORDER#A1"]

    # two actions on one item: a ValidationException, not a cancellation
    with pytest.raises(ddb.exceptions.ClientError) as e:
        ddb.transact_write_items(TransactItems=[
            {"ConditionCheck": {"TableName": shop, "Key": {"PK": S("ITEM#apple"), "SK": S("STOCK")},
                                "ConditionExpression": "attribute_exists(PK)"}},
            {"Delete": {"TableName": shop, "Key": {"PK": S("ITEM#apple"), "SK": S("STOCK")}}}])
    assert e.value.response["Error"]["Code"] == "ValidationException"
    assert e.value.response["Error"]["Message"] == \
        "Transaction request cannot include multiple operations on one item"


def test_client_request_token_replay(ddb, shop):
    """The same request with the same token writes once; another request
    with that token is IdempotentParameterMismatchException."""
    ddb.put_item(TableName=shop, Item={"PK": S("CTR"), "SK": S("0"), "n": N(0)})
    token = str(uuid.uuid4())
    items = [{"Update": {"TableName": shop, "Key": {"PK": S("CTR"), "SK": S("0")},
                         "UpdateExpression": "ADD n :one", "ExpressionAttributeValues": {":one": N(1)}}}]
    for _ in range(3):
        ddb.transact_write_items(TransactItems=items, ClientRequestToken=token)
    assert ddb.get_item(TableName=shop, Key={"PK": S("CTR"), "SK": S("0")})["Item"]["n"] == N(1)
    other = [{"Update": dict(items[0]["Update"], ExpressionAttributeValues={":one": N(2)})}]
    with pytest.raises(ddb.exceptions.IdempotentParameterMismatchException):
        ddb.transact_write_items(TransactItems=other, ClientRequestToken=token)
    # boto3 fills in a fresh token itself when none is given: each call writes
    ddb.transact_write_items(TransactItems=items)
    ddb.transact_write_items(TransactItems=items)
    assert ddb.get_item(TableName=shop, Key={"PK": S("CTR"), "SK": S("0")})["Item"]["n"] == N(3)


def test_transact_get_items(ddb, shop):
    ddb.put_item(TableName=shop, Item={"PK": S("A"), "SK": S("1"), "v": S("x")})
    ddb.put_item(TableName=shop, Item={"PK": S("A"), "SK": S("3"), "v": S("x")})
    got = ddb.transact_get_items(TransactItems=[
        {"Get": {"TableName": shop, "Key": {"PK": S("A"), "SK": S("3")}}},
        {"Get": {"TableName": shop, "Key": {"PK": S("A"), "SK": S("2")}}},
        {"Get": {"TableName": shop, "Key": {"PK": S("A"), "SK": S("1")}, "ProjectionExpression": "v"}}])
    assert got["Responses"] == [{"Item": {"PK": S("A"), "SK": S("3"), "v": S("x")}}, {},
                                {"Item": {"v": S("x")}}]
