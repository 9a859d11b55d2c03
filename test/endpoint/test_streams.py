"""DynamoDB Streams through the endpoint: boto3's dynamodbstreams client
reads a table's stream end to end (ListStreams, DescribeStream,
GetShardIterator of each type, GetRecords until the shard is read), and
DynamoDB Streams' errors come back as DynamoDB answers them."""
import hashlib
import hmac

import boto3
import botocore.config
import pytest
from botocore.exceptions import ClientError

from conftest import ENDPOINT, KEY_ID, READER_KEY_ID, READER_SECRET, REGION, SECRET, create_table, psql


def streams_client(key_id=KEY_ID, secret=SECRET):
    return boto3.client(
        "dynamodbstreams", endpoint_url=ENDPOINT, region_name=REGION,
        aws_access_key_id=key_id, aws_secret_access_key=secret,
        config=botocore.config.Config(retries={"max_attempts": 0, "mode": "standard"}))


def S(v):
    return {"S": v}


def N(v):
    return {"N": str(v)}


def error_code(exc):
    return exc.value.response["Error"]["Code"]


@pytest.fixture
def streamed(ddb, table_name):
    """A table created with a NEW_AND_OLD_IMAGES stream."""
    create_table(ddb, table_name,
                 StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
    yield table_name
    try:
        ddb.delete_table(TableName=table_name)
    except ClientError:
        pass


def read_shard(sc, arn, shard_id, iterator_type="TRIM_HORIZON", limit=None, **kw):
    """Every record of a shard from an iterator, GetRecords page by page,
    until a page comes back empty (an open shard) or without a next
    iterator (a closed one)."""
    it = sc.get_shard_iterator(StreamArn=arn, ShardId=shard_id,
                               ShardIteratorType=iterator_type, **kw)["ShardIterator"]
    out = []
    while it:
        args = {"ShardIterator": it}
        if limit:
            args["Limit"] = limit
        page = sc.get_records(**args)
        out += page["Records"]
        it = page.get("NextShardIterator")
        if not page["Records"]:
            break
    return out, it


def read_stream(sc, arn, **kw):
    shards = sc.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
    records = []
    for sh in shards:
        records += read_shard(sc, arn, sh["ShardId"], **kw)[0]
    return records


def test_stream_end_to_end(ddb, streamed):
    """Writes through the DynamoDB client, records through the streams
    client: one per change, DynamoDB's shape, each item's in order."""
    t = streamed
    desc = ddb.describe_table(TableName=t)["Table"]
    assert desc["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    arn = desc["LatestStreamArn"]
    assert arn == f"{desc['TableArn']}/stream/{desc['LatestStreamLabel']}"

    for i in range(20):
        ddb.put_item(TableName=t, Item={"PK": S(f"CUST#{i}"), "SK": S("PROFILE"), "n": N(i)})
    ddb.update_item(TableName=t, Key={"PK": S("CUST#3"), "SK": S("PROFILE")},
                    UpdateExpression="SET n = n + :one", ExpressionAttributeValues={":one": N(1)})
    ddb.put_item(TableName=t, Item={"PK": S("CUST#4"), "SK": S("PROFILE"), "n": N(4)})  # unchanged
    ddb.delete_item(TableName=t, Key={"PK": S("CUST#5"), "SK": S("PROFILE")})
    psql(f"INSERT INTO public.{t} VALUES ('CUST#99', 'PROFILE', '{{\"via\": \"sql\"}}')")

    sc = streams_client()
    streams = sc.list_streams(TableName=t)["Streams"]
    assert streams == [{"StreamArn": arn, "TableName": t, "StreamLabel": desc["LatestStreamLabel"]}]
    sd = sc.describe_stream(StreamArn=arn)["StreamDescription"]
    assert sd["StreamStatus"] == "ENABLED"
    assert sd["StreamViewType"] == "NEW_AND_OLD_IMAGES"
    assert sd["TableName"] == t
    assert sd["KeySchema"] == desc["KeySchema"]
    assert len(sd["Shards"]) == 4
    assert all("EndingSequenceNumber" not in s["SequenceNumberRange"] for s in sd["Shards"])

    records = read_stream(sc, arn, limit=3)
    assert len(records) == 23
    events = [(r["eventName"], r["dynamodb"]["Keys"]["PK"]["S"]) for r in records]
    assert sorted(e for e in events if e[0] != "INSERT") == [("MODIFY", "CUST#3"), ("REMOVE", "CUST#5")]
    assert ("INSERT", "CUST#99") in events
    by_key = {}
    for r in records:
        assert r["eventSource"] == "aws:dynamodb" and r["eventVersion"] == "1.1"
        assert r["awsRegion"] == REGION and len(r["eventID"]) == 32
        d = r["dynamodb"]
        assert d["StreamViewType"] == "NEW_AND_OLD_IMAGES" and d["SizeBytes"] > 0
        assert d["ApproximateCreationDateTime"].year >= 2024
        by_key.setdefault(d["Keys"]["PK"]["S"], []).append(r)
    three = by_key["CUST#3"]
    assert [r["eventName"] for r in three] == ["INSERT", "MODIFY"]
    assert three[0]["dynamodb"]["SequenceNumber"] < three[1]["dynamodb"]["SequenceNumber"]
    assert three[1]["dynamodb"]["OldImage"]["n"] == N(3)
    assert three[1]["dynamodb"]["NewImage"]["n"] == N(4)
    assert by_key["CUST#5"][-1]["dynamodb"]["OldImage"] == {"PK": S("CUST#5"), "SK": S("PROFILE"), "n": N(5)}
    assert "NewImage" not in by_key["CUST#5"][-1]["dynamodb"]

    # AT and AFTER a sequence number, and LATEST
    shard = sd["Shards"][0]["ShardId"]
    recs, _ = read_shard(sc, arn, shard)
    first = recs[0]["dynamodb"]["SequenceNumber"]
    at, _ = read_shard(sc, arn, shard, "AT_SEQUENCE_NUMBER", SequenceNumber=first)
    after, _ = read_shard(sc, arn, shard, "AFTER_SEQUENCE_NUMBER", SequenceNumber=first)
    assert at == recs and after == recs[1:]
    latest = sc.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                   ShardIteratorType="LATEST")["ShardIterator"]
    assert sc.get_records(ShardIterator=latest)["Records"] == []


def test_disabled_stream_closes_its_shards(ddb, streamed):
    """After UpdateTable disables the stream it stays readable; its shards
    carry an EndingSequenceNumber and GetRecords at their end returns no
    next iterator; enabling again makes a new stream."""
    t = streamed
    ddb.put_item(TableName=t, Item={"PK": S("a"), "SK": S("1")})
    arn = ddb.describe_table(TableName=t)["Table"]["LatestStreamArn"]
    ddb.update_table(TableName=t, StreamSpecification={"StreamEnabled": False})
    ddb.put_item(TableName=t, Item={"PK": S("b"), "SK": S("1")})
    sc = streams_client()
    sd = sc.describe_stream(StreamArn=arn)["StreamDescription"]
    assert sd["StreamStatus"] == "DISABLED"
    assert all("EndingSequenceNumber" in s["SequenceNumberRange"] for s in sd["Shards"])
    total = 0
    for s in sd["Shards"]:
        recs, it = read_shard(sc, arn, s["ShardId"])
        total += len(recs)
        assert it is None
    assert total == 1
    desc = ddb.update_table(TableName=t, StreamSpecification={"StreamEnabled": True,
                                                              "StreamViewType": "KEYS_ONLY"})
    assert desc["TableDescription"]["LatestStreamArn"] != arn
    assert len(sc.list_streams(TableName=t)["Streams"]) == 2


def test_stream_errors(ddb, streamed):
    """DynamoDB Streams' errors: unknown streams and shards, bad and
    expired iterators, trimmed data, validation, privileges."""
    t = streamed
    sc = streams_client()
    arn = ddb.describe_table(TableName=t)["Table"]["LatestStreamArn"]
    shard = sc.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]

    with pytest.raises(ClientError) as e:
        sc.describe_stream(StreamArn=arn.replace("/stream/", "/stream/1999-"))
    assert error_code(e) == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        sc.get_shard_iterator(StreamArn=arn, ShardId="shardId-00000000000000000000-deadbeef",
                              ShardIteratorType="LATEST")
    assert error_code(e) == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        sc.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="AT_SEQUENCE_NUMBER")
    assert error_code(e) == "ValidationException"
    with pytest.raises(ClientError) as e:
        sc.get_records(ShardIterator="not-an-iterator")
    assert error_code(e) == "ValidationException"
    with pytest.raises(ClientError) as e:
        sc.get_records(ShardIterator=sc.get_shard_iterator(
            StreamArn=arn, ShardId=shard, ShardIteratorType="LATEST")["ShardIterator"], Limit=1001)
    assert error_code(e) == "ValidationException"

    # Iterators are signed with the database's key (which a superuser can
    # read): an iterator issued 16 minutes ago, signed, has expired; edited
    # without its signature it is refused as invalid; one issued an hour
    # from now, signed, is refused (it would not expire).
    it = sc.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="LATEST")["ShardIterator"]
    key = bytes.fromhex(psql("SELECT encode(key, 'hex') FROM ddb_internal.stream_iterator_key"))
    dboid = psql("SELECT oid FROM pg_database WHERE datname = current_database()")

    def issued_at(delta_ms, sign=True):
        parts = it.rsplit("|", 1)[0].split(":", 4)
        parts[3] = str(int(parts[3]) + delta_ms)
        payload = ":".join(parts)
        tag = hmac.new(key, f"{dboid}:{payload}".encode(), hashlib.sha256).hexdigest()[:32]
        return payload + "|" + (tag if sign else it.rsplit("|", 1)[1])

    with pytest.raises(ClientError) as e:
        sc.get_records(ShardIterator=issued_at(-16 * 60 * 1000))
    assert error_code(e) == "ExpiredIteratorException"
    assert e.value.response["Error"]["Message"] == "The provided iterator exceeds the maximum age allowed."
    for edited in (issued_at(-16 * 60 * 1000, sign=False), issued_at(3600 * 1000)):
        with pytest.raises(ClientError) as e:
            sc.get_records(ShardIterator=edited)
        assert error_code(e) == "ValidationException"
        assert e.value.response["Error"]["Message"] == "Invalid ShardIterator"
    assert "Records" in sc.get_records(ShardIterator=issued_at(-60 * 1000))

    # trimmed: records past retention are swept; reading from before them fails
    for i in range(8):
        ddb.put_item(TableName=t, Item={"PK": S(f"k{i}"), "SK": S("1")})
    old_it = sc.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    psql("SELECT pg_sleep(1.1); SET ddb.stream_retention = 1; SELECT ddb_stream_sweep()")
    with pytest.raises(ClientError) as e:
        sc.get_records(ShardIterator=old_it)
    assert error_code(e) == "TrimmedDataAccessException"
    assert e.value.response["Error"]["Message"] == "The data you are trying to access has been trimmed."
    with pytest.raises(ClientError) as e:
        sc.get_shard_iterator(StreamArn=arn, ShardId=shard,
                              ShardIteratorType="AFTER_SEQUENCE_NUMBER", SequenceNumber="0" * 20 + "1")
    assert error_code(e) == "TrimmedDataAccessException"
    assert read_stream(sc, arn) == []

    # a key without SELECT on the table can neither list nor read the stream
    reader = streams_client(READER_KEY_ID, READER_SECRET)
    assert reader.list_streams()["Streams"] == []
    with pytest.raises(ClientError) as e:
        reader.describe_stream(StreamArn=arn)
    assert error_code(e) == "AccessDeniedException"
