"""Local secondary indexes and Time to Live through boto3, unchanged but for
the endpoint URL and the key: CreateTable with LocalSecondaryIndexes,
DescribeTable, Query on an LSI (ordered, ConsistentRead, unprojected
attributes read from the table), its validation errors; UpdateTimeToLive
and DescribeTimeToLive with DynamoDB's statuses and errors, and the
background worker (the endpoint's cluster preloads ddb) deleting an
expired item within its interval."""
import json
import time

import pytest
from botocore.exceptions import ClientError

from conftest import psql, wait_for


def S(v):
    return {"S": v}


def N(v):
    return {"N": str(v)}


LSI = {"IndexName": "ByAmount",
       "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"},
                     {"AttributeName": "amount", "KeyType": "RANGE"}],
       "Projection": {"ProjectionType": "KEYS_ONLY"}}


def create_with_lsi(ddb, name, lsis):
    return ddb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"},
                   {"AttributeName": "SK", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"},
                              {"AttributeName": "SK", "AttributeType": "S"},
                              {"AttributeName": "amount", "AttributeType": "N"}],
        LocalSecondaryIndexes=lsis)


def test_lsi_create_describe_query(ddb, table_name):
    desc = create_with_lsi(ddb, table_name, [LSI])["TableDescription"]
    assert [i["IndexName"] for i in desc["LocalSecondaryIndexes"]] == ["ByAmount"]
    lsi = ddb.describe_table(TableName=table_name)["Table"]["LocalSecondaryIndexes"][0]
    assert lsi["KeySchema"] == LSI["KeySchema"]
    assert lsi["Projection"] == {"ProjectionType": "KEYS_ONLY"}
    assert lsi["IndexArn"].endswith(f"table/{table_name}/index/ByAmount")
    assert "IndexSizeBytes" in lsi and "ItemCount" in lsi

    for sk, amount, note in (("2024-01-01", 30, "a"), ("2024-01-02", 10, "b"),
                             ("2024-01-03", 20, "c")):
        ddb.put_item(TableName=table_name,
                     Item={"PK": S("CUST#1"), "SK": S(sk), "amount": N(amount), "note": S(note)})
    ddb.put_item(TableName=table_name, Item={"PK": S("CUST#1"), "SK": S("2024-01-04"), "note": S("no amount")})
    ddb.put_item(TableName=table_name, Item={"PK": S("CUST#2"), "SK": S("2024-01-01"), "amount": N(5)})

    # the index's order, strongly consistent, only the partition, sparse
    r = ddb.query(TableName=table_name, IndexName="ByAmount", ConsistentRead=True,
                  KeyConditionExpression="PK = :p", ExpressionAttributeValues={":p": S("CUST#1")})
    assert [i["amount"]["N"] for i in r["Items"]] == ["10", "20", "30"]
    assert all(set(i) == {"PK", "SK", "amount"} for i in r["Items"])
    r = ddb.query(TableName=table_name, IndexName="ByAmount", ScanIndexForward=False,
                  KeyConditionExpression="PK = :p AND amount > :a",
                  ExpressionAttributeValues={":p": S("CUST#1"), ":a": N(15)})
    assert [i["SK"]["S"] for i in r["Items"]] == ["2024-01-01", "2024-01-03"]

    # unprojected attributes come from the table
    r = ddb.query(TableName=table_name, IndexName="ByAmount", Select="ALL_ATTRIBUTES",
                  KeyConditionExpression="PK = :p", ExpressionAttributeValues={":p": S("CUST#1")})
    assert [i["note"]["S"] for i in r["Items"]] == ["b", "c", "a"]
    r = ddb.query(TableName=table_name, IndexName="ByAmount", ProjectionExpression="note",
                  KeyConditionExpression="PK = :p", ExpressionAttributeValues={":p": S("CUST#1")})
    assert r["Items"] == [{"note": S("b")}, {"note": S("c")}, {"note": S("a")}]

    # pagination through the index with boto3's paginator
    pages = ddb.get_paginator("query").paginate(
        TableName=table_name, IndexName="ByAmount", KeyConditionExpression="PK = :p",
        ExpressionAttributeValues={":p": S("CUST#1")}, PaginationConfig={"PageSize": 2})
    assert [i["amount"]["N"] for p in pages for i in p["Items"]] == ["10", "20", "30"]

    # a wrong-typed index key is refused and writes nothing
    with pytest.raises(ClientError) as e:
        ddb.put_item(TableName=table_name, Item={"PK": S("CUST#1"), "SK": S("2024-02-01"), "amount": S("lots")})
    assert e.value.response["Error"]["Code"] == "ValidationException"
    assert "Type mismatch for Index Key amount" in e.value.response["Error"]["Message"]
    assert "Item" not in ddb.get_item(TableName=table_name, Key={"PK": S("CUST#1"), "SK": S("2024-02-01")})

    # the index and the item collection sizes hold exactly the table's items
    verify = json.loads(psql(f"SELECT ddb_verify_gsi('{table_name}') ->> 'indexes'"))
    assert {"items": 5, "entries": 4, "IndexName": "ByAmount"} in verify
    assert {"items": 5, "collections": 2, "IndexName": "$collections"} in verify
    # ReturnItemCollectionMetrics: the collection of the item written
    r = ddb.put_item(TableName=table_name, Item={"PK": S("CUST#2"), "SK": S("2024-01-02")},
                     ReturnItemCollectionMetrics="SIZE")
    assert r["ItemCollectionMetrics"] == {"ItemCollectionKey": {"PK": S("CUST#2")},
                                          "SizeEstimateRangeGB": [0.0, 1.0]}
    ddb.delete_table(TableName=table_name)


def test_lsi_errors(ddb, table_name):
    with pytest.raises(ClientError) as e:
        ddb.create_table(
            TableName=table_name, BillingMode="PAY_PER_REQUEST",
            KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"},
                                  {"AttributeName": "amount", "AttributeType": "N"}],
            LocalSecondaryIndexes=[LSI])
    assert e.value.response["Error"]["Code"] == "ValidationException"
    assert "Table KeySchema does not have a range key" in e.value.response["Error"]["Message"]
    bad = dict(LSI, KeySchema=[{"AttributeName": "SK", "KeyType": "HASH"},
                               {"AttributeName": "amount", "KeyType": "RANGE"}])
    with pytest.raises(ClientError) as e:
        create_with_lsi(ddb, table_name, [bad])
    assert "does not have the same leading hash key" in e.value.response["Error"]["Message"]
    with pytest.raises(ClientError) as e:
        create_with_lsi(ddb, table_name, [dict(LSI, IndexName=f"i{n}x") for n in range(6)])
    assert "Number of LocalSecondaryIndexes exceeds per-table limit of 5" in e.value.response["Error"]["Message"]
    # nothing was created
    with pytest.raises(ClientError) as e:
        ddb.describe_table(TableName=table_name)
    assert e.value.response["Error"]["Code"] == "ResourceNotFoundException"


def test_ttl_update_describe_and_expiry(ddb, table_name):
    ddb.create_table(TableName=table_name, BillingMode="PAY_PER_REQUEST",
                     KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}])
    d = ddb.describe_time_to_live(TableName=table_name)["TimeToLiveDescription"]
    assert d == {"TimeToLiveStatus": "DISABLED"}

    r = ddb.update_time_to_live(TableName=table_name,
                                TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"})
    assert r["TimeToLiveSpecification"] == {"Enabled": True, "AttributeName": "expires"}
    d = ddb.describe_time_to_live(TableName=table_name)["TimeToLiveDescription"]
    assert d == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires"}

    # DynamoDB's errors: enabling twice, disabling another attribute
    with pytest.raises(ClientError) as e:
        ddb.update_time_to_live(TableName=table_name,
                                TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"})
    assert e.value.response["Error"] == {"Code": "ValidationException",
                                         "Message": "TimeToLive is already enabled"}
    with pytest.raises(ClientError) as e:
        ddb.update_time_to_live(TableName=table_name,
                                TimeToLiveSpecification={"Enabled": False, "AttributeName": "other"})
    assert e.value.response["Error"]["Message"] == \
        "TimeToLive is active on a different AttributeName: current AttributeName is expires"
    with pytest.raises(ClientError) as e:
        ddb.describe_time_to_live(TableName=table_name + "_missing")
    assert e.value.response["Error"]["Code"] == "ResourceNotFoundException"

    # the worker deletes an expired item within its interval (5 s by default)
    now = int(time.time())
    ddb.put_item(TableName=table_name, Item={"id": S("old"), "expires": N(now - 60)})
    ddb.put_item(TableName=table_name, Item={"id": S("new"), "expires": N(now + 3600)})
    ddb.put_item(TableName=table_name, Item={"id": S("none")})
    gone = wait_for(lambda: "Item" not in ddb.get_item(TableName=table_name, Key={"id": S("old")}),
                    timeout=20)
    assert gone, "the expired item was not deleted within 20 s"
    ids = sorted(i["id"]["S"] for i in ddb.scan(TableName=table_name)["Items"])
    assert ids == ["new", "none"]

    r = ddb.update_time_to_live(TableName=table_name,
                                TimeToLiveSpecification={"Enabled": False, "AttributeName": "expires"})
    assert r["TimeToLiveSpecification"] == {"Enabled": False, "AttributeName": "expires"}
    assert ddb.describe_time_to_live(TableName=table_name)["TimeToLiveDescription"] == \
        {"TimeToLiveStatus": "DISABLED"}
    ddb.delete_table(TableName=table_name)
