"""Each request runs as its key's role: GRANTs, the functions' own
privilege checks and the refusal of tables with row-level security apply
to HTTP clients unchanged."""
import json
import os

import pytest

from conftest import (READER_KEY_ID, READER_SECRET, WORK, Raw, client, create_table, healthy, psql,
                      wait_for, worker_pids)


@pytest.fixture
def owned(ddb, table_name):
    create_table(ddb, table_name)
    ddb.put_item(TableName=table_name, Item={"PK": {"S": "a"}, "SK": {"S": "b"}, "v": {"N": "1"}})
    yield table_name
    ddb.delete_table(TableName=table_name)


def test_table_belongs_to_the_keys_role(owned):
    assert psql(f"SELECT tableowner FROM pg_tables WHERE tablename = '{owned}'") == "ddb_app"


def test_no_grant_no_access(owned):
    """Without privileges the reader's key gets AccessDeniedException."""
    reader = client(READER_KEY_ID, READER_SECRET)
    with pytest.raises(reader.exceptions.ClientError) as e:
        reader.get_item(TableName=owned, Key={"PK": {"S": "a"}, "SK": {"S": "b"}})
    assert e.value.response["Error"]["Code"] == "AccessDeniedException"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    # DynamoDB's words (and its capital "Message"), not PostgreSQL's, which
    # name the server's tables and schemas
    assert e.value.response["Error"]["Message"] == (
        "User: arn:aws:iam::000000000000:user/ddb_reader is not authorized to perform: dynamodb:GetItem")
    r = Raw()
    resp, data = r.post({"TableName": owned, "Key": {"PK": {"S": "a"}, "SK": {"S": "b"}}},
                        target="DynamoDB_20120810.GetItem", key_id=READER_KEY_ID, secret=READER_SECRET)
    r.close()
    assert "Message" in json.loads(data) and "permission denied" not in data.decode()


def test_select_grant_allows_reads_only(owned):
    reader = client(READER_KEY_ID, READER_SECRET)
    psql(f'GRANT SELECT ON "{owned}" TO ddb_reader')
    got = reader.get_item(TableName=owned, Key={"PK": {"S": "a"}, "SK": {"S": "b"}})
    assert got["Item"]["v"] == {"N": "1"}
    with pytest.raises(reader.exceptions.ClientError) as e:
        reader.put_item(TableName=owned, Item={"PK": {"S": "a"}, "SK": {"S": "c"}})
    assert e.value.response["Error"]["Code"] == "AccessDeniedException"
    with pytest.raises(reader.exceptions.ClientError) as e:
        reader.delete_table(TableName=owned)
    assert e.value.response["Error"]["Code"] in ("AccessDeniedException", "ResourceNotFoundException")
    assert psql(f"SELECT count(*) FROM \"{owned}\"") == "1"


def test_row_level_security_is_refused(ddb, owned):
    """ddb's functions refuse tables where row-level security applies."""
    psql(f'ALTER TABLE "{owned}" ENABLE ROW LEVEL SECURITY; ALTER TABLE "{owned}" FORCE ROW LEVEL SECURITY')
    with pytest.raises(ddb.exceptions.ClientError) as e:
        ddb.get_item(TableName=owned, Key={"PK": {"S": "a"}, "SK": {"S": "b"}})
    assert e.value.response["Error"]["Code"] == "AccessDeniedException"
    assert "row-level security" in e.value.response["Error"]["Message"]
    psql(f'ALTER TABLE "{owned}" DISABLE ROW LEVEL SECURITY')


def test_refused_table_is_a_client_error(owned):
    """A table with a CHECK constraint or a trigger is one the item
    functions refuse to write: a ValidationException in ddb's words, not
    an InternalServerError that SDKs retry for half a minute."""
    ddb = client(retries=3)
    psql(f'ALTER TABLE "{owned}" ADD CONSTRAINT has_v CHECK (item ? \'v\')')
    with pytest.raises(ddb.exceptions.ClientError) as e:
        ddb.put_item(TableName=owned, Item={"PK": {"S": "a"}, "SK": {"S": "c"}, "v": {"N": "1"}})
    assert e.value.response["Error"]["Code"] == "ValidationException"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert e.value.response["ResponseMetadata"]["RetryAttempts"] == 0
    assert e.value.response["Error"]["Message"] == (
        f'ddb functions cannot write to table "{owned}" because it has CHECK constraint "has_v"')
    # reads are not refused; SQL writes still run the check
    assert "Item" in ddb.get_item(TableName=owned, Key={"PK": {"S": "a"}, "SK": {"S": "b"}})
    psql(f'ALTER TABLE "{owned}" DROP CONSTRAINT has_v')


def test_failed_write_rolls_back(ddb, owned):
    """A request that fails part-way changes nothing: one transaction per
    request."""
    with pytest.raises(ddb.exceptions.ClientError):
        ddb.put_item(TableName=owned, Item={"PK": {"S": "a"}, "SK": {"S": "b"}, "v": {"N": "2"}},
                     ConditionExpression="v = :x", ExpressionAttributeValues={":x": {"N": "9"}})
    assert psql(f"SELECT item->>'v' FROM \"{owned}\"") == "1"


def test_database_settings_do_not_move_the_namespace(ddb, owned):
    """ddb.schema, ddb.region and ddb.account_id reach the workers from the
    server's configuration only.  A database's owner, who need not be a
    superuser, may ALTER DATABASE ... SET them; the workers, connecting as
    the bootstrap superuser, took such a setting and looked every table up
    in the schema it named (a superuser's writes then went to the owner's
    tables).  Now they refuse it with a WARNING when they connect, and
    find the table where the server's configuration says."""
    log = os.path.join(WORK, "server.log")
    psql("CREATE SCHEMA decoy")
    before = worker_pids()
    log_size = os.path.getsize(log)
    try:
        psql("ALTER DATABASE postgres SET ddb.schema = 'decoy'")
        psql("ALTER DATABASE postgres SET ddb.region = 'eu-west-9'")
        psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'ddb http'")
        assert wait_for(lambda: healthy() and len(worker_pids()) == 2
                        and set(worker_pids()).isdisjoint(before), 60)
        c = client()            # (the old workers took its connections with them)
        for _ in range(4):      # (each request may go to either worker)
            got = c.get_item(TableName=owned, Key={"PK": {"S": "a"}, "SK": {"S": "b"}})
            assert got["Item"]["v"] == {"N": "1"}
            arn = c.describe_table(TableName=owned)["Table"]["TableArn"]
            assert arn.startswith("arn:aws:dynamodb:us-east-1:"), arn
        with open(log, errors="replace") as f:
            f.seek(log_size)
            text = f.read()
        assert 'invalid value for parameter "ddb.schema": "decoy"' in text, text[-2000:]
        assert "takes this setting from the server's configuration only" in text
    finally:
        psql("ALTER DATABASE postgres RESET ddb.schema")
        psql("ALTER DATABASE postgres RESET ddb.region")
        psql("DROP SCHEMA decoy")
    # a session's own settings are its own: SQL callers still choose
    assert psql("SET ddb.schema = 'elsewhere'; SHOW ddb.schema") == "elsewhere"
