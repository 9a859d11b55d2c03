"""Bad input never takes a worker down or leaks memory: each kind of bad
request gets a clear 4xx in DynamoDB's format (or, where HTTP allows it,
the connection is dropped), and a valid request works right after it."""
import http.client
import json
import os
import re
import socket
import time

import pytest

from conftest import (PORT, WORK, Raw, Session, client, connections_held, create_table, drained, error_of,
                      in_background, psql, server_end, server_settings, set_server_settings,
                      signed_headers, tcp_sockets, wait_for, worker_blocked_by, worker_of,
                      worker_pids, workers_of)

HOST = ("127.0.0.1", PORT)


def valid_request_works():
    """A signed ListTables on a fresh connection succeeds."""
    r = Raw()
    resp, data = r.post({})
    r.close()
    assert resp.status == 200, data
    assert "TableNames" in json.loads(data)


def send_raw(data, timeout=10):
    """Sends bytes on a new connection; returns what came back before the
    server closed it (or the timeout)."""
    s = socket.create_connection(HOST, timeout=timeout)
    s.sendall(data)
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
    return out


def request_bytes(body, headers):
    lines = [b"POST / HTTP/1.1", f"Host: 127.0.0.1:{PORT}".encode()]
    lines += [f"{k}: {v}".encode() for k, v in headers.items()]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def on_worker(pid, pids, opened):
    """A new connection that worker pid accepted.  The connections other
    workers take meanwhile stay open (in 'opened', with it), so that pid
    soon holds the fewest and takes the next."""
    for _ in range(64):
        s = socket.create_connection(HOST, timeout=10)
        opened.append(s)
        if worker_of(s, pids) == pid:
            return s
    raise AssertionError(f"no connection reached worker {pid}")


def closed_unanswered(s):
    """Does the server close s without a byte of answer?"""
    s.settimeout(10)
    try:
        return s.recv(100) == b""
    except ConnectionResetError:
        return True


def test_oversized_body_declared():
    """A body over DynamoDB's 16 MB request limit is refused with 413 before
    it is read, and the connection closed, when the client waits for 100
    Continue before sending it, or declares more than 64 MB."""
    for length, expect in ((16 * 1024 * 1024 + 1, True), (64 * 1024 * 1024 + 1, False)):
        h = {"Content-Type": "application/x-amz-json-1.0",
             "X-Amz-Target": "DynamoDB_20120810.PutItem",
             "Content-Length": str(length)}
        if expect:
            h["Expect"] = "100-continue"
        out = send_raw(request_bytes(b"", h))
        assert out.startswith(b"HTTP/1.1 413 "), (length, out[:100])
        assert b"RequestEntityTooLargeException" in out
    valid_request_works()


def test_oversized_body_sent():
    """A client that sends its oversized body at once gets the 413 after it
    (the body read and dropped), not a reset connection: closing with the
    body unread made the kernel reset it, and boto3 retried for half a
    minute before it gave up with ConnectionClosedError."""
    body = b'{"x": "' + b"a" * (16 * 1024 * 1024) + b'"}'
    s = socket.create_connection(HOST, timeout=20)
    s.sendall(request_bytes(b"", {"Content-Type": "application/x-amz-json-1.0",
                                  "X-Amz-Target": "DynamoDB_20120810.PutItem",
                                  "Content-Length": str(len(body))}))
    try:
        s.sendall(body)
    except (BrokenPipeError, ConnectionResetError):
        pass
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
    assert out.startswith(b"HTTP/1.1 413 "), out[:100]
    valid_request_works()


def test_oversized_item_through_boto3(ddb):
    """boto3 with a 17 MB item gets DynamoDB's 413 error at once."""
    with pytest.raises(ddb.exceptions.ClientError) as e:
        ddb.put_item(TableName="no_such_table", Item={"PK": {"S": "x" * (17 * 1024 * 1024)}})
    err = e.value.response
    assert err["ResponseMetadata"]["HTTPStatusCode"] == 413, err
    assert err["Error"]["Code"] == "RequestEntityTooLargeException", err


def test_oversized_chunked_body_dropped():
    """A chunked body that grows past 16 MB: the connection is dropped."""
    s = socket.create_connection(HOST, timeout=20)
    s.sendall(request_bytes(b"", {"Content-Type": "application/x-amz-json-1.0",
                                  "X-Amz-Target": "DynamoDB_20120810.PutItem",
                                  "Transfer-Encoding": "chunked"}))
    chunk = b"a" * (1024 * 1024)
    dropped = False
    try:
        for _ in range(40):
            s.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
        dropped = s.recv(100) == b""
    except (BrokenPipeError, ConnectionResetError):
        dropped = True
    s.close()
    assert dropped
    valid_request_works()


def test_chunked_body_below_limit():
    """A chunked body within the limit is read and answered."""
    body = json.dumps({}).encode()
    h = signed_headers(body)
    h["Transfer-Encoding"] = "chunked"
    h["Connection"] = "close"
    out = send_raw(request_bytes(b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body), h), timeout=3)
    assert out.startswith(b"HTTP/1.1 200 "), out[:200]


def test_ambiguous_body_length_refused():
    """A request that gives its body's length twice (two Content-Length
    headers, or Content-Length with Transfer-Encoding), or by a
    Transfer-Encoding other than chunked alone, or has a header field name
    that is not a token ("Transfer-Encoding : chunked"), is refused with 400
    and the connection closed: a proxy in front that took the other length
    would otherwise see bytes the endpoint reads as a second request
    (request smuggling).  Before, the first length was taken and the
    smuggled request answered."""
    body = json.dumps({}).encode()
    smuggled = f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{PORT}\r\n\r\n".encode()
    cases = {
        "more than one Content-Length header": (
            [("Content-Length", str(len(body))), ("Content-Length", str(len(body) + len(smuggled)))],
            body + smuggled),
        "both Content-Length and Transfer-Encoding headers": (
            [("Content-Length", str(len(body) + 10)), ("Transfer-Encoding", "chunked")],
            b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body) + smuggled),
    }
    # A Transfer-Encoding that is not chunked alone: libmicrohttpd took the
    # body as lasting until the connection closed, so nothing was answered
    # before the idle timeout (and a proxy that decoded chunked would have
    # had its next requests swallowed as the body).
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    for te in (["gzip"], ["gzip, chunked"], ["chunked, identity"], ["chunked", "identity"]):
        cases[f"Transfer-Encoding {te}"] = ([("Transfer-Encoding", v) for v in te], chunked + smuggled)
    # Whitespace before the colon: libmicrohttpd kept it in the name and so
    # used the Content-Length alone (answering the smuggled GET), where a
    # proxy that trims the name takes the chunked coding or the second
    # length.
    for name in ("Transfer-Encoding ", "Transfer-Encoding\t", "Content-Length "):
        value = "chunked" if name.startswith("Transfer") else str(len(body) + len(smuggled))
        cases[f"field name {name!r}"] = (
            [("Content-Length", str(len(body))), (name, value)], body + smuggled)
    # A bare CR, at which some proxies end a line (so that they see a
    # Transfer-Encoding header this server took for part of a value), or
    # another control character.  (libmicrohttpd itself cuts a value at a
    # NUL, as it tells its length too.)
    for value in ("a\rTransfer-Encoding: chunked", "a\x01b", "a\x7fb"):
        cases[f"field value {value!r}"] = (
            [("Content-Length", str(len(body))), ("X-A", value)], body + smuggled)
    for what, (lengths, payload) in cases.items():
        h = signed_headers(body)
        lines = [b"POST / HTTP/1.1", f"Host: 127.0.0.1:{PORT}".encode()]
        lines += [f"{k}: {v}".encode() for k, v in h.items() if k.lower() != "content-length"]
        lines += [f"{k}: {v}".encode() for k, v in lengths]
        out = send_raw(b"\r\n".join(lines) + b"\r\n\r\n" + payload, timeout=5)
        assert out.startswith(b"HTTP/1.1 400 "), (what, out[:300])
        assert out.count(b"HTTP/1.1 ") == 1, (what, out)   # the smuggled GET is not answered
        head, _, resp_body = out.partition(b"\r\n\r\n")
        assert b"connection: close" in head.lower()
        message = f"The request has {what}"
        if what.startswith("Transfer-Encoding"):
            message = "The request has a Transfer-Encoding other than chunked"
        if what.startswith("field name"):
            message = "The request has a header field name that is not a token"
        if what.startswith("field value"):
            message = "The request has a control character in a header field value"
        assert json.loads(resp_body) == {
            "__type": "com.amazon.coral.service#SerializationException",
            "Message": message}
    valid_request_works()


def test_malformed_json_and_wrong_types(raw):
    """Malformed JSON is SerializationException; well-formed JSON with wrong
    member types is refused by the protocol layer with a 4xx, never 5xx."""
    for body in (b'{"TableName": "x"', b'{"TableName": "x",}', b"\x00\x01\x02", b"{" * 100000):
        r, data = raw.post(body, target="DynamoDB_20120810.GetItem")
        assert r.status == 400 and error_of(data)[0] == "SerializationException", body[:20]
    for body in ({"TableName": 5, "Key": {}}, {"TableName": "abc", "Key": "x"},
                 {"TableName": ["x"], "Key": {"PK": {"S": 1}}}, {"Limit": "ten"}):
        r, data = raw.post(body, target="DynamoDB_20120810.GetItem")
        assert 400 <= r.status < 500, (body, data)
        assert error_of(data)[0] in ("SerializationException", "ValidationException"), data
    valid_request_works()


def test_garbage():
    """Bytes that are no HTTP request: 400 or 505 from the HTTP parser, or
    the connection dropped (at the latest after the idle timeout)."""
    for junk in (b"hello world\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n",
                 b"POST / HTTP/1.1\r\nContent-Length: abc\r\n\r\n",
                 b"\xff" * 5000 + b"\r\n\r\n", b"\x00\x01garbage\r\n\r\n",
                 b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100000 + b"\r\n\r\n"):
        t = time.time()
        out = send_raw(junk, timeout=15)
        assert out == b"" or out[:12] in (b"HTTP/1.1 400", b"HTTP/1.1 505", b"HTTP/1.1 431", b"HTTP/1.1 413"), (junk[:20], out[:60])
        assert time.time() - t < 12, "the server held a garbage connection past its idle timeout"
        valid_request_works()


def test_half_sent_requests():
    """Requests that stop half-way (headers or body) are closed after the
    idle timeout (ddb.http_idle_timeout, 5 s in this suite) and never block
    other clients meanwhile."""
    half = []
    for data in (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Le",
                 request_bytes(b'{"Tab', {"Content-Type": "application/x-amz-json-1.0",
                                          "X-Amz-Target": "DynamoDB_20120810.ListTables",
                                          "Content-Length": "100"})):
        s = socket.create_connection(HOST, timeout=15)
        s.sendall(data)
        half.append(s)
    t = time.time()
    valid_request_works()
    for s in half:
        # the server closes it (possibly after a 4xx) within the idle timeout
        out = b""
        while True:
            b = s.recv(4096)
            if not b:
                break
            out += b
        s.close()
        assert out == b"" or out.startswith(b"HTTP/1.1 4"), out[:60]
    assert time.time() - t < 12


def test_many_idle_connections():
    """Hundreds of idle connections do not stop a worker from serving."""
    conns = [socket.create_connection(HOST, timeout=10) for _ in range(300)]
    try:
        valid_request_works()
        # and keep-alive connections that made one request and went idle
        raws = [Raw() for _ in range(50)]
        for r in raws:
            r.post({})
        valid_request_works()
        for r in raws:
            r.close()
    finally:
        for c in conns:
            c.close()
    valid_request_works()


def fill_workers(pids):
    """256 keep-alive connections per worker, each served twice (every
    worker holding no connection before)."""
    assert wait_for(lambda: all(connections_held(p) == 0 for p in pids), 15)
    conns = [http.client.HTTPConnection("127.0.0.1", PORT, timeout=10)
             for _ in range(256 * len(pids))]
    for c in conns:
        c.connect()
    for _ in range(2):
        health_checks(conns)
    return conns


def health_checks(conns):
    for c in conns:
        c.request("GET", "/")
        r = c.getresponse()
        assert r.status == 200 and r.read().startswith(b"healthy: ")


def test_each_worker_holds_256_connections():
    """Each worker holds up to 256 connections: with every worker holding
    256 keep-alive connections, all of them are served; a connection past
    them is closed unanswered (the workers let it wait in the listening
    socket's queue, up to half a second, for a slot to free, then one
    accepts it and closes it); once one connection closes, a new one is
    served."""
    import gc
    gc.collect()    # earlier tests' idle clients
    pids = worker_pids()
    conns = []
    extra = None
    try:
        conns = fill_workers(pids)
        assert [connections_held(p) for p in pids] == [256] * len(pids)
        extra = socket.create_connection(HOST, timeout=10)
        extra.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert closed_unanswered(extra)
        conns.pop().close()
        assert wait_for(lambda: sum(connections_held(p) for p in pids) == 256 * len(pids) - 1, 5)
        conns.append(http.client.HTTPConnection("127.0.0.1", PORT, timeout=10))
        health_checks(conns[-1:])
    finally:
        if extra is not None:
            extra.close()
        for c in conns:
            c.close()
    valid_request_works()


def test_full_worker_leaves_a_connection_to_one_with_room(ddb, table_name):
    """A worker at 256 connections does not take a connection another
    worker has room for, even while that one is busy with a long request
    (here one waiting for an item an SQL transaction holds, with
    ddb.http_lock_timeout 0): the connection waits for it, and is served
    once its request ends.  (The full worker took it after letting it pass
    for half a second, and libmicrohttpd, at its limit, closed it
    unanswered; a full worker whose count of passes was left high by an
    earlier connection did so within milliseconds.)"""
    import gc
    from conftest import create_table
    create_table(ddb, table_name)
    ddb.put_item(TableName=table_name, Item={"PK": {"S": "a"}, "SK": {"S": "b"}, "v": {"S": "0"}})
    ddb.close()     # its keep-alive connection
    gc.collect()
    pids = worker_pids()
    holder = Session()
    conns = []
    late = None
    try:
        with server_settings({"ddb.http_lock_timeout": "0"}):
            holder.run("BEGIN; SELECT " + item_sql(table_name, {"PK": "a", "SK": "b", "v": "sql"}))
            conns = fill_workers(pids)
            owner = workers_of([c.sock for c in conns], pids)
            a = owner[0]
            busy, spare = [c for c, p in zip(conns, owner) if p == a][:2]
            others = [c for c, p in zip(conns, owner) if p != a]
            # a: 255 connections, then busy
            conns.remove(spare)
            spare.close()
            assert wait_for(lambda: connections_held(a) == 255, 5)
            body = json.dumps({"TableName": table_name, "Item": {
                "PK": {"S": "a"}, "SK": {"S": "b"}, "v": {"S": "http"}}}).encode()
            busy.request("POST", "/", body=body, headers=signed_headers(body, "DynamoDB_20120810.PutItem"))
            assert wait_for(lambda: worker_blocked_by(holder.pid) == a, 10)
            health_checks(others)   # (their idle clocks start over)
            late = socket.create_connection(HOST, timeout=1)
            late.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            # twice the half second after which a full worker took it
            with pytest.raises(socket.timeout):
                late.recv(100)
            holder.run("COMMIT")
            r = busy.getresponse()
            assert r.status == 200, r.read()
            r.read()
            resp = http.client.HTTPResponse(late)
            late.settimeout(10)
            resp.begin()
            assert resp.status == 200 and resp.read().startswith(b"healthy: ")
    finally:
        if late is not None:
            late.close()
        for c in conns:
            c.close()
        holder.close()
    assert v_of(ddb, table_name) == "http"
    valid_request_works()


def test_client_disconnects_mid_response():
    """A client that sends requests and resets the connection before
    reading the answers."""
    body = b"{}"
    h = signed_headers(body)
    req = request_bytes(body, dict(h, **{"Content-Length": str(len(body))}))
    for _ in range(20):
        s = socket.create_connection(HOST)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.sendall(req * 50)
        s.close()   # RST: the answers are written into a dead connection
    valid_request_works()


def test_workers_survive_bad_input():
    """After all of the above, the same workers are still running (none
    restarted), and the endpoint answers."""
    before = worker_pids()
    send_raw(b"\xff" * 100 + b"\r\n\r\n", timeout=2)
    Raw().post(b"{", target="DynamoDB_20120810.GetItem")
    valid_request_works()
    assert worker_pids() == before


def proc_kb(pid, path, field):
    """A "<field>: <n> kB" line of /proc/<pid>/<path>, in kB (0: none)."""
    with open(f"/proc/{pid}/{path}") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def rss_kb(pid):
    return proc_kb(pid, "status", "VmRSS")


def test_no_memory_growth_across_requests():
    """Memory is per request: a thousand requests, failing ones with 512 kB
    bodies included, leave each worker's resident size where it was (a
    leak of the body alone would grow it by 125 MB)."""
    pids = worker_pids()
    c = client()
    big = json.dumps({"TableName": "no_such_table", "Item": {"PK": {"S": "x" * (512 * 1024)}}}).encode()
    raws = [Raw() for _ in range(4)]

    def burst(n):
        for i in range(n):
            r = raws[i % len(raws)]
            r.post(big, target="DynamoDB_20120810.PutItem")
            r.post(b"{bad json", target="DynamoDB_20120810.PutItem")
            r.post({}, key_id="AKDBNOSUCHKEY0000000")
            c.list_tables()

    burst(50)       # warm caches and allocator arenas
    before = {p: rss_kb(p) for p in pids}
    burst(250)      # 125 MB of bodies through the workers
    after = {p: rss_kb(p) for p in pids}
    for r in raws:
        r.close()
    for p in pids:
        assert after[p] - before[p] < 20 * 1024, (p, before[p], after[p])


def top_memory_used(pid):
    """Bytes used in the worker's TopMemoryContext, from the memory context
    dump pg_log_backend_memory_contexts writes to the server log."""
    log = os.path.join(WORK, "server.log")
    start = os.path.getsize(log)
    psql(f"SELECT pg_log_backend_memory_contexts({pid})")
    pat = re.compile(rf"\[{pid}\] LOG:  level: 0; TopMemoryContext: .*; (\d+) used")

    def found():
        with open(log, "rb") as f:
            f.seek(start)
            m = pat.search(f.read().decode(errors="replace"))
        return int(m.group(1)) if m else None
    v = wait_for(found, 10)
    assert v is not None, "no memory context dump in the server log"
    return v


def test_failed_requests_leave_nothing_in_top_memory():
    """A request that fails with a DynamoDB error is answered from the
    request's memory, not from what the transaction's abort left current
    (TopMemoryContext): each failed request left about 150 bytes there for
    good, so a client sending failing requests grew a worker without
    bound.  Measured in the worker's TopMemoryContext itself, which
    resident size is too coarse to show."""
    r = Raw()
    bodies = [
        ("DynamoDB_20120810.GetItem", {"TableName": "no_such_table", "Key": {"PK": {"S": "a"}}}),
        ("DynamoDB_20120810.PutItem", {"TableName": "no_such_table", "Item": {}}),
        ("DynamoDB_20120810.CreateTable", {"TableName": "x"}),
    ]

    def burst(n):
        for i in range(n):
            target, body = bodies[i % len(bodies)]
            resp, data = r.post(body, target=target)
            assert resp.status == 400, data

    burst(30)
    pid = worker_of(r.conn.sock, worker_pids())
    before = top_memory_used(pid)
    burst(600)
    after = top_memory_used(pid)
    r.close()
    # before the fix: about 90 kB
    assert after - before < 8192, (before, after)


def private_dirty_kb(pid):
    """The process's own written memory: what a leak grows (resident size
    also counts shared buffers it touched)."""
    return proc_kb(pid, "smaps_rollup", "Private_Dirty")


def test_many_short_strings_parse_in_little_memory():
    """A request body is parsed into a tree whose strings take about their
    own size: each string used to keep the 1 kB buffer it was de-escaped
    into, so 2 MB of ["a","a",...] (half a million strings) took the
    worker's peak past 550 MB, and a 16 MB body past 4 GB, from any key
    (the body is parsed before anything is checked).  Now about 60 MB.
    Measured as the growth of the worker's peak resident size, which is
    reset (clear_refs) just before."""
    r = Raw()
    resp, data = r.post({})
    assert resp.status == 200, data
    pid = worker_of(r.conn.sock, worker_pids())
    body = b'{"TableName": "no_such_table", "x": [' + b",".join([b'"a"'] * 500000) + b"]}"
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")    # the peak resident size starts again from now
    start = rss_kb(pid)
    resp, data = r.post(body, target="DynamoDB_20120810.Scan")
    peak = proc_kb(pid, "status", "VmHWM")
    r.close()
    assert resp.status == 400 and error_of(data)[0] == "ResourceNotFoundException", data
    assert peak - start < 150 * 1024, (start, peak)


def test_many_small_values_parse_in_less_memory():
    """The parsed tree's nodes and strings are carved out of blocks, not
    palloc'd one by one (a chunk header and power-of-two rounding took a
    one-byte number about 100 bytes): 6 MB of [1,1,...] (three million
    numbers) peaked about 340 MB above where the worker started, about 200
    MB now."""
    r = Raw()
    resp, data = r.post({})
    assert resp.status == 200, data
    pid = worker_of(r.conn.sock, worker_pids())
    body = b'{"TableName": "no_such_table", "x": [' + b",".join([b"1"] * 3000000) + b"]}"
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")
    start = rss_kb(pid)
    resp, data = r.post(body, target="DynamoDB_20120810.Scan")
    peak = proc_kb(pid, "status", "VmHWM")
    r.close()
    assert resp.status == 400 and error_of(data)[0] == "ResourceNotFoundException", data
    assert peak - start < 270 * 1024, (start, peak)


def test_dropped_tables_leave_no_memory_behind():
    """A worker lives as long as the server, and a test suite against it may
    create and delete tables by the thousand: what ddb caches per table (its
    names, key schema, index list and stream: three memory contexts and
    some entries) is let go once the table is dropped, between requests.
    Measured over 400 tables created, written and deleted through one
    connection (so one worker): the worker that served them grew by about
    8.6 kB a table before, 4.4 kB now (what PostgreSQL's own caches keep of
    a table and its TOAST table); the bound is 6 kB."""
    pids = worker_pids()
    c = client()

    def churn(n, tag):
        for i in range(n):
            name = f"churn_{tag}_{i}"
            create_table(c, name)
            c.put_item(TableName=name, Item={"PK": {"S": "a"}, "SK": {"S": "b"}, "n": {"N": "1"}})
            c.get_item(TableName=name, Key={"PK": {"S": "a"}, "SK": {"S": "b"}})
            c.delete_table(TableName=name)
        for _ in range(70):     # past the next sweep (every 64 requests)
            c.list_tables()

    churn(60, "warm")
    before = {p: private_dirty_kb(p) for p in pids}
    churn(400, "n")
    after = {p: private_dirty_kb(p) for p in pids}
    assert worker_pids() == pids
    for p in pids:
        assert after[p] - before[p] < 400 * 6, (p, before[p], after[p])


def test_index_key_limits_are_client_errors(ddb, table_name):
    """An index key over a table key's size, or an index key (index keys and
    table keys) over ddb's 3200 encoded bytes, is a 400 ValidationException,
    not an InternalServerError, and the worker goes on serving."""
    from conftest import create_table
    create_table(ddb, table_name, attrs={"G": "S"}, gsis=[{
        "IndexName": "ByG", "KeySchema": [{"AttributeName": "G", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "KEYS_ONLY"}}])
    for item, words in [
            ({"PK": {"S": "a"}, "SK": {"S": "1"}, "G": {"S": "g" * 2049}}, "2048"),
            ({"PK": {"S": "p" * 2000}, "SK": {"S": "1"}, "G": {"S": "g" * 2000}}, "over ddb's limit")]:
        with pytest.raises(ddb.exceptions.ClientError) as e:
            ddb.put_item(TableName=table_name, Item=item)
        err = e.value.response
        assert err["ResponseMetadata"]["HTTPStatusCode"] == 400, err
        assert err["Error"]["Code"] == "ValidationException", err
        assert words in err["Error"]["Message"], err
    assert "Item" not in ddb.get_item(TableName=table_name,
                                      Key={"PK": {"S": "a"}, "SK": {"S": "1"}})
    valid_request_works()


def test_null_in_string_lists(ddb, table_name):
    """A JSON null among the elements of a list of strings or of a set is a
    400 ValidationException, never a crash: such a request used to kill the
    worker (signal 11), and with it every session of the server.  Checked
    for every member that is such a list, and for the sets of an item."""
    from conftest import create_table
    create_table(ddb, table_name)
    before = worker_pids()
    arn = f"arn:aws:dynamodb:us-east-1:000000000000:table/{table_name}"
    gsi = {"IndexName": "ByG", "KeySchema": [{"AttributeName": "G", "KeyType": "HASH"}],
           "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", None]}}
    key = {"PK": {"S": "a"}, "SK": {"S": "b"}}
    r = Raw()
    for target, body in [
            ("GetItem", {"TableName": "doesnotexist", "Key": key, "AttributesToGet": [None]}),
            ("GetItem", {"TableName": table_name, "Key": key, "AttributesToGet": [None]}),
            ("Scan", {"TableName": table_name, "AttributesToGet": ["a", None]}),
            ("BatchGetItem", {"RequestItems": {table_name: {"Keys": [key], "AttributesToGet": [None]}}}),
            ("UntagResource", {"ResourceArn": arn, "TagKeys": [None]}),
            ("CreateTable", {"TableName": table_name + "x", "BillingMode": "PAY_PER_REQUEST",
                             "AttributeDefinitions": [{"AttributeName": "PK", "AttributeType": "S"},
                                                      {"AttributeName": "G", "AttributeType": "S"}],
                             "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}],
                             "GlobalSecondaryIndexes": [gsi]}),
            ("UpdateTable", {"TableName": table_name,
                             "AttributeDefinitions": [{"AttributeName": "G", "AttributeType": "S"}],
                             "GlobalSecondaryIndexUpdates": [{"Create": gsi}]}),
            ("PutItem", {"TableName": table_name, "Item": dict(key, s={"SS": ["x", None]})}),
            ("PutItem", {"TableName": table_name, "Item": dict(key, s={"NS": [None]})}),
            ("PutItem", {"TableName": table_name, "Item": dict(key, s={"BS": [None]})})]:
        resp, data = r.post(body, target="DynamoDB_20120810." + target)
        assert resp.status == 400, (target, data)
        assert error_of(data)[0] == "ValidationException", (target, data)
    r.close()
    assert "Item" not in ddb.get_item(TableName=table_name, Key=key)
    valid_request_works()
    assert worker_pids() == before


def test_deep_nesting_is_a_serialization_error():
    """JSON nested far deeper than the protocol takes (DynamoDB's deserializer
    refuses it) is a 400 SerializationException, signed or not: the check of
    the body's syntax used to recurse per level, run out of stack and answer
    500."""
    depth = 20000
    body = b'{"x":' + b"[" * depth + b"]" * depth + b"}"
    r = Raw()
    for sign in (True, False):
        resp, data = r.post(body, target="DynamoDB_20120810.GetItem", sign=sign)
        assert resp.status == 400, data[:200]
        if sign:
            assert error_of(data)[0] == "SerializationException", data[:200]
    r.close()
    valid_request_works()


def test_invalid_utf8_and_nul_in_names(ddb, table_name):
    """Invalid UTF-8 in an attribute name (a JSON object key) or in a string
    that also holds U+0000 is a SerializationException, as in any other
    string: stored, it made the table unreadable to SDKs.  U+0000 in a table
    name is a ValidationException: read as a C string, "t\\u0000x" named the
    table t."""
    from conftest import create_table
    create_table(ddb, table_name)
    r = Raw()
    for body in (b'{"TableName":"%s","Item":{"PK":{"S":"x"},"SK":{"S":"y"},"\xff":{"S":"x"}}}',
                 b'{"TableName":"%s","Item":{"PK":{"S":"x"},"SK":{"S":"y"},"v":{"S":"\\u0000\xff\xfe"}}}'):
        resp, data = r.post(body % table_name.encode(), target="DynamoDB_20120810.PutItem")
        assert resp.status == 400 and error_of(data)[0] == "SerializationException", data
    key = {"PK": {"S": "x"}, "SK": {"S": "y"}}
    for target, body in [
            ("DescribeTable", {"TableName": table_name + "\u0000;DROP"}),
            ("GetItem", {"TableName": table_name + "\u0000garbage", "Key": key}),
            ("PutItem", {"TableName": table_name + "\u0000x", "Item": key}),
            ("BatchWriteItem", {"RequestItems": {table_name + "\u0000x": [{"PutRequest": {"Item": key}}]}}),
            ("BatchGetItem", {"RequestItems": {table_name + "\u0000x": {"Keys": [key]}}})]:
        resp, data = r.post(body, target="DynamoDB_20120810." + target)
        assert resp.status == 400 and error_of(data)[0] == "ValidationException", (target, data)
    r.close()
    assert ddb.scan(TableName=table_name)["Count"] == 0


def test_buffered_bodies_are_bounded():
    """A worker holds at most 64 MB of request bodies across its
    connections (bodies are read whole before the signature can be checked):
    an unauthenticated client that opens many connections, each sending most
    of a 16 MB body, has the ones past the bound dropped (or, once the
    worker holds the bound, answered ThrottlingException) instead of growing
    the workers by its full volume (20 x 15 MB here; it grew them by all of
    it before).  What counts is what has arrived: connections that only
    declare 16 MB throttle nobody."""
    pids = worker_pids()
    h = {"Content-Type": "application/x-amz-json-1.0",
         "X-Amz-Target": "DynamoDB_20120810.PutItem",
         "Content-Length": str(16 * 1024 * 1024)}
    # declared, never sent: other requests are served
    idle = [socket.create_connection(HOST, timeout=10) for _ in range(4 * len(pids) + 2)]
    for s in idle:
        s.sendall(request_bytes(b"{", h))
    time.sleep(0.3)
    valid_request_works()
    for s in idle:
        s.close()
    # sent: held up to the bound, the rest refused
    before = sum(rss_kb(p) for p in pids)
    chunk = b" " * (1024 * 1024)
    socks, refused = [], 0
    for _ in range(20):
        s = socket.create_connection(HOST, timeout=10)
        try:
            s.sendall(request_bytes(b"{", h))
            for _ in range(15):
                s.sendall(chunk)
            socks.append(s)
        except (BrokenPipeError, ConnectionResetError, socket.timeout):
            refused += 1
            s.close()
    time.sleep(0.5)
    grown_mb = (sum(rss_kb(p) for p in pids) - before) / 1024
    for s in socks:
        s.close()
    assert refused >= 20 - 4 * len(pids), (refused, len(pids))
    assert grown_mb < 4 * 16 * len(pids) + 32, grown_mb
    # the closed connections' bodies are given back (once the workers see
    # the closes): a request of ordinary size is served again
    assert_served_again()


def assert_served_again():
    """A request of ordinary size is served again, once the worker has seen
    the closes that gave its bodies back."""
    for _ in range(50):
        r = Raw()
        resp, data = r.post({})
        r.close()
        if resp.status == 200:
            break
        time.sleep(0.1)
    assert resp.status == 200, data


THROTTLED = {"__type": "com.amazon.coral.availability#ThrottlingException",
             "message": "Rate of requests exceeds the allowed throughput."}


def signed_probe(s):
    """Send a small signed request ({}) on socket s; its response's status,
    Content-Type and body."""
    body = b"{}"
    s.sendall(request_bytes(body, dict(signed_headers(body), **{"Content-Length": str(len(body))})))
    resp = http.client.HTTPResponse(s)
    resp.begin()
    data = resp.read()
    return resp.status, resp.getheader("Content-Type"), data


def test_throttled_at_64mb():
    """Both halves of the bound on one worker's bodies, observed on one
    worker: three connections hold 16 MB each (each body declared 16 MB and
    lacks its last byte: a buffer grows by doubling, clamped to the declared
    length, so it is exactly 16 MB) and a fourth has sent one byte (4 kB);
    a fifth body, which cannot fit, gets its connection closed; once the
    fourth body holds 16 MB too (64 MB in all), a small signed request that
    starts on a new connection to that worker is answered at once 400
    ThrottlingException in DynamoDB's JSON, which SDKs retry.  Connections
    are steered to the worker by the workers' balancing (the least loaded
    takes the next) and told apart by the sockets each worker holds; every
    byte sent is known to be read before the next step.  All of it is done
    well within the idle timeout (5 s here), which would cut the bodies."""
    pids = worker_pids()
    mb16 = 16 * 1024 * 1024
    h = {"Content-Type": "application/x-amz-json-1.0",
         "X-Amz-Target": "DynamoDB_20120810.PutItem",
         "Content-Length": str(mb16)}
    rest = b" " * (mb16 - 2)     # after "{": all but the last byte
    opened = []
    try:
        first = socket.create_connection(HOST, timeout=10)
        opened.append(first)
        w = worker_of(first, pids)
        assert w is not None
        full = [first] + [on_worker(w, pids, opened) for _ in range(2)]
        for s in full:
            s.sendall(request_bytes(b"{", h) + rest)
        fourth = on_worker(w, pids, opened)
        fourth.sendall(request_bytes(b"{", h))
        fifth = on_worker(w, pids, opened)
        fifth.sendall(request_bytes(b"{", h))
        assert wait_for(lambda: all(drained(s) for s in full + [fourth, fifth]), 5)
        # 48 MB + 4 kB + 4 kB: the fifth body cannot grow to 16 MB
        try:
            fifth.sendall(rest)
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert closed_unanswered(fifth)
        # closed for its size, not by the idle timeout: the older
        # connections are open
        table = tcp_sockets()
        assert all((server_end(s, table) or ("gone",))[0] == "01" for s in full + [fourth])
        # 64 MB: the fourth body holds 16 MB too
        fourth.sendall(rest)
        assert wait_for(lambda: drained(fourth), 5)
        status, ctype, data = signed_probe(on_worker(w, pids, opened))
        assert status == 400, data
        assert ctype == "application/x-amz-json-1.0"
        assert json.loads(data) == THROTTLED
    finally:
        for s in opened:
            s.close()
    # the bodies are given back once the worker sees the closes
    assert_served_again()


def test_unread_responses_are_bounded(ddb, table_name):
    """Responses are held until sent, and a client need not read them: six
    BatchGetItems of 16 MB each, sent on six connections to one worker
    that read nothing, leave that worker holding 96 MB (256 such
    connections held 4 GB, until libmicrohttpd's inactivity timeout let
    them go).  Past 64 MB unsent the worker answers a request with
    ThrottlingException instead of running it, and serves again once the
    responses are gone (here: their connections closed)."""
    create_table(ddb, table_name)
    big = "x" * (390 * 1024)
    keys = [{"PK": {"S": str(i)}, "SK": {"S": "x"}} for i in range(42)]
    for i in range(0, len(keys), 21):
        ddb.batch_write_item(RequestItems={table_name: [
            {"PutRequest": {"Item": dict(k, v={"S": big})}} for k in keys[i:i + 21]]})
    body = json.dumps({"RequestItems": {table_name: {"Keys": keys}}}).encode()
    pids = worker_pids()
    opened = []
    try:
        first = socket.create_connection(HOST, timeout=10)
        opened.append(first)
        w = worker_of(first, pids)
        assert w is not None
        # (five would do: six leave room for a slow machine, where the
        # first response may be let go by the idle timeout before the
        # fifth is made)
        readers = [first] + [on_worker(w, pids, opened) for _ in range(5)]
        # connections to the same worker, opened while it is idle (a busy
        # worker leaves new ones to the other)
        probes = [on_worker(w, pids, opened) for _ in range(40)]
        for s in readers:
            h = dict(signed_headers(body, "DynamoDB_20120810.BatchGetItem"),
                     **{"Content-Length": str(len(body))})
            s.sendall(request_bytes(body, h))
        # (well within the idle timeout, 5 s here, that would close them)
        end = time.time() + 4.5
        status = None
        while time.time() < end and probes:
            status, _, data = signed_probe(probes.pop())
            if status == 400:
                break
            time.sleep(0.1)
        assert status == 400, "a worker holding 96 MB of unread responses still ran requests"
        assert json.loads(data) == THROTTLED
    finally:
        for s in opened:
            s.close()
    assert_served_again()


def test_slow_request_is_cut():
    """A request sent a byte at a time, each within the idle timeout (5 s
    here), is closed once the connection has gone that long without
    completing a request: libmicrohttpd's timeout alone measures inactivity,
    and such a client kept its connection for ever (512 of them shut the
    endpoint out)."""
    s = socket.create_connection(HOST, timeout=2)
    s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\n")
    start = time.monotonic()
    closed = False
    while time.monotonic() - start < 15 and not closed:
        try:
            s.sendall(b"X")
            s.settimeout(1)
            if s.recv(100) == b"":
                closed = True
        except socket.timeout:
            pass
        except (BrokenPipeError, ConnectionResetError):
            closed = True
    elapsed = time.monotonic() - start
    s.close()
    assert closed and elapsed < 10, elapsed
    valid_request_works()


def test_slow_reader_of_a_response_is_not_cut(ddb, table_name):
    """The idle timeout's clock stops once a request is in: a large response
    (a 14 MB BatchGetItem, more than the sockets' buffers hold) read at a
    pace that takes longer than the timeout (5 s here) arrives whole.  (The
    clock used to run until the response was sent, and cut it.)"""
    from conftest import create_table
    create_table(ddb, table_name)
    keys = [{"PK": {"S": "p"}, "SK": {"S": "%03d" % i}} for i in range(40)]
    for part in (keys[:20], keys[20:]):
        ddb.batch_write_item(RequestItems={table_name: [
            {"PutRequest": {"Item": dict(k, v={"S": "x" * 350000})}} for k in part]})
    body = json.dumps({"RequestItems": {table_name: {"Keys": keys}}}).encode()
    s = socket.create_connection(HOST, timeout=20)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 262144)
    h = signed_headers(body, "DynamoDB_20120810.BatchGetItem")
    h["Content-Length"] = str(len(body))
    s.sendall(request_bytes(body, h))
    got = b""
    length = None
    start = time.monotonic()
    while True:
        b = s.recv(65536)
        if not b:
            break
        got += b
        if length is None and b"\r\n\r\n" in got:
            head = got.partition(b"\r\n\r\n")[0]
            length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1)) + len(head) + 4
        if length is not None and len(got) >= length:
            break
        # about 1.3 MB/s: the sending takes longer than the timeout, yet
        # never stalls for long (libmicrohttpd's own inactivity timeout)
        time.sleep(0.05)
    s.close()
    head, _, rest = got.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head[:100]
    assert time.monotonic() - start > 6
    assert len(got) == length, (len(got), length)
    assert len(json.loads(rest)["Responses"][table_name]) == 40


CONFLICT = ("TransactionConflictException", "Transaction is ongoing for the item")


def item_sql(table, item):
    """An item for ddb_put_item in SQL: item is {"PK": "a", ...} (strings)."""
    return "ddb_put_item('%s', '%s')" % (table, json.dumps(item))


def v_of(ddb, table, pk="a", sk="b"):
    got = ddb.get_item(TableName=table, Key={"PK": {"S": pk}, "SK": {"S": sk}}, ConsistentRead=True)
    return got["Item"]["v"]["S"]


def put_raw(table, v, pk="a", sk="b"):
    """PutItem on a fresh connection: (status, body)."""
    r = Raw(timeout=60)
    try:
        resp, data = r.post({"TableName": table, "Item": {"PK": {"S": pk}, "SK": {"S": sk}, "v": {"S": v}}},
                            target="DynamoDB_20120810.PutItem")
        return resp.status, data
    finally:
        r.close()


def test_lock_wait_is_a_transaction_conflict(ddb, table_name):
    """A request waits for a lock at most ddb.http_lock_timeout (1 s here),
    then fails with TransactionConflictException, as DynamoDB fails rather
    than waits: one request waiting behind an open SQL transaction used to
    stall every connection of its worker for as long as it lasted.  The
    table lock is still held when the answer comes."""
    from conftest import create_table
    create_table(ddb, table_name)
    holder = Session()
    try:
        holder.run(f'BEGIN; LOCK TABLE "{table_name}" IN ACCESS EXCLUSIVE MODE')
        with pytest.raises(ddb.exceptions.ClientError) as e:
            ddb.put_item(TableName=table_name, Item={"PK": {"S": "a"}, "SK": {"S": "b"}})
        err = e.value.response
        assert err["ResponseMetadata"]["HTTPStatusCode"] == 400, err
        assert (err["Error"]["Code"], err["Error"]["Message"]) == CONFLICT, err
        assert holder.in_transaction()
        holder.run("COMMIT")
    finally:
        holder.close()
    ddb.put_item(TableName=table_name, Item={"PK": {"S": "a"}, "SK": {"S": "b"}})


def test_item_lock_wait_is_a_transaction_conflict(ddb, table_name):
    """An item an SQL transaction is writing: a request that writes it
    waits ddb.http_lock_timeout, then fails with lock_not_available
    (55P03), answered 400 TransactionConflictException "Transaction is
    ongoing for the item" (the transaction still open meanwhile), and
    writes nothing."""
    from conftest import create_table
    create_table(ddb, table_name)
    ddb.put_item(TableName=table_name, Item={"PK": {"S": "a"}, "SK": {"S": "b"}, "v": {"S": "0"}})
    holder = Session()
    try:
        holder.run("BEGIN; SELECT " + item_sql(table_name, {"PK": "a", "SK": "b", "v": "sql"}))
        status, data = put_raw(table_name, "http")
        assert status == 400, data
        assert error_of(data) == CONFLICT
        assert holder.in_transaction()
        holder.run("COMMIT")
    finally:
        holder.close()
    assert v_of(ddb, table_name) == "sql"


def test_batch_statement_lock_wait_is_its_transaction_conflict(ddb, table_name):
    """In a BatchExecuteStatement each statement runs in a subtransaction of
    its own, so a statement whose item an SQL transaction is writing waits
    ddb.http_lock_timeout and is that statement's TransactionConflict
    (DynamoDB's BatchStatementError code, with the endpoint's words); the
    other statements of the batch are written.  (The lock timeout failed
    the whole batch before.)"""
    from conftest import create_table
    create_table(ddb, table_name)
    for sk in ("b", "c"):
        ddb.put_item(TableName=table_name, Item={"PK": {"S": "a"}, "SK": {"S": sk}, "v": {"S": "0"}})
    holder = Session()
    try:
        holder.run("BEGIN; SELECT " + item_sql(table_name, {"PK": "a", "SK": "b", "v": "sql"}))
        got = ddb.batch_execute_statement(Statements=[
            {"Statement": f"UPDATE \"{table_name}\" SET v = 'http' WHERE PK = 'a' AND SK = '{sk}'"}
            for sk in ("b", "c")])["Responses"]
        assert holder.in_transaction()
        holder.run("COMMIT")
    finally:
        holder.close()
    assert [r.get("Error", {}).get("Code") for r in got] == ["TransactionConflict", None], got
    assert got[0]["Error"]["Message"] == CONFLICT[1], got
    assert v_of(ddb, table_name, sk="b") == "sql"
    assert v_of(ddb, table_name, sk="c") == "http"


def test_serialization_failure_is_a_transaction_conflict(ddb, table_name):
    """Under REPEATABLE READ (default_transaction_isolation, here for the
    workers), a request that waited for an item an SQL transaction then
    changed and committed fails with serialization_failure (40001),
    answered 400 TransactionConflictException "Transaction is ongoing for
    the item".  ddb.http_lock_timeout is 0 (no limit) meanwhile, so the
    answer is no lock timeout."""
    from conftest import create_table
    create_table(ddb, table_name)
    ddb.put_item(TableName=table_name, Item={"PK": {"S": "a"}, "SK": {"S": "b"}, "v": {"S": "0"}})
    holder = Session()
    try:
        with server_settings({"default_transaction_isolation": "repeatable read",
                              "ddb.http_lock_timeout": "0"}):
            holder.run("BEGIN; SELECT " + item_sql(table_name, {"PK": "a", "SK": "b", "v": "sql"}))
            t, result = in_background(lambda: put_raw(table_name, "http"))
            assert wait_for(lambda: worker_blocked_by(holder.pid), 10)
            holder.run("COMMIT")
            t.join(30)
        status, data = result["value"]
        assert status == 400, data
        assert error_of(data) == CONFLICT
    finally:
        holder.close()
    assert v_of(ddb, table_name) == "sql"


def test_deadlock_is_a_transaction_conflict(ddb, table_name):
    """A request in a deadlock with SQL sessions fails with
    deadlock_detected (40P01), answered 400 TransactionConflictException
    "Transaction is ongoing for the item", and writes nothing.  The
    TransactWriteItems writes items 1, 2, 3 in key order: it writes 1,
    waits for 2 (session B's); session A, holding 3, waits for 1; B
    commits, the request waits for 3 and so closes the cycle.  Only the
    worker looks for deadlocks (A's deadlock_timeout is an hour), and
    ddb.http_lock_timeout is 0 (no limit), so nothing but the deadlock can
    end the request."""
    from conftest import create_table
    create_table(ddb, table_name)
    for sk in "123":
        ddb.put_item(TableName=table_name, Item={"PK": {"S": "a"}, "SK": {"S": sk}, "v": {"S": "0"}})
    a, b = Session(), Session()
    body = {"TransactItems": [{"Put": {"TableName": table_name, "Item": {
        "PK": {"S": "a"}, "SK": {"S": sk}, "v": {"S": "http"}}}} for sk in "321"]}

    def transact():
        r = Raw(timeout=60)
        try:
            resp, data = r.post(body, target="DynamoDB_20120810.TransactWriteItems")
            return resp.status, data
        finally:
            r.close()
    try:
        with server_settings({"ddb.http_lock_timeout": "0"}):
            b.run("BEGIN; SELECT " + item_sql(table_name, {"PK": "a", "SK": "2", "v": "b"}))
            a.run("BEGIN; SET LOCAL deadlock_timeout = '1h'; SELECT "
                  + item_sql(table_name, {"PK": "a", "SK": "3", "v": "a"}))
            t, result = in_background(transact)
            w = wait_for(lambda: worker_blocked_by(b.pid), 10)
            assert w
            a.send("SELECT " + item_sql(table_name, {"PK": "a", "SK": "1", "v": "a"}))
            assert wait_for(lambda: psql(f"SELECT pg_blocking_pids({a.pid})") == "{%d}" % w, 10)
            b.run("COMMIT")
            t.join(30)
            status, data = result["value"]
            assert status == 400, data
            assert error_of(data) == CONFLICT
            a.wait()
            a.run("COMMIT")
    finally:
        a.close()
        b.close()
    assert [v_of(ddb, table_name, sk=sk) for sk in "123"] == ["a", "b", "a"]


def test_lock_timeout_takes_effect_on_reload(ddb, table_name):
    """ddb.http_lock_timeout takes effect on reload: set to 0, a request
    behind an SQL transaction's item is still waiting twice the
    suite's 1 s later (and 0 waits as long as it takes: it is written once
    the transaction ends); set to 500ms, a new request fails with
    TransactionConflictException while that transaction still holds the
    item and the first request still waits."""
    from conftest import create_table
    create_table(ddb, table_name)
    ddb.put_item(TableName=table_name, Item={"PK": {"S": "a"}, "SK": {"S": "b"}, "v": {"S": "0"}})
    holder = Session()
    try:
        holder.run("BEGIN; SELECT " + item_sql(table_name, {"PK": "a", "SK": "b", "v": "sql"}))
        with server_settings({"ddb.http_lock_timeout": "0"}):
            t, result = in_background(lambda: put_raw(table_name, "first"))
            w = wait_for(lambda: worker_blocked_by(holder.pid), 10)
            assert w
            time.sleep(2)
            assert t.is_alive() and worker_blocked_by(holder.pid) == w
            set_server_settings({"ddb.http_lock_timeout": "500ms"})
            # (the waiting worker is busy: the other takes the connection)
            status, data = put_raw(table_name, "second")
            assert status == 400, data
            assert error_of(data) == CONFLICT
            assert t.is_alive() and holder.in_transaction()
            holder.run("COMMIT")
            t.join(30)
            assert result["value"][0] == 200, result
    finally:
        holder.close()
    assert v_of(ddb, table_name) == "first"


def test_concurrent_create_table_is_resource_in_use(ddb, table_name):
    """CreateTable of a name another transaction is creating, not yet
    committed: the existence check cannot see that table, so CREATE TABLE
    waits for the other transaction and, once it commits, meets the
    catalogs' unique index.  The answer is DynamoDB's second CreateTable's,
    400 ResourceInUseException "Table already exists: <name>" (it was a 500
    InternalServerError), and the table is the other transaction's."""
    from conftest import create_table
    holder = Session()
    try:
        with server_settings({"ddb.http_lock_timeout": "30s"}):
            holder.run(f"BEGIN; SET LOCAL ROLE ddb_app; "
                       f"SELECT ddb_create_table('{table_name}', 'PK', 'S', 'SK', 'S')")
            t, result = in_background(lambda: create_table(client(), table_name))
            assert wait_for(lambda: worker_blocked_by(holder.pid), 10)
            holder.run("COMMIT")
            t.join(30)
    finally:
        holder.close()
    err = result["error"].response
    assert err["ResponseMetadata"]["HTTPStatusCode"] == 400, err
    assert (err["Error"]["Code"], err["Error"]["Message"]) == \
        ("ResourceInUseException", f"Table already exists: {table_name}"), err
    ddb.put_item(TableName=table_name, Item={"PK": {"S": "a"}, "SK": {"S": "b"}})
    assert psql(f"SELECT count(*) FROM \"{table_name}\"") == "1"
    ddb.delete_table(TableName=table_name)


def behind_sql_transaction(sql, request):
    """Runs request() (an endpoint call) while a SQL transaction of
    ddb_app's that ran sql holds what it took, commits that transaction
    once the request waits for it, and returns the request's ClientError
    response (None if it succeeded)."""
    holder = Session()
    try:
        with server_settings({"ddb.http_lock_timeout": "30s"}):
            holder.run(f"BEGIN; SET LOCAL ROLE ddb_app; {sql}")
            t, result = in_background(request)
            assert wait_for(lambda: worker_blocked_by(holder.pid), 10)
            holder.run("COMMIT")
            t.join(30)
    finally:
        holder.close()
    assert not t.is_alive()
    if "error" not in result:
        return None
    return result["error"].response


def test_concurrent_time_to_live_updates(ddb, table_name):
    """UpdateTimeToLive behind another one not yet committed waits for it
    and answers as it would after it: enabling twice is
    ValidationException "TimeToLive is already enabled" (it was the index
    code's "Attempting to create an index which already exists"),
    disabling twice "TimeToLive is already disabled" (it was
    ResourceNotFoundException)."""
    from conftest import create_table
    create_table(ddb, table_name)
    spec = {"AttributeName": "ttl", "Enabled": True}
    api = ("SELECT ddb_api('UpdateTimeToLive', '{\"TableName\": \"%s\", "
           "\"TimeToLiveSpecification\": {\"AttributeName\": \"ttl\", \"Enabled\": %s}}')")
    err = behind_sql_transaction(
        api % (table_name, "true"),
        lambda: ddb.update_time_to_live(TableName=table_name, TimeToLiveSpecification=spec))
    assert err is not None
    assert err["ResponseMetadata"]["HTTPStatusCode"] == 400, err
    assert (err["Error"]["Code"], err["Error"]["Message"]) == \
        ("ValidationException", "TimeToLive is already enabled"), err
    spec["Enabled"] = False
    err = behind_sql_transaction(
        api % (table_name, "false"),
        lambda: ddb.update_time_to_live(TableName=table_name, TimeToLiveSpecification=spec))
    assert err is not None
    assert err["ResponseMetadata"]["HTTPStatusCode"] == 400, err
    assert (err["Error"]["Code"], err["Error"]["Message"]) == \
        ("ValidationException", "TimeToLive is already disabled"), err
    assert ddb.describe_time_to_live(TableName=table_name)["TimeToLiveDescription"] == \
        {"TimeToLiveStatus": "DISABLED"}


def test_table_dropped_while_waiting_is_named_as_not_found(ddb, table_name):
    """DescribeTable, DeleteTable and DescribeTimeToLive name the table in
    their ResourceNotFoundException ("Requested resource not found:
    Table: <name> not found", as DynamoDB's do), also when the table is
    dropped by a transaction they waited for (they answered without the
    name then)."""
    from conftest import create_table
    expected = ("ResourceNotFoundException", f"Requested resource not found: Table: {table_name} not found")
    drop = f"SELECT ddb_api('DeleteTable', '{{\"TableName\": \"{table_name}\"}}')"
    for request in (lambda: ddb.describe_table(TableName=table_name),
                    lambda: ddb.delete_table(TableName=table_name),
                    lambda: ddb.describe_time_to_live(TableName=table_name)):
        create_table(ddb, table_name)
        err = behind_sql_transaction(drop, request)
        assert err is not None
        assert err["ResponseMetadata"]["HTTPStatusCode"] == 400, err
        assert (err["Error"]["Code"], err["Error"]["Message"]) == expected, err
        # and as any request after the drop is answered
        with pytest.raises(ddb.exceptions.ResourceNotFoundException) as e:
            request()
        assert (e.value.response["Error"]["Code"], e.value.response["Error"]["Message"]) == expected


def test_request_timeout(ddb, table_name):
    """A request runs at most ddb.http_request_timeout, then fails with
    InternalServerError (which SDKs retry) and a line in the server log;
    here the limit is lowered to 1 ms for a Scan of a page of items."""
    from conftest import create_table, psql
    create_table(ddb, table_name)
    psql(f"""INSERT INTO "{table_name}" SELECT 'p', i::text, jsonb_build_object('v', repeat('x', 500))
             FROM generate_series(1, 3000) i""")
    before = worker_pids()
    psql("ALTER SYSTEM SET ddb.http_request_timeout = '1ms'")
    psql("SELECT pg_reload_conf()")
    try:
        time.sleep(1)
        r = Raw()
        for _ in range(3):
            resp, data = r.post({"TableName": table_name}, target="DynamoDB_20120810.Scan")
            if resp.status == 500:
                break
        r.close()
        assert resp.status == 500, data[:200]
        assert error_of(data) == ("InternalServerError", "Internal server error")
    finally:
        psql("ALTER SYSTEM RESET ddb.http_request_timeout")
        psql("SELECT pg_reload_conf()")
    time.sleep(1)
    assert ddb.scan(TableName=table_name, Limit=10)["Count"] == 10
    assert worker_pids() == before


def test_over_long_lists_are_refused_for_their_length(raw):
    """A batch or transaction over DynamoDB's count is refused for its count
    before any element is converted (DynamoDB checks the members'
    constraints before their contents): 20,000 actions whose last one is
    malformed get the count's ValidationException, not the element's."""
    put = {"Put": {"TableName": "t_none", "Item": {"PK": {"S": "a"}}}}
    bad = {"Put": {"TableName": "t_none", "Item": {"PK": {}}}}
    r, data = raw.post({"TransactItems": [put] * 20000 + [bad]},
                       target="DynamoDB_20120810.TransactWriteItems")
    assert r.status == 400 and error_of(data) == (
        "ValidationException",
        "1 validation error detected: Value '[20001 actions]' at 'transactItems' failed to satisfy "
        "constraint: Member must have length less than or equal to 100"), data[:300]
    r, data = raw.post({"RequestItems": {"t_none": [{"PutRequest": {"Item": {"PK": {"S": "a"}}}}] * 20000 +
                                         [{"PutRequest": {"Item": {"PK": {"NULL": False}}}}]}},
                       target="DynamoDB_20120810.BatchWriteItem")
    assert r.status == 400 and error_of(data)[0] == "ValidationException", data[:300]
    assert "[20001 requests]" in error_of(data)[1], data[:300]
    r, data = raw.post({"RequestItems": {"t_none": {"Keys": [{"PK": {"S": "a"}}] * 20000 + [{"PK": {}}]}}},
                       target="DynamoDB_20120810.BatchGetItem")
    assert r.status == 400 and error_of(data)[0] == "ValidationException", data[:300]
    assert "'[20001 keys]' at 'requestItems.t_none.member.keys'" in error_of(data)[1], data[:300]
    valid_request_works()


def test_out_of_range_integers_are_serialization_errors(raw, ddb, table_name):
    """Limit, Segment and TotalSegments are Java ints: a JSON number beyond
    one (1e100, 2^31) is no value of the member's type, a
    SerializationException; within it the member's bounds are checked."""
    create_table(ddb, table_name, sk=None)
    for body, kind in (('"Limit": 1e100', "DECIMAL_VALUE"), ('"Limit": 2147483648', "NUMBER_VALUE"),
                       ('"Segment": 0, "TotalSegments": 1e100', "DECIMAL_VALUE"),
                       ('"Segment": -2147483649, "TotalSegments": 2', "NUMBER_VALUE")):
        r, data = raw.post('{"TableName": "%s", %s}' % (table_name, body), target="DynamoDB_20120810.Scan")
        assert r.status == 400 and error_of(data) == (
            "SerializationException", kind + " cannot be converted to Integer"), (body, data)
    r, data = raw.post('{"TableName": "%s", "Limit": 2147483647}' % table_name,
                       target="DynamoDB_20120810.Scan")
    assert r.status == 200, data
    r, data = raw.post('{"TableName": "%s", "Segment": 0, "TotalSegments": 2147483647}' % table_name,
                       target="DynamoDB_20120810.Scan")
    assert r.status == 400 and error_of(data)[0] == "ValidationException", data
    assert "Member must have value less than or equal to 1000000" in error_of(data)[1], data
    ddb.delete_table(TableName=table_name)
