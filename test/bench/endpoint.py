#!/usr/bin/python3
"""test/bench/endpoint.py: ddb's HTTP endpoint against dynalite and against
ddb_api called by pgbench (run it through test/bench/endpoint.sh).

The same prepared requests (GetItem of a random loaded key, PutItem of a
new key, Query of a whole 100-item partition), signed with SigV4 by
botocore, are replayed by wrk on keep-alive connections against

  ddb       the endpoint of a throwaway cluster (shared_preload_libraries =
            'ddb', ddb.http_workers = 2, SigV4 with an access key)
  dynalite  dynalite (npm), the most used local DynamoDB emulator, in-memory,
            on the same machine, loaded with the same items

and, for GetItem, pgbench -M prepared runs SELECT ddb_api('GetItem', ...)
over a Unix socket: the cost of the protocol layer without HTTP; and the
same GetItem requests go to null_http.c, a libmicrohttpd server that
answers every request with a fixed item and does nothing else: the floor
of a round trip on this machine, which bounds every server's throughput.

Runs are short and alternate the sides (A B, then B A, ...); each pair gives
a ratio, and the table reports each side's median tps and the median of
the per-pair ratios, with the 1-minute load average seen during the runs.
Every response is checked: a non-200 answer fails the benchmark.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

import boto3
import botocore.auth
import botocore.awsrequest
import botocore.config
import botocore.credentials

HERE = os.path.dirname(os.path.abspath(__file__))
REGION = "us-east-1"
TABLE = "bench"
PER_PARTITION = 100


def log(msg):
    print(f"==> {msg}", file=sys.stderr, flush=True)


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


class Cluster:
    """A throwaway cluster with the endpoint, owned by RUNAS."""

    def __init__(self, pgbin, runas, work, http_port):
        self.pgbin, self.runas, self.work, self.http_port = pgbin, runas, work, http_port
        self.data = os.path.join(work, "data")
        self.sock = os.path.join(work, "sock")
        self.port = "55490"

    def as_runas(self, cmd):
        if os.geteuid() == 0 and self.runas != "root":
            return ["su", self.runas, "-s", "/bin/bash", "-c", " ".join(cmd)]
        return cmd

    def start(self):
        os.makedirs(self.sock, exist_ok=True)
        if os.geteuid() == 0:
            subprocess.run(["chown", "-R", self.runas, self.work], check=True)
        subprocess.run(self.as_runas([f"{self.pgbin}/initdb", "-D", self.data, "-A", "trust", "-U", self.runas,
                                      "-E", "UTF8", "--locale=C", "--no-sync"]), check=True, capture_output=True)
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(f"""listen_addresses = ''
unix_socket_directories = '{self.sock}'
port = {self.port}
shared_preload_libraries = 'ddb'
ddb.http_port = {self.http_port}
ddb.http_workers = 2
shared_buffers = 512MB
synchronous_commit = off
max_wal_size = 8GB
checkpoint_timeout = 1h
log_min_messages = warning
""")
        subprocess.run(self.as_runas([f"{self.pgbin}/pg_ctl", "-D", self.data, "-l",
                                      os.path.join(self.work, "server.log"), "-w", "start"]),
                       check=True, capture_output=True)

    def stop(self):
        subprocess.run(self.as_runas([f"{self.pgbin}/pg_ctl", "-D", self.data, "-m", "fast", "stop"]),
                       capture_output=True)

    def psql(self, sql):
        r = subprocess.run([f"{self.pgbin}/psql", "-X", "-q", "-tA", "-v", "ON_ERROR_STOP=1", "-h", self.sock,
                            "-p", self.port, "-U", self.runas, "-d", "postgres", "-c", sql],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(r.stderr)
        return r.stdout.strip()


def pk(p):
    return f"CUST#{p}"


def sk(s):
    return f"ORDER#2025-{1 + s * 12 // 100:02d}-{1 + s % 28:02d}#{s:04d}"


def item(n, p, s):
    return {"PK": {"S": pk(p)}, "SK": {"S": sk(s)},
            "status": {"S": ["PENDING", "PAID", "SHIPPED", "DELIVERED"][n % 4]},
            "total": {"N": str((n % 100000) / 100)},
            "note": {"S": (f"{n:032x}" * 3)[:90]}}


def load(client, partitions):
    """The same items on both sides, created through the API."""
    client.create_table(TableName=TABLE, BillingMode="PAY_PER_REQUEST",
                        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"},
                                   {"AttributeName": "SK", "KeyType": "RANGE"}],
                        AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"},
                                              {"AttributeName": "SK", "AttributeType": "S"}])
    client.get_waiter("table_exists").wait(TableName=TABLE, WaiterConfig={"Delay": 1})
    batch = []
    for n in range(partitions * PER_PARTITION):
        batch.append({"PutRequest": {"Item": item(n, n % partitions, n // partitions)}})
        if len(batch) == 25:
            flush(client, batch)
            batch = []
    if batch:
        flush(client, batch)


def flush(client, batch):
    """BatchWriteItem where the server has it, else single puts."""
    try:
        r = client.batch_write_item(RequestItems={TABLE: batch})
        assert not r.get("UnprocessedItems")
    except client.exceptions.ClientError as e:
        if e.response["Error"]["Code"] not in ("UnknownOperationException", "ValidationException"):
            raise
        for b in batch:
            client.put_item(TableName=TABLE, Item=b["PutRequest"]["Item"])


def bodies(op, n, partitions, rng, tag):
    """n request bodies of one operation (the same on both sides)."""
    out = []
    for i in range(n):
        if op == "GetItem":
            out.append({"TableName": TABLE, "Key": {"PK": {"S": pk(rng.randrange(partitions))},
                                                   "SK": {"S": sk(rng.randrange(PER_PARTITION))}}})
        elif op == "PutItem":
            it = item(i, 0, 0)
            it["PK"] = {"S": f"NEW#{tag}#{i}"}
            it["SK"] = {"S": "PROFILE"}
            out.append({"TableName": TABLE, "Item": it})
        elif op == "Query":
            out.append({"TableName": TABLE, "KeyConditionExpression": "PK = :p",
                        "ExpressionAttributeValues": {":p": {"S": pk(rng.randrange(partitions))}}})
    return out


def write_requests(path, port, op, bodies_, key_id, secret):
    """A Lua file returning the fully formed, signed HTTP requests."""
    creds = botocore.credentials.Credentials(key_id, secret)
    signer = botocore.auth.SigV4Auth(creds, "dynamodb", REGION)
    parts = ["return {\n"]
    for b in bodies_:
        body = json.dumps(b, separators=(",", ":"))
        req = botocore.awsrequest.AWSRequest(
            method="POST", url=f"http://127.0.0.1:{port}/", data=body.encode(),
            headers={"Content-Type": "application/x-amz-json-1.0",
                     "X-Amz-Target": f"DynamoDB_20120810.{op}"})
        signer.add_auth(req)
        lines = [f"POST / HTTP/1.1", f"Host: 127.0.0.1:{port}"]
        lines += [f"{k}: {v}" for k, v in req.headers.items()]
        lines += [f"Content-Length: {len(body.encode())}", "", body]
        raw = "\r\n".join(lines)
        # a quoted Lua string: long brackets would turn CR LF into LF
        quoted = raw.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "\\r").replace("\n", "\\n")
        parts.append('"' + quoted + '",\n')
    parts.append("}\n")
    with open(path, "w") as f:
        f.write("".join(parts))


def run_wrk(port, reqs_prefix, conns, duration):
    env = dict(os.environ, REQS=reqs_prefix)
    la = loadavg()
    r = subprocess.run(["wrk", "-t", str(conns), "-c", str(conns), "-d", f"{duration}s",
                        "-s", os.path.join(HERE, "endpoint.lua"), f"http://127.0.0.1:{port}/"],
                       capture_output=True, text=True, env=env)
    out = r.stdout
    if r.returncode != 0:
        raise RuntimeError(f"wrk failed: {r.stderr} {out}")
    tps = None
    for line in out.splitlines():
        if line.startswith("Requests/sec:"):
            tps = float(line.split()[1])
        if line.startswith("thread "):
            # "thread 1: sent 123 of 5000 prepared, errors 0 <first error>"
            w = line.split()
            sent, prepared, errors = int(w[3]), int(w[5]), int(w[8])
            if errors:
                raise RuntimeError(f"requests failed on port {port}: {line}")
            if sent > prepared and "Put" in reqs_prefix:
                log(f"note: PutItem list wrapped ({sent} sent, {prepared} prepared): some puts overwrote")
    if not tps:
        raise RuntimeError(f"wrk printed no rate: {out}")
    return tps, max(la, loadavg())


def run_pgbench(cluster, conns, duration, partitions, workdir):
    script = os.path.join(workdir, "get_api.sql")
    with open(script, "w") as f:
        f.write(f"""\\set p random(0, {partitions - 1})
\\set s random(0, {PER_PARTITION - 1})
SELECT ddb_api('GetItem', jsonb_build_object('TableName', '{TABLE}', 'Key',
  jsonb_build_object('PK', jsonb_build_object('S', 'CUST#' || :p),
                     'SK', jsonb_build_object('S', bench_sk(:s)))));
""")
    os.chmod(script, 0o644)
    la = loadavg()
    cmd = cluster.as_runas([f"{cluster.pgbin}/pgbench", "-n", "-M", "prepared", "-h", cluster.sock,
                            "-p", cluster.port, "-U", cluster.runas, "-c", str(conns), "-j", str(conns),
                            "-T", str(duration), "-f", script, "postgres"])
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"pgbench failed: {r.stderr}")
    for line in r.stdout.splitlines():
        if line.startswith("tps = "):
            return float(line.split()[2]), max(la, loadavg())
    raise RuntimeError(f"pgbench printed no tps: {r.stdout}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--clients", default="1,2")
    ap.add_argument("--ops", default="GetItem,PutItem,Query")
    ap.add_argument("--pgbin", required=True)
    ap.add_argument("--runas", required=True)
    ap.add_argument("--dynalite", required=True)
    ap.add_argument("--null-server", required=True)
    args = ap.parse_args()
    clients = [int(c) for c in args.clients.split(",")]
    ops = args.ops.split(",")

    work = tempfile.mkdtemp(prefix="ddb-bench-endpoint.")
    os.chmod(work, 0o755)
    http_port, dyn_port = free_port(), free_port()
    cluster = Cluster(args.pgbin, args.runas, work, http_port)
    dyn = None
    nulls = {}
    try:
        log(f"cluster with the endpoint on port {http_port}; dynalite on port {dyn_port}")
        cluster.start()
        cluster.psql("CREATE EXTENSION ddb")
        cluster.psql("CREATE ROLE bench; GRANT CREATE ON SCHEMA public TO bench")
        key_id, secret = cluster.psql(
            "SELECT access_key_id || ' ' || secret_access_key FROM ddb_create_access_key('bench')").split()
        # bench_sk for the pgbench script: the same sort keys as sk() above
        cluster.psql("""CREATE FUNCTION bench_sk(s int) RETURNS text LANGUAGE sql IMMUTABLE
            RETURN 'ORDER#2025-' || lpad((1 + s * 12 / 100)::text, 2, '0') || '-'
                   || lpad((1 + s % 28)::text, 2, '0') || '#' || lpad(s::text, 4, '0')""")
        dyn_log = open(os.path.join(work, "dynalite.log"), "w")
        dyn = subprocess.Popen(["node", args.dynalite, "--port", str(dyn_port), "--host", "127.0.0.1"],
                               stdout=dyn_log, stderr=subprocess.STDOUT)
        cfg = botocore.config.Config(retries={"max_attempts": 0})
        sides = {
            "ddb": (http_port, boto3.client("dynamodb", endpoint_url=f"http://127.0.0.1:{http_port}",
                                            region_name=REGION, aws_access_key_id=key_id,
                                            aws_secret_access_key=secret, config=cfg)),
            "dynalite": (dyn_port, boto3.client("dynamodb", endpoint_url=f"http://127.0.0.1:{dyn_port}",
                                                region_name=REGION, aws_access_key_id=key_id,
                                                aws_secret_access_key=secret, config=cfg)),
        }
        time.sleep(1)
        for name, (_, c) in sides.items():
            log(f"loading {args.partitions * PER_PARTITION} items into {name}")
            load(c, args.partitions)
        cluster.psql(f'VACUUM ANALYZE "{TABLE}"')

        # check that each side answers each op as DynamoDB does
        rng = random.Random(42)
        for op in ops:
            b = bodies(op, 1, args.partitions, rng, "check")[0]
            for name, (_, c) in sides.items():
                r = getattr(c, {"GetItem": "get_item", "PutItem": "put_item", "Query": "query"}[op])(**b)
                if op == "GetItem":
                    assert "Item" in r, (name, r)
                if op == "Query":
                    assert r["Count"] == PER_PARTITION, (name, r["Count"])

        results = []
        loads = []
        rng = random.Random(20250101)
        for op in ops:
            for conns in clients:
                pairs = []
                for rnd in range(args.rounds):
                    # fresh requests each round (fresh keys for PutItem; the
                    # signatures stay well inside the 15 minutes allowed)
                    n = 60000 if op == "PutItem" else 5000
                    tps = {}
                    order = ["ddb", "dynalite"] if rnd % 2 == 0 else ["dynalite", "ddb"]
                    per_thread = [bodies(op, n, args.partitions, rng, f"{conns}.{rnd}.{t}") for t in range(conns)]
                    for name in order:
                        port = sides[name][0]
                        prefix = os.path.join(work, f"{op}_{name}_")
                        for t in range(conns):
                            write_requests(f"{prefix}{t + 1}.lua", port, op, per_thread[t], key_id, secret)
                        tps[name], la = run_wrk(port, prefix, conns, args.duration)
                        loads.append(la)
                    pairs.append((tps["ddb"], tps["dynalite"]))
                    log(f"{op} c={conns} round {rnd + 1}: ddb {tps['ddb']:.0f} tps, dynalite {tps['dynalite']:.0f} tps")
                results.append((op, conns, "dynalite", pairs))
                if op == "GetItem":
                    pairs = []
                    for rnd in range(args.rounds):
                        prefix = os.path.join(work, f"{op}_ddbpg_")
                        per_thread = [bodies(op, 5000, args.partitions, rng, "") for _ in range(conns)]
                        for t in range(conns):
                            write_requests(f"{prefix}{t + 1}.lua", http_port, op, per_thread[t], key_id, secret)
                        got = {}
                        for side in (["http", "pgbench"] if rnd % 2 == 0 else ["pgbench", "http"]):
                            if side == "http":
                                got[side], la = run_wrk(http_port, prefix, conns, args.duration)
                            else:
                                got[side], la = run_pgbench(cluster, conns, args.duration, args.partitions, work)
                            loads.append(la)
                        pairs.append((got["http"], got["pgbench"]))
                        log(f"{op} c={conns} round {rnd + 1}: endpoint {got['http']:.0f} tps, "
                            f"pgbench ddb_api {got['pgbench']:.0f} tps")
                    results.append((op, conns, "pgbench ddb_api", pairs))
                    # the floor: the same requests to a server that does no work
                    if conns not in nulls:
                        nport = free_port()
                        nulls[conns] = (nport, subprocess.Popen([args.null_server, str(nport), str(conns)]))
                        time.sleep(0.5)
                    nport = nulls[conns][0]
                    pairs = []
                    for rnd in range(args.rounds):
                        per_thread = [bodies(op, 5000, args.partitions, rng, "") for _ in range(conns)]
                        got = {}
                        for side in (["ddb", "null"] if rnd % 2 == 0 else ["null", "ddb"]):
                            port = http_port if side == "ddb" else nport
                            prefix = os.path.join(work, f"{op}_{side}null_")
                            for t in range(conns):
                                write_requests(f"{prefix}{t + 1}.lua", port, op, per_thread[t], key_id, secret)
                            got[side], la = run_wrk(port, prefix, conns, args.duration)
                            loads.append(la)
                        pairs.append((got["ddb"], got["null"]))
                        log(f"{op} c={conns} round {rnd + 1}: endpoint {got['ddb']:.0f} tps, "
                            f"null server {got['null']:.0f} tps")
                    results.append((op, conns, "null HTTP server", pairs))

        print()
        print(f"Endpoint benchmark: {args.partitions * PER_PARTITION} items ({args.partitions} partitions x "
              f"{PER_PARTITION}), {args.rounds} alternating rounds of {args.duration} s per side, "
              f"wrk keep-alive connections (1 thread per connection), SigV4-signed requests.")
        print()
        print("| operation | connections | ddb endpoint tps (median) | other side | other tps (median) "
              "| median of per-round ratios | ratio range |")
        print("|---|---:|---:|---|---:|---:|---|")
        names = {"Query": "Query-100"}
        for op, conns, other, pairs in results:
            ratios = [a / b for a, b in pairs]
            print(f"| {names.get(op, op)} | {conns} | {statistics.median(a for a, _ in pairs):.0f} | {other} | "
                  f"{statistics.median(b for _, b in pairs):.0f} | {statistics.median(ratios):.2f} | "
                  f"{min(ratios):.2f}–{max(ratios):.2f} |")
        print()
        print(f"1-minute load average during the runs: min {min(loads):.2f}, median "
              f"{statistics.median(loads):.2f}, max {max(loads):.2f} (2 cores: {os.cpu_count()} CPUs seen)")
    finally:
        for _, proc in nulls.values():
            proc.terminate()
            proc.wait(10)
        if dyn:
            dyn.terminate()
            dyn.wait(10)
        cluster.stop()
        if not os.environ.get("DDB_KEEP"):
            subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
