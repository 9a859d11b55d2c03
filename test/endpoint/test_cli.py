"""The AWS CLI (Debian's awscli) against the endpoint: the commands of the
issue, unchanged but for --endpoint-url."""
import json
import os
import subprocess

import pytest

from conftest import ENDPOINT, KEY_ID, SECRET

AWS = "/usr/bin/aws"


def aws(*args, check=True):
    env = dict(os.environ, AWS_ACCESS_KEY_ID=KEY_ID, AWS_SECRET_ACCESS_KEY=SECRET,
               AWS_DEFAULT_REGION="us-east-1", AWS_PAGER="", AWS_MAX_ATTEMPTS="1")
    r = subprocess.run([AWS, "dynamodb", *args, "--endpoint-url", ENDPOINT, "--output", "json"],
                       capture_output=True, text=True, env=env, timeout=120)
    if check:
        assert r.returncode == 0, r.stderr
    return json.loads(r.stdout) if r.stdout.strip() else r


def test_aws_cli(table_name):
    t = table_name
    d = aws("create-table", "--table-name", t,
            "--attribute-definitions", "AttributeName=PK,AttributeType=S", "AttributeName=SK,AttributeType=S",
            "--key-schema", "AttributeName=PK,KeyType=HASH", "AttributeName=SK,KeyType=RANGE",
            "--billing-mode", "PAY_PER_REQUEST")
    assert d["TableDescription"]["TableName"] == t
    aws("wait", "table-exists", "--table-name", t)
    for sk, total in (("ORDER#1", "10"), ("ORDER#2", "20"), ("PROFILE", None)):
        item = {"PK": {"S": "CUST#1"}, "SK": {"S": sk}}
        if total:
            item["total"] = {"N": total}
        aws("put-item", "--table-name", t, "--item", json.dumps(item))
    q = aws("query", "--table-name", t, "--key-condition-expression", "PK = :c AND begins_with(SK, :o)",
            "--expression-attribute-values", json.dumps({":c": {"S": "CUST#1"}, ":o": {"S": "ORDER#"}}),
            "--no-scan-index-forward")
    assert [i["SK"]["S"] for i in q["Items"]] == ["ORDER#2", "ORDER#1"]
    s = aws("scan", "--table-name", t)
    assert s["Count"] == 3
    d = aws("describe-table", "--table-name", t)
    assert d["Table"]["TableStatus"] == "ACTIVE"
    assert t in aws("list-tables")["TableNames"]
    g = aws("get-item", "--table-name", t, "--key", json.dumps({"PK": {"S": "CUST#1"}, "SK": {"S": "ORDER#2"}}))
    assert g["Item"]["total"] == {"N": "20"}
    r = aws("put-item", "--table-name", t, "--item", json.dumps({"PK": {"S": "CUST#1"}, "SK": {"S": "PROFILE"}}),
            "--condition-expression", "attribute_not_exists(PK)", check=False)
    assert r.returncode != 0 and "ConditionalCheckFailedException" in r.stderr
    # what Terraform reads of every table besides DescribeTable
    b = aws("describe-continuous-backups", "--table-name", t)
    assert b["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"] == {
        "PointInTimeRecoveryStatus": "DISABLED"}
    assert aws("describe-time-to-live", "--table-name", t)["TimeToLiveDescription"]
    aws("delete-table", "--table-name", t)
    r = aws("describe-continuous-backups", "--table-name", t, check=False)
    assert r.returncode != 0 and "TableNotFoundException" in r.stderr
