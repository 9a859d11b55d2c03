"""test/demo_endpoint.py: the demo's table through DynamoDB's HTTP API.

Run by test/demo.sh with the endpoint in DDB_ENDPOINT and an access key in
AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY: plain boto3 code, as an
application written for DynamoDB has it, pointed at PostgreSQL.
"""
import os

import boto3

endpoint = os.environ["DDB_ENDPOINT"]
ddb = boto3.client("dynamodb", endpoint_url=endpoint)
table = boto3.resource("dynamodb", endpoint_url=endpoint).Table("app")

print("ListTables:", ddb.list_tables()["TableNames"])

# GetItem of the row demo.sql inserted with SQL
profile = table.get_item(Key={"PK": "CUST#42", "SK": "PROFILE"})["Item"]
print("GetItem CUST#42/PROFILE:", profile)

# PutItem, create-only; a second time it fails as DynamoDB fails it
item = {"PK": "CUST#7", "SK": "PROFILE", "name": "Grace Hopper", "tier": "gold"}
table.put_item(Item=item)
try:
    table.put_item(Item=item, ConditionExpression="attribute_not_exists(PK)")
except ddb.exceptions.ConditionalCheckFailedException:
    print("PutItem CUST#7/PROFILE again, create-only: ConditionalCheckFailedException")

print("DescribeTable app:", {k: v for k, v in ddb.describe_table(TableName="app")["Table"].items()
                             if k in ("TableName", "KeySchema", "TableStatus")})
