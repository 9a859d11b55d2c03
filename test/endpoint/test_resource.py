"""boto3's resource API and paginators: Python values instead of typed
JSON, Key(...) & Attr(...) conditions built by boto3."""
from decimal import Decimal

import pytest
from boto3.dynamodb.conditions import Attr, Key

from conftest import client, create_table, resource


@pytest.fixture
def table(table_name):
    create_table(client(), table_name)
    t = resource().Table(table_name)
    t.wait_until_exists()
    yield t
    t.delete()


def test_put_get_with_python_values(table):
    """Strings, numbers (Decimal), booleans, None, lists, maps, sets and
    bytes go through the endpoint and come back the same."""
    item = {"PK": "CUST#7", "SK": "PROFILE", "name": "Grace", "age": Decimal("85"),
            "ratio": Decimal("0.125"), "active": True, "nick": None,
            "tags": {"admiral", "cobol"}, "scores": [Decimal(1), "two", {"three": Decimal(3)}],
            "address": {"city": "Arlington", "zip": "22201"}, "avatar": b"\x00\x01\xff"}
    table.put_item(Item=item)
    got = table.get_item(Key={"PK": "CUST#7", "SK": "PROFILE"})["Item"]
    assert got["avatar"].value == b"\x00\x01\xff"
    got["avatar"] = b"\x00\x01\xff"
    assert got == item
    assert table.item_count >= 0   # DescribeTable through the resource


def test_query_key_conditions(table):
    """Table.query(KeyConditionExpression=Key('PK').eq(...) &
    Key('SK').begins_with(...)), newest first, with a filter on Attr."""
    with_orders(table)
    r = table.query(KeyConditionExpression=Key("PK").eq("CUST#7") & Key("SK").begins_with("ORDER#2025-0"),
                    ScanIndexForward=False)
    assert [i["SK"] for i in r["Items"]] == [f"ORDER#2025-0{m}" for m in (9, 8, 7, 6, 5, 4, 3, 2, 1)]
    r = table.query(KeyConditionExpression=Key("PK").eq("CUST#7") & Key("SK").between("ORDER#2025-03", "ORDER#2025-05"),
                    FilterExpression=Attr("total").gte(Decimal(4)) & Attr("status").ne("CANCELLED"))
    assert [i["SK"] for i in r["Items"]] == ["ORDER#2025-04", "ORDER#2025-05"]


def with_orders(table):
    for m in range(1, 13):
        table.put_item(Item={"PK": "CUST#7", "SK": f"ORDER#2025-{m:02d}", "total": Decimal(m),
                             "status": "CANCELLED" if m == 3 else "DELIVERED"})


def test_update_and_delete(table):
    table.put_item(Item={"PK": "a", "SK": "b", "n": 1})
    r = table.update_item(Key={"PK": "a", "SK": "b"}, UpdateExpression="SET n = n + :d, tags = :t",
                          ExpressionAttributeValues={":d": 41, ":t": ["x"]}, ReturnValues="ALL_NEW")
    assert r["Attributes"] == {"PK": "a", "SK": "b", "n": 42, "tags": ["x"]}
    r = table.delete_item(Key={"PK": "a", "SK": "b"}, ReturnValues="ALL_OLD")
    assert r["Attributes"]["n"] == 42
    assert "Item" not in table.get_item(Key={"PK": "a", "SK": "b"})


def test_paginators(table):
    """boto3's paginators follow LastEvaluatedKey for Query and Scan."""
    with_orders(table)
    c = client()
    pages = list(c.get_paginator("query").paginate(
        TableName=table.name, KeyConditionExpression="PK = :p",
        ExpressionAttributeValues={":p": {"S": "CUST#7"}}, PaginationConfig={"PageSize": 5}))
    assert [p["Count"] for p in pages] in ([5, 5, 2], [5, 5, 2, 0])
    assert [i["SK"]["S"] for p in pages for i in p["Items"]] == [f"ORDER#2025-{m:02d}" for m in range(1, 13)]
    scanned = [i["SK"]["S"] for p in c.get_paginator("scan").paginate(
        TableName=table.name, PaginationConfig={"PageSize": 4}) for i in p["Items"]]
    assert sorted(scanned) == [f"ORDER#2025-{m:02d}" for m in range(1, 13)]
    tables = [n for p in c.get_paginator("list_tables").paginate(PaginationConfig={"PageSize": 1})
              for n in p["TableNames"]]
    assert table.name in tables


def test_resource_scan_with_attr(table):
    with_orders(table)
    r = table.scan(FilterExpression=Attr("status").eq("CANCELLED"))
    assert [i["SK"] for i in r["Items"]] == ["ORDER#2025-03"]


def test_conditional_failure_in_resource_api(table):
    table.put_item(Item={"PK": "a", "SK": "b"})
    with pytest.raises(table.meta.client.exceptions.ConditionalCheckFailedException):
        table.put_item(Item={"PK": "a", "SK": "b"}, ConditionExpression=Attr("PK").not_exists())


def test_table_arn_as_table_name(ddb, table_name):
    """boto3 sends a table's ARN as TableName (its model takes 1-1024
    characters there since DynamoDB took ARNs): the ARN DescribeTable gives
    works for the item, read and batch operations, and a batch's answer is
    keyed by it."""
    arn = create_table(ddb, table_name)["TableDescription"]["TableArn"]
    try:
        ddb.put_item(TableName=arn, Item={"PK": {"S": "p"}, "SK": {"S": "1"}, "v": {"N": "1"}})
        assert ddb.get_item(TableName=arn, Key={"PK": {"S": "p"}, "SK": {"S": "1"}})["Item"]["v"] == {"N": "1"}
        assert ddb.describe_table(TableName=arn)["Table"]["TableName"] == table_name
        assert ddb.query(TableName=arn, KeyConditionExpression="PK = :p",
                         ExpressionAttributeValues={":p": {"S": "p"}})["Count"] == 1
        got = ddb.batch_get_item(RequestItems={arn: {"Keys": [{"PK": {"S": "p"}, "SK": {"S": "1"}}]}})
        assert list(got["Responses"]) == [arn]
    finally:
        ddb.delete_table(TableName=table_name)
