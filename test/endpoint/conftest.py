"""Fixtures for the HTTP endpoint's tests (run by test/endpoint/run.sh).

run.sh starts a cluster with shared_preload_libraries = 'ddb', the endpoint
on a free loopback port, the roles ddb_app (may create tables) and
ddb_reader (no rights), one access key for each, and passes everything in
DDB_* environment variables.  Tests talk to the endpoint with boto3, with
raw HTTP (signed by botocore's own SigV4 signer), with the AWS CLI, and to
the database with psql as the superuser.
"""
import contextlib
import http.client
import json
import os
import socket
import struct
import subprocess
import threading
import time
import uuid

import boto3
import botocore.auth
import botocore.awsrequest
import botocore.config
import botocore.credentials
import pytest

ENDPOINT = os.environ["DDB_ENDPOINT"]
PORT = int(os.environ["DDB_HTTP_PORT"])
KEY_ID = os.environ["DDB_KEY_ID"]
SECRET = os.environ["DDB_SECRET"]
READER_KEY_ID = os.environ["DDB_READER_KEY_ID"]
READER_SECRET = os.environ["DDB_READER_SECRET"]
PGBIN = os.environ["DDB_PGBIN"]
SOCK = os.environ["DDB_SOCK"]
PGPORT = os.environ["DDB_PGPORT"]
DATA = os.environ["DDB_DATA"]
WORK = os.environ["DDB_WORK"]
RUNAS = os.environ["DDB_RUNAS"]
REGION = "us-east-1"


def as_runas(cmd):
    """A command line run as the cluster's owner (su when we are root)."""
    if os.geteuid() == 0 and RUNAS != "root":
        return ["su", RUNAS, "-s", "/bin/bash", "-c", " ".join(cmd)]
    return cmd


def psql(sql, db="postgres", check=True):
    """Runs SQL as the superuser; returns the unaligned output."""
    r = subprocess.run(
        [f"{PGBIN}/psql", "-X", "-q", "-tA", "-v", "ON_ERROR_STOP=1",
         "-h", SOCK, "-p", PGPORT, "-U", RUNAS, "-d", db, "-c", sql],
        capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"psql failed: {r.stderr}")
    return r.stdout.strip()


def pg_ctl(*args, data=DATA, check=True):
    cmd = as_runas([f"{PGBIN}/pg_ctl", "-D", data] + list(args))
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"pg_ctl {args} failed: {r.stdout} {r.stderr}")
    return r


def wait_for(pred, timeout=30.0, interval=0.1):
    """Polls pred() until it is true; returns its last value."""
    end = time.time() + timeout
    while True:
        v = pred()
        if v or time.time() > end:
            return v
        time.sleep(interval)


def healthy(port=PORT):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        c.request("GET", "/")
        r = c.getresponse()
        ok = r.status == 200 and r.read().startswith(b"healthy: ")
        c.close()
        return ok
    except OSError:
        return False


def worker_pids():
    """The workers' pids ([] while the server is restarting)."""
    try:
        out = psql("SELECT pid FROM pg_stat_activity WHERE backend_type = 'ddb http' ORDER BY pid")
    except RuntimeError:
        return []
    return [int(x) for x in out.split()] if out else []


def client(key_id=KEY_ID, secret=SECRET, retries=0):
    """A boto3 DynamoDB client pointed at the endpoint (no retries, so
    every error is seen as it is)."""
    return boto3.client(
        "dynamodb", endpoint_url=ENDPOINT, region_name=REGION,
        aws_access_key_id=key_id, aws_secret_access_key=secret,
        config=botocore.config.Config(retries={"max_attempts": retries, "mode": "standard"}))


def resource(key_id=KEY_ID, secret=SECRET):
    return boto3.resource(
        "dynamodb", endpoint_url=ENDPOINT, region_name=REGION,
        aws_access_key_id=key_id, aws_secret_access_key=secret,
        config=botocore.config.Config(retries={"max_attempts": 0, "mode": "standard"}))


def signed_headers(body, target="DynamoDB_20120810.ListTables", key_id=KEY_ID,
                   secret=SECRET, extra=None, when=None, port=PORT):
    """Headers of a request signed by botocore's SigV4 signer, as an SDK
    sends them; 'when' (a datetime) overrides the signing time."""
    headers = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": target}
    headers.update(extra or {})
    req = botocore.awsrequest.AWSRequest(
        method="POST", url=f"http://127.0.0.1:{port}/", data=body, headers=headers)
    creds = botocore.credentials.Credentials(key_id, secret)
    signer = botocore.auth.SigV4Auth(creds, "dynamodb", REGION)
    if when is not None:
        import unittest.mock
        import datetime
        with unittest.mock.patch("botocore.auth.datetime") as dt:
            dt.datetime.utcnow.return_value = when
            dt.datetime.now.return_value = when
            dt.timezone = datetime.timezone
            signer.add_auth(req)
    else:
        signer.add_auth(req)
    return dict(req.headers.items())


class Raw:
    """One keep-alive HTTP connection to the endpoint."""

    def __init__(self, port=PORT, timeout=10):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)

    def post(self, body, target="DynamoDB_20120810.ListTables", sign=True, headers=None, **kw):
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        if isinstance(body, str):
            body = body.encode()
        h = signed_headers(body, target, **kw) if sign else {
            "Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": target}
        h.update(headers or {})
        self.conn.request("POST", "/", body=body, headers=h)
        r = self.conn.getresponse()
        data = r.read()
        return r, data

    def close(self):
        self.conn.close()


def error_of(data):
    """(__type after '#', message) of an error body."""
    d = json.loads(data)
    return d["__type"].split("#")[-1], d.get("message", d.get("Message"))


@pytest.fixture
def raw():
    r = Raw()
    yield r
    r.close()


@pytest.fixture
def ddb():
    return client()


@pytest.fixture
def table_name():
    """A fresh table name per test (DynamoDB's name rules)."""
    return "t_" + uuid.uuid4().hex[:12]


def create_table(c, name, pk="PK", sk="SK", gsis=None, attrs=None, sk_type="S", **extra):
    """An on-demand table keyed pk (S) and sk (sk_type; None: no sort key);
    'extra' goes into the request as it is (StreamSpecification, say)."""
    attr_defs = [{"AttributeName": pk, "AttributeType": "S"}]
    keys = [{"AttributeName": pk, "KeyType": "HASH"}]
    if sk:
        attr_defs.append({"AttributeName": sk, "AttributeType": sk_type})
        keys.append({"AttributeName": sk, "KeyType": "RANGE"})
    for a, t in (attrs or {}).items():
        attr_defs.append({"AttributeName": a, "AttributeType": t})
    kw = dict(TableName=name, KeySchema=keys, AttributeDefinitions=attr_defs,
              BillingMode="PAY_PER_REQUEST", **extra)
    if gsis:
        kw["GlobalSecondaryIndexes"] = gsis
    return c.create_table(**kw)


def free_port():
    """A free loopback port: the kernel's pick, or one of the range
    DDB_TEST_FREE_PORTS ("56220-56299") names, on machines where tests must
    keep to given ports."""
    rng = os.environ.get("DDB_TEST_FREE_PORTS")
    cands = [0]
    if rng:
        lo, hi = (int(x) for x in rng.split("-"))
        cands = list(range(lo, hi + 1))
        import random
        random.shuffle(cands)
    for c in cands:
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", c))
        except OSError:
            s.close()
            continue
        p = s.getsockname()[1]
        s.close()
        return p
    raise RuntimeError(f"no free port in {rng}")


def _proc_addr(addr):
    """host:port as /proc/net/tcp prints it."""
    return "%08X:%04X" % (struct.unpack("=I", socket.inet_aton(addr[0]))[0], addr[1])


def tcp_sockets():
    """The IPv4 TCP sockets of this machine's network namespace, by
    (local, remote) in /proc/net/tcp's form: (state, tx_queue, rx_queue,
    inode).  State 01 is ESTABLISHED; an inode is 0 until a process has
    accepted the connection."""
    out = {}
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            p = line.split()
            tx, rx = p[4].split(":")
            out[(p[1], p[2])] = (p[3], int(tx, 16), int(rx, 16), int(p[9]))
    return out


def server_end(sock, table=None):
    """The server's end of a connection to the endpoint, as in tcp_sockets
    (None once it is gone)."""
    table = tcp_sockets() if table is None else table
    return table.get((_proc_addr(sock.getpeername()), _proc_addr(sock.getsockname())))


def drained(sock):
    """Has the server read everything sent on sock?  (Nothing waits in the
    client's send queue or in the server end's receive queue.)"""
    table = tcp_sockets()
    mine = table.get((_proc_addr(sock.getsockname()), _proc_addr(sock.getpeername())))
    theirs = server_end(sock, table)
    return mine is not None and theirs is not None and mine[1] == 0 and theirs[2] == 0


def socket_inodes(pid):
    """The inodes of the sockets process pid has open."""
    out = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return out
    for fd in fds:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            out.add(int(link[8:-1]))
    return out


def worker_of(sock, pids, timeout=10):
    """The pid (among pids) of the worker that accepted a connection to the
    endpoint, once one has."""
    def find():
        e = server_end(sock)
        if e is None or e[3] == 0:
            return None
        for pid in pids:
            if e[3] in socket_inodes(pid):
                return pid
        return None
    return wait_for(find, timeout, 0.01)


def workers_of(socks, pids):
    """worker_of for many connections at once, all accepted already."""
    table = tcp_sockets()
    owner = {i: pid for pid in pids for i in socket_inodes(pid)}
    return [owner.get((server_end(s, table) or (None, 0, 0, 0))[3]) for s in socks]


def connections_held(pid):
    """How many connections to the endpoint worker pid holds (sockets it
    has not closed, whatever their state)."""
    port = ":%04X" % PORT
    inodes = socket_inodes(pid)
    return sum(1 for (local, _), (state, _, _, inode) in tcp_sockets().items()
               if local.endswith(port) and state != "0A" and inode in inodes)


class Session:
    """A superuser's SQL session that stays open between statements (psql
    reading them from a pipe): it holds locks while the endpoint is asked.
    pid is its backend's."""

    def __init__(self, db="postgres"):
        self.name = "ddb_test_" + uuid.uuid4().hex[:12]
        self.n = 0
        self.proc = subprocess.Popen(
            [f"{PGBIN}/psql", "-X", "-q", "-tA", "-v", "ON_ERROR_STOP=1",
             "-h", SOCK, "-p", PGPORT, "-U", RUNAS, "-d", db],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, env=dict(os.environ, PGAPPNAME=self.name))
        self.run("SELECT 1")
        self.pid = int(psql(f"SELECT pid FROM pg_stat_activity WHERE application_name = '{self.name}'"))

    def send(self, sql):
        """Sends statements and returns at once (one may wait for a lock)."""
        self.n += 1
        self.proc.stdin.write(f"{sql};\nSELECT {self.n} AS ddb_test_done;\n")
        self.proc.stdin.flush()

    def done(self):
        """Has everything sent so far run?"""
        if self.proc.poll() is not None:
            raise RuntimeError(f"psql exited: {self.proc.stderr.read()}")
        return psql(f"SELECT count(*) FROM pg_stat_activity WHERE application_name = '{self.name}' "
                    f"AND state IN ('idle', 'idle in transaction') "
                    f"AND rtrim(query, ';') = 'SELECT {self.n} AS ddb_test_done'") == "1"

    def wait(self, timeout=30):
        if not wait_for(self.done, timeout):
            raise RuntimeError(f"session {self.name}: statement {self.n} still running")

    def run(self, sql, timeout=30):
        """Sends statements and waits until they have run."""
        self.send(sql)
        self.wait(timeout)

    def in_transaction(self):
        return psql(f"SELECT state FROM pg_stat_activity WHERE pid = {self.pid}") == "idle in transaction"

    def close(self):
        """Ends the session (a transaction still open is rolled back)."""
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            psql(f"SELECT pg_terminate_backend({self.pid})")
            self.proc.wait(30)
        self.proc.stderr.close()


def worker_blocked_by(pid):
    """The pid of a worker whose request waits for a lock that backend pid
    holds, else None."""
    out = psql("SELECT pid FROM pg_stat_activity WHERE backend_type = 'ddb http' "
               f"AND {pid} = ANY (pg_blocking_pids(pid))")
    return int(out) if out else None


def _reload_settings(settings, reset=False):
    for name, value in settings.items():
        if reset:
            psql(f"ALTER SYSTEM RESET {name}")
        else:
            psql(f"ALTER SYSTEM SET {name} = '{value}'")
    psql("SELECT pg_reload_conf()")


def _shown(names):
    return {n: psql(f"SHOW {n}") for n in names}


def set_server_settings(settings):
    """ALTER SYSTEM SET each name = value, then a reload; returns once the
    workers are sure to apply them before their next request.  The barrier:
    a new backend shows a value once the postmaster has read the file, and
    the postmaster signals its children (the workers) in the same step,
    before it forks another backend; a worker takes the reload on waking,
    before it reads a request."""
    before = _shown(settings)
    _reload_settings(settings)
    if not wait_for(lambda: all(v != before[n] for n, v in _shown(settings).items()), 30):
        raise RuntimeError(f"the settings {settings} did not change: {_shown(settings)}")


@contextlib.contextmanager
def server_settings(settings):
    """set_server_settings for the duration, then RESET (and the reload
    awaited as above).  Values must differ from the current ones."""
    before = _shown(settings)
    try:
        set_server_settings(settings)
        yield
    finally:
        _reload_settings(settings, reset=True)
        if not wait_for(lambda: _shown(settings) == before, 30):
            raise RuntimeError(f"the settings did not come back: {_shown(settings)}")


def in_background(fn):
    """Runs fn() in a thread; returns the thread and a dict that gets
    "value" or "error"."""
    result = {}

    def run():
        try:
            result["value"] = fn()
        except BaseException as e:   # noqa: BLE001
            result["error"] = e
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, result
