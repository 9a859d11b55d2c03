"""The README's section on the endpoint, followed as written on the demo's
table: its SQL (a role, its grants, a key), its boto3 snippet and its AWS
CLI commands, with this cluster's endpoint and the key the SQL made in
place of the README's.  The query the CLI runs must then show the demo's
customer CUST#42 as the demo made it: the examples before it must not have
replaced its items."""
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import ENDPOINT, PGBIN, PGPORT, RUNAS, SOCK, psql

HERE = os.path.dirname(os.path.abspath(__file__))
README = os.path.join(HERE, "..", "..", "README.md")
DEMO = os.path.join(HERE, "..", "demo.sql")


def endpoint_blocks():
    """{lang: body} of the first block of each language in the section."""
    text = open(README, encoding="utf-8").read()
    section = text.split("\n## DynamoDB's HTTP endpoint\n", 1)[1].split("\n## ", 1)[0]
    out = {}
    for lang, body in re.findall(r"^```(\w+)\n(.*?)^```$", section, re.S | re.M):
        out.setdefault(lang, body)
    return out


@pytest.fixture
def demo_loaded():
    r = subprocess.run([f"{PGBIN}/psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", SOCK, "-p", PGPORT,
                        "-U", RUNAS, "-d", "postgres", "-f", DEMO], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    yield
    psql("SELECT ddb_drop_access_key(access_key_id) FROM ddb_internal.access_keys WHERE role_name = 'app_rw';"
         "DROP TABLE IF EXISTS app; DROP OWNED BY app_rw; DROP ROLE IF EXISTS app_rw", check=False)


def test_readme_endpoint_examples(demo_loaded):
    b = endpoint_blocks()
    sql, py, sh = b["sql"], b["python"], b["sh"]
    # the key the README shows, which its snippets use
    shown_id = re.search(r"export AWS_ACCESS_KEY_ID=(\S+)", sh).group(1)
    shown_secret = re.search(r"export AWS_SECRET_ACCESS_KEY=(\S+)", sh).group(1)
    out = psql(sql)
    key_id, secret = out.splitlines()[-1].split("|")

    def ours(code):
        return (code.replace("http://127.0.0.1:8000", ENDPOINT)
                .replace(shown_id, key_id).replace(shown_secret, secret))

    r = subprocess.run([sys.executable, "-c", ours(py)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    env = dict(os.environ, PATH="/usr/bin:" + os.environ["PATH"], AWS_PAGER="", AWS_MAX_ATTEMPTS="1")
    r = subprocess.run(["bash", "-euc", ours(sh)], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    items = {i["SK"]["S"]: i for i in json.loads(r.stdout)["Items"]}
    assert items["PROFILE"]["name"] == {"S": "Ada Lovelace"}, items["PROFILE"]
    assert len([sk for sk in items if sk.startswith("ORDER#")]) == 4
