"""AWS Signature Version 4: requests signed with an access key run as its
role; every way a signature can be wrong gets DynamoDB's error."""
import datetime
import json

import botocore.exceptions
import pytest

from conftest import KEY_ID, SECRET, Raw, client, error_of, psql, signed_headers


def utcnow():
    return datetime.datetime.utcnow().replace(microsecond=0)


def test_signed_request_works(raw):
    r, data = raw.post({})
    assert r.status == 200, data


def test_wrong_secret():
    """A signature made with another secret: InvalidSignatureException, with
    the canonical request DynamoDB shows to help debug a client."""
    with pytest.raises(botocore.exceptions.ClientError) as e:
        client(KEY_ID, "not-the-secret").list_tables()
    err = e.value.response["Error"]
    assert err["Code"] == "InvalidSignatureException"
    assert err["Message"].startswith(
        "The request signature we calculated does not match the signature you provided. "
        "Check your AWS Secret Access Key and signing method. Consult the service documentation for details.")
    assert "The Canonical String for this request should have been" in err["Message"]
    assert SECRET not in err["Message"]


def test_unknown_key():
    with pytest.raises(botocore.exceptions.ClientError) as e:
        client("AKDBNOSUCHKEY0000000", SECRET).list_tables()
    err = e.value.response["Error"]
    assert (err["Code"], err["Message"]) == (
        "UnrecognizedClientException", "The security token included in the request is invalid.")


def test_tampered_body(raw):
    """The body is signed: changing it after signing is detected."""
    body = b'{"Limit": 5}'
    h = signed_headers(body)
    raw.conn.request("POST", "/", body=b'{"Limit": 6}', headers=h)
    r = raw.conn.getresponse()
    assert r.status == 400
    assert error_of(r.read())[0] == "InvalidSignatureException"


def test_tampered_target(raw):
    """X-Amz-Target is a signed header: another operation under the same
    signature is refused."""
    h = signed_headers(b"{}", target="DynamoDB_20120810.ListTables")
    h["X-Amz-Target"] = "DynamoDB_20120810.DescribeLimits"
    raw.conn.request("POST", "/", body=b"{}", headers=h)
    r = raw.conn.getresponse()
    assert error_of(r.read())[0] == "InvalidSignatureException"


def test_target_must_be_signed(raw):
    """A signature that leaves X-Amz-Target out of its SignedHeaders, and
    is otherwise valid, is refused: it would let a captured request be
    replayed as another operation (a GetItem as the DeleteItem of its
    key)."""
    import botocore.auth
    import botocore.awsrequest
    import botocore.credentials
    from conftest import KEY_ID, PORT, REGION, SECRET

    class NoTarget(botocore.auth.SigV4Auth):
        def headers_to_sign(self, request):
            h = super().headers_to_sign(request)
            del h["x-amz-target"]
            return h

    body = b"{}"
    req = botocore.awsrequest.AWSRequest(
        method="POST", url=f"http://127.0.0.1:{PORT}/", data=body,
        headers={"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.ListTables"})
    NoTarget(botocore.credentials.Credentials(KEY_ID, SECRET), "dynamodb", REGION).add_auth(req)
    h = dict(req.headers.items())
    assert "x-amz-target" not in h["Authorization"]
    for target in ("DynamoDB_20120810.ListTables", "DynamoDB_20120810.DescribeLimits"):
        h["X-Amz-Target"] = target
        raw.conn.request("POST", "/", body=body, headers=h)
        assert error_of(raw.conn.getresponse().read()) == (
            "InvalidSignatureException", "'X-Amz-Target' must be a 'SignedHeader' in the AWS Authorization.")


@pytest.mark.parametrize("minutes", [-16, 16])
def test_clock_skew_over_15_minutes(raw, minutes):
    """A request signed more than 15 minutes before or after the server's
    clock: DynamoDB's 'Signature expired' / 'not yet current'."""
    when = utcnow() + datetime.timedelta(minutes=minutes)
    r, data = raw.post({}, when=when)
    assert r.status == 400
    kind, msg = error_of(data)
    assert kind == "InvalidSignatureException"
    stamp = when.strftime("%Y%m%dT%H%M%SZ")
    if minutes < 0:
        assert msg.startswith(f"Signature expired: {stamp} is now earlier than ") and msg.endswith(" - 15 min.)")
    else:
        assert msg.startswith(f"Signature not yet current: {stamp} is still later than ") and msg.endswith(" + 15 min.)")


@pytest.mark.parametrize("minutes", [-14, 14])
def test_clock_skew_within_15_minutes(raw, minutes):
    r, data = raw.post({}, when=utcnow() + datetime.timedelta(minutes=minutes))
    assert r.status == 200, data


def test_missing_authorization(raw):
    r, data = raw.post({}, sign=False)
    assert r.status == 400
    assert error_of(data) == ("MissingAuthenticationTokenException", "Request is missing Authentication Token")


def test_incomplete_authorization(raw):
    """An Authorization header lacking its parts names each missing one."""
    r, data = raw.post({}, sign=False, headers={"Authorization": "AWS4-HMAC-SHA256 Credential=abc"})
    kind, msg = error_of(data)
    assert kind == "IncompleteSignatureException"
    assert "Authorization header requires 'Signature' parameter." in msg
    assert "Authorization header requires 'SignedHeaders' parameter." in msg
    assert "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header." in msg


def test_bad_date_format(raw):
    h = signed_headers(b"{}")
    h["X-Amz-Date"] = "2024-01-01T00:00:00Z"
    raw.conn.request("POST", "/", body=b"{}", headers=h)
    kind, msg = error_of(raw.conn.getresponse().read())
    assert kind == "IncompleteSignatureException"
    assert msg.startswith("Date must be in ISO-8601 'basic format'. Got '2024-01-01T00:00:00Z'.")
    # a date of bytes that are no UTF-8 is quoted with U+FFFD in their
    # place: the error body stays UTF-8 (json.loads in error_of decodes it)
    h["X-Amz-Date"] = "2026\xff\xfe"
    raw.conn.request("POST", "/", body=b"{}", headers=h)
    kind, msg = error_of(raw.conn.getresponse().read())
    assert kind == "IncompleteSignatureException"
    assert "Got '2026\ufffd\ufffd'." in msg


def test_credential_scope(raw):
    """The credential must be scoped to dynamodb and aws4_request, on the
    request's date; the algorithm must be AWS4-HMAC-SHA256."""
    h = signed_headers(b"{}")
    auth = h["Authorization"]
    cases = {
        auth.replace("/dynamodb/", "/s3/"): ("InvalidSignatureException", "Credential should be scoped to correct service: 'dynamodb'."),
        auth.replace("aws4_request", "aws5_request"): ("InvalidSignatureException", "Credential should be scoped with a valid terminator: 'aws4_request', not 'aws5_request'."),
        auth.replace("AWS4-HMAC-SHA256", "AWS4-HMAC-SHA512"): ("IncompleteSignatureException", "Unsupported AWS 'algorithm': 'AWS4-HMAC-SHA512'"),
        auth.replace("/us-east-1/", "/"): ("IncompleteSignatureException", "Credential must have exactly 5 slash-delimited elements"),
        auth.replace(h["X-Amz-Date"][:8], "19990101", 1): ("InvalidSignatureException", "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '19990101'"),
        auth.replace("SignedHeaders=content-type;host;", "SignedHeaders=content-type;"): ("InvalidSignatureException", "'Host' must be a 'SignedHeader' in the AWS Authorization."),
    }
    for bad, (kind, text) in cases.items():
        hh = dict(h, Authorization=bad)
        raw.conn.request("POST", "/", body=b"{}", headers=hh)
        k, msg = error_of(raw.conn.getresponse().read())
        assert (k, msg.startswith(text)) == (kind, True), (bad, k, msg)


def test_any_region_is_accepted():
    """The region only enters the key derivation: any region works, as with
    DynamoDB Local."""
    import boto3
    import botocore.config
    from conftest import ENDPOINT
    c = boto3.client("dynamodb", endpoint_url=ENDPOINT, region_name="eu-west-3",
                     aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET,
                     config=botocore.config.Config(retries={"max_attempts": 0}))
    c.list_tables()


def test_session_token_refused(raw):
    """Temporary credentials (X-Amz-Security-Token) are not supported."""
    r, data = raw.post({}, extra={"X-Amz-Security-Token": "FwoGZXIvYXdzE"})
    assert error_of(data) == ("UnrecognizedClientException", "The security token included in the request is invalid.")


def test_dropped_key_and_role():
    """Dropping a key, or its role, stops its requests at once."""
    kid, secret = psql("CREATE ROLE ddb_temp; SELECT access_key_id || ' ' || secret_access_key "
                       "FROM ddb_create_access_key('ddb_temp')").split()
    c = client(kid, secret)
    c.list_tables()
    psql("DROP ROLE ddb_temp")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        c.list_tables()
    assert e.value.response["Error"]["Code"] == "UnrecognizedClientException"
    psql(f"SELECT ddb_drop_access_key('{kid}')")
    assert psql(f"SELECT count(*) FROM ddb_internal.access_keys WHERE access_key_id = '{kid}'") == "0"

    kid, secret = psql("CREATE ROLE ddb_temp2; SELECT access_key_id || ' ' || secret_access_key "
                       "FROM ddb_create_access_key('ddb_temp2')").split()
    c = client(kid, secret)
    c.list_tables()
    psql(f"SELECT ddb_drop_access_key('{kid}')")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        c.list_tables()
    assert e.value.response["Error"]["Code"] == "UnrecognizedClientException"
    psql("DROP ROLE ddb_temp2")


def refused(c):
    """c's requests get DynamoDB's error for a key it does not know."""
    with pytest.raises(botocore.exceptions.ClientError) as e:
        c.list_tables()
    err = e.value.response["Error"]
    assert (err["Code"], err["Message"]) == (
        "UnrecognizedClientException", "The security token included in the request is invalid.")


def test_key_is_for_its_own_role():
    """A key authenticates only as the role it was made for, known by OID
    and name.  Renaming the role disables the key (renaming it back enables
    it); a role dropped and created again under its name is another role.
    A key whose OID names another role -- what a role created after the
    key's was dropped may get once OIDs wrap; a superuser's edit of the row
    does the same here -- is refused rather than run as that role."""
    def new_key(role):
        return psql(f"CREATE ROLE {role}; SELECT access_key_id || ' ' || secret_access_key "
                    f"FROM ddb_create_access_key('{role}')").split()

    kid, secret = new_key("ddb_temp3")
    c = client(kid, secret)
    c.list_tables()
    psql("ALTER ROLE ddb_temp3 RENAME TO ddb_temp3b")
    refused(c)
    psql("ALTER ROLE ddb_temp3b RENAME TO ddb_temp3")
    c.list_tables()
    psql("DROP ROLE ddb_temp3; CREATE ROLE ddb_temp3")
    refused(c)
    psql(f"SELECT ddb_drop_access_key('{kid}'); DROP ROLE ddb_temp3")

    kid, secret = new_key("ddb_temp4")
    c = client(kid, secret)
    c.list_tables()
    psql(f"UPDATE ddb_internal.access_keys SET role = 'ddb_reader' WHERE access_key_id = '{kid}'")
    refused(c)
    psql(f"SELECT ddb_drop_access_key('{kid}'); DROP ROLE ddb_temp4")


def test_key_management_is_for_superusers():
    """Secrets are readable only by superusers; only they manage keys; a
    missing key is an error."""
    out = psql("SET ROLE ddb_app; SELECT secret_access_key FROM ddb_internal.access_keys", check=False)
    assert out == ""
    import subprocess
    from conftest import PGBIN, SOCK, PGPORT, RUNAS
    for sql in ("SELECT secret_access_key FROM ddb_internal.access_keys",
                "SELECT ddb_create_access_key('ddb_app')",
                "SELECT ddb_drop_access_key('x')"):
        r = subprocess.run([f"{PGBIN}/psql", "-X", "-h", SOCK, "-p", PGPORT, "-U", RUNAS,
                            "-d", "postgres", "-c", "SET ROLE ddb_app", "-c", sql],
                           capture_output=True, text=True)
        assert "permission denied" in r.stderr, (sql, r.stderr)
    r = subprocess.run([f"{PGBIN}/psql", "-X", "-h", SOCK, "-p", PGPORT, "-U", RUNAS,
                        "-d", "postgres", "-c", "SELECT ddb_drop_access_key('AKDBNOSUCH')"],
                       capture_output=True, text=True)
    assert 'access key "AKDBNOSUCH" does not exist' in r.stderr
    # keys look like AWS's
    kid, secret = psql("SELECT access_key_id || ' ' || secret_access_key FROM ddb_create_access_key('ddb_app')").split()
    assert len(kid) == 20 and kid.startswith("AKDB") and kid.isupper()
    assert len(secret) == 40
    psql(f"SELECT ddb_drop_access_key('{kid}')")


def test_date_header_instead_of_x_amz_date(raw):
    """A client may sign with the HTTP Date header instead of X-Amz-Date."""
    import email.utils
    import hashlib
    import hmac
    now = utcnow()
    amz = now.strftime("%Y%m%dT%H%M%SZ")
    body = b"{}"
    http_date = email.utils.format_datetime(now.replace(tzinfo=datetime.timezone.utc), usegmt=True)
    from conftest import PORT
    host = f"127.0.0.1:{PORT}"
    creq = "\n".join(["POST", "/", "", f"date:{http_date}", f"host:{host}",
                      "x-amz-target:DynamoDB_20120810.ListTables", "", "date;host;x-amz-target",
                      hashlib.sha256(body).hexdigest()])
    scope = f"{amz[:8]}/us-east-1/dynamodb/aws4_request"
    sts = "\n".join(["AWS4-HMAC-SHA256", amz, scope, hashlib.sha256(creq.encode()).hexdigest()])
    k = ("AWS4" + SECRET).encode()
    for part in (amz[:8], "us-east-1", "dynamodb", "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    sig = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    h = {"Date": http_date, "Host": host, "X-Amz-Target": "DynamoDB_20120810.ListTables",
         "Content-Type": "application/x-amz-json-1.0",
         "Authorization": f"AWS4-HMAC-SHA256 Credential={KEY_ID}/{scope}, "
                          f"SignedHeaders=date;host;x-amz-target, Signature={sig}"}
    raw.conn.request("POST", "/", body=body, headers=h)
    r = raw.conn.getresponse()
    assert r.status == 200, r.read()
    r.read()
