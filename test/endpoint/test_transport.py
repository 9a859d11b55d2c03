"""The HTTP transport: what every response carries and how requests that
never reach an operation are answered, in DynamoDB's order and words."""
import http.client
import json
import re
import zlib

from conftest import PORT, Raw, error_of, client


def test_health_check():
    """GET / answers DynamoDB's health check."""
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=5)
    c.request("GET", "/")
    r = c.getresponse()
    assert r.status == 200
    assert r.read() == b"healthy: dynamodb.us-east-1.amazonaws.com "
    # only at the root, as DynamoDB's (it answers other paths with a 4xx)
    for path in ("/abc", "/-", "/index.htm", "/health"):
        c.request("GET", path)
        r = c.getresponse()
        r.read()
        assert r.status == 404, path


def test_response_headers(raw):
    """Responses carry a 52-character x-amzn-RequestId and x-amz-crc32, the
    CRC-32 of the body that SDKs verify, with the request's content type."""
    ids = set()
    for _ in range(3):
        r, data = raw.post({})
        assert r.status == 200, data
        rid = r.getheader("x-amzn-RequestId")
        assert re.fullmatch(r"[A-Z0-9]{52}", rid)
        ids.add(rid)
        assert int(r.getheader("x-amz-crc32")) == zlib.crc32(data)
        assert r.getheader("Content-Type") == "application/x-amz-json-1.0"
        assert "TableNames" in json.loads(data)
    assert len(ids) == 3
    # the older JSON content type is answered in kind
    r, data = raw.post({}, extra={"Content-Type": "application/json"})
    assert r.status == 200 and r.getheader("Content-Type") == "application/json"


def test_keep_alive():
    """Many requests over one connection (HTTP/1.1 keep-alive)."""
    raw = Raw()
    raw.post({})
    sock = raw.conn.sock
    for _ in range(50):
        r, _ = raw.post({})
        assert r.status == 200
    assert raw.conn.sock is sock, "the connection was not kept alive"
    raw.close()


def test_not_a_json_post(raw):
    """Anything but a POST of application/x-amz-json-1.0 (or
    application/json) is DynamoDB's bare 404."""
    for method in ("PUT", "DELETE", "PATCH"):
        raw.conn.request(method, "/", body=b"{}", headers={"Content-Type": "application/x-amz-json-1.0"})
        r = raw.conn.getresponse()
        assert (r.status, r.read()) == (404, b"<UnknownOperationException/>\n")
    r, data = raw.post({}, headers={"Content-Type": "text/plain"})
    assert (r.status, data) == (404, b"<UnknownOperationException/>\n")


def test_unknown_operation(raw):
    """An X-Amz-Target that names no operation of DynamoDB or DynamoDB
    Streams is UnknownOperationException, checked before the signature."""
    for target in ("DynamoDB_20120810.NoSuchThing", "DynamoDB_20111205.ListTables",
                   "DynamoDBStreams_20120810.PutItem", "Nonsense", ""):
        r, data = raw.post({}, target=target, sign=False)
        assert r.status == 400, target
        assert error_of(data)[0] == "UnknownOperationException", (target, data)
    r, data = raw.post({}, sign=False, headers={"X-Amz-Target": ""})
    assert error_of(data)[0] == "UnknownOperationException"


def test_serialization_errors(raw):
    """A body that is not one JSON object is SerializationException, before
    the target and the signature are looked at; so is an empty body."""
    for body in (b"{", b'{"TableName": }', b"[]", b'"x"', b"nul", b"{}}", b"\xff\xfe"):
        r, data = raw.post(body, target="DynamoDB_20120810.Nope", sign=False)
        assert r.status == 400
        assert error_of(data)[0] == "SerializationException", body
    r, data = raw.post(b"")
    assert r.status == 400 and error_of(data)[0] == "SerializationException"


def test_table_name_required(raw):
    """The table operations DynamoDB checks for a TableName before anything
    else say it is required, as CreateTable does; the item operations
    report it with the other member constraints."""
    for op in ("CreateTable", "DescribeTable", "DeleteTable", "UpdateTable", "DescribeTimeToLive"):
        r, data = raw.post({}, target="DynamoDB_20120810." + op)
        assert r.status == 400
        assert error_of(data) == ("ValidationException",
                                  "The parameter 'TableName' is required but was not present in the request"), op
    r, data = raw.post({"BillingMode": "X"}, target="DynamoDB_20120810.UpdateTable")
    assert error_of(data)[1] == "The parameter 'TableName' is required but was not present in the request"
    r, data = raw.post({}, target="DynamoDB_20120810.GetItem")
    assert error_of(data) == ("ValidationException",
                              "2 validation errors detected: Value null at 'tableName' failed to satisfy constraint: "
                              "Member must not be null; Value null at 'key' failed to satisfy constraint: "
                              "Member must not be null")


def test_table_name_length(raw):
    """The same operations say a TableName's length is wrong in
    CreateTable's words too, before its pattern; the item operations
    report it as a member constraint."""
    msg = "TableName must be at least 3 characters long and at most 255 characters long"
    for op in ("CreateTable", "DescribeTable", "DeleteTable", "UpdateTable", "DescribeTimeToLive"):
        for name in ("ab", "t" * 256, "a$"):
            r, data = raw.post({"TableName": name}, target="DynamoDB_20120810." + op)
            assert r.status == 400
            assert error_of(data) == ("ValidationException", msg), (op, name)
    r, data = raw.post({"TableName": "ab", "Key": {}}, target="DynamoDB_20120810.GetItem")
    assert error_of(data)[1] == ("1 validation error detected: Value 'ab' at 'tableName' failed to satisfy "
                                 "constraint: Member must have length greater than or equal to 3")


def test_tag_requests_checked_before_the_table(raw):
    """TagResource and UntagResource read their whole request first (a
    malformed Tags or TagKeys is a SerializationException), and refuse a
    missing or empty list before they look the table up; UntagResource's
    unknown table is the bare "Requested resource not found"."""
    arn = "arn:aws:dynamodb:us-east-1:000000000000:table/no_such_table"
    for op, member, path, empty in (
            ("TagResource", "Tags", "tags", "Atleast one Tag needs to be provided as Input."),
            ("UntagResource", "TagKeys", "tagKeys", "Atleast one Tag Key needs to be provided as Input.")):
        target = "DynamoDB_20120810." + op
        r, data = raw.post({"ResourceArn": arn}, target=target)
        assert error_of(data) == ("ValidationException", f"1 validation error detected: Value null at '{path}' "
                                  "failed to satisfy constraint: Member must not be null"), op
        r, data = raw.post({"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:index/x", member: None},
                           target=target)
        assert error_of(data)[1].startswith("1 validation error detected: Value null"), op
        r, data = raw.post({"ResourceArn": arn, member: []}, target=target)
        assert error_of(data) == ("ValidationException", empty), op
        r, data = raw.post({"ResourceArn": arn, member: "x"}, target=target)
        assert error_of(data) == ("SerializationException", "Unexpected field type"), op
        r, data = raw.post({"ResourceArn": "nope", member: 1}, target=target)
        assert error_of(data)[0] == "SerializationException", op
    r, data = raw.post({"ResourceArn": arn, "Tags": [1]}, target="DynamoDB_20120810.TagResource")
    assert error_of(data) == ("SerializationException", "Unexpected value type in payload")
    r, data = raw.post({"ResourceArn": arn, "TagKeys": [[]]}, target="DynamoDB_20120810.UntagResource")
    assert error_of(data)[0] == "SerializationException"
    r, data = raw.post({"ResourceArn": arn, "TagKeys": ["k"]}, target="DynamoDB_20120810.UntagResource")
    assert error_of(data) == ("ResourceNotFoundException", "Requested resource not found")
    r, data = raw.post({"ResourceArn": arn, "Tags": [{"Key": "k", "Value": "v"}]},
                       target="DynamoDB_20120810.TagResource")
    assert error_of(data) == ("ResourceNotFoundException",
                              f"Requested resource not found: ResourcArn: {arn} not found")


def test_unimplemented_operation_is_refused_after_auth():
    """An operation DynamoDB has and ddb does not implement is answered by
    the protocol layer as a 400, never a 500."""
    r, data = Raw().post({}, target="DynamoDB_20120810.CreateBackup")
    assert r.status == 400, data
    assert error_of(data)[0] in ("UnknownOperationException", "ValidationException")


def test_boto3_checks_crc32():
    """boto3 verifies x-amz-crc32 on every DynamoDB response: a plain call
    succeeding proves the header is right (a wrong one raises)."""
    c = client()
    assert "TableNames" in c.list_tables()


CORS_HEADERS = ["Access-Control-Allow-Origin", "Access-Control-Allow-Credentials",
                "Access-Control-Expose-Headers", "Access-Control-Max-Age",
                "Access-Control-Allow-Methods", "Access-Control-Allow-Headers"]


def cors_request(method, headers):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=5)
    c.request(method, "/", body=b"{}" if method == "POST" else None, headers=headers)
    r = c.getresponse()
    r.read()
    c.close()
    return r


def test_cors():
    """CORS as DynamoDB answers it (the cases of ScyllaDB's test_cors.py,
    which runs against the service): no CORS headers without Origin; with
    it, Access-Control-Allow-Origin: * and the exposed headers on every
    method; a preflight (OPTIONS) also gets a max age and is allowed the
    method and headers it asks for, echoed."""
    for method in ("OPTIONS", "GET", "POST"):
        r = cors_request(method, {})
        assert not [h for h in CORS_HEADERS if r.getheader(h) is not None], method
    asked = {"Origin": "http://example.com/", "Access-Control-Request-Method": "dog",
             "Access-Control-Request-Headers": "cat, meerkat, mouse"}
    for method in ("OPTIONS", "GET", "POST"):
        r = cors_request(method, asked)
        assert r.getheader("Access-Control-Allow-Origin") == "*", method
        assert r.getheader("Access-Control-Expose-Headers"), method
        if method == "OPTIONS":
            assert r.status == 200
            assert r.getheader("Access-Control-Max-Age")
            assert r.getheader("Access-Control-Allow-Methods") == "dog"
            assert r.getheader("Access-Control-Allow-Headers") == "cat, meerkat, mouse"
        else:
            for h in ("Access-Control-Max-Age", "Access-Control-Allow-Methods",
                      "Access-Control-Allow-Headers"):
                assert r.getheader(h) is None, (method, h)


def test_describe_endpoints_names_this_server():
    """DescribeEndpoints answers with the address the request was sent to
    (its Host header), so that a client with endpoint discovery on stays
    with this server instead of being sent to the region's DynamoDB."""
    from urllib.parse import urlparse

    ddb = client()
    eps = ddb.describe_endpoints()["Endpoints"]
    assert eps == [{"Address": urlparse(ddb.meta.endpoint_url).netloc,
                    "CachePeriodInMinutes": 1440}], eps
    # another name for the same server is answered by that name
    r = Raw()
    try:
        resp, data = r.post({}, target="DynamoDB_20120810.DescribeEndpoints",
                            extra={"Host": f"localhost:{PORT}"})
        assert resp.status == 200, data
        assert json.loads(data)["Endpoints"][0]["Address"] == f"localhost:{PORT}"
    finally:
        r.close()
