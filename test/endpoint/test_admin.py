"""A GUI DynamoDB users run against local endpoints: dynamodb-admin (npm),
pointed at the endpoint, lists the tables and shows a table's items, as
rendered by headless Chromium (the page loads its items with JavaScript,
so the DOM is read after the scripts ran)."""
import os
import shutil
import subprocess
import tempfile

import pytest

from conftest import ENDPOINT, KEY_ID, SECRET, WORK, client, create_table, free_port, healthy, wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
ADMIN = os.path.join(HERE, "node_modules", ".bin", "dynamodb-admin")
CHROMIUM = shutil.which("chromium")


@pytest.fixture(scope="module")
def admin():
    assert os.path.exists(ADMIN), "dynamodb-admin is not installed (npm install in test/endpoint failed)"
    port = free_port()
    env = dict(os.environ, DYNAMO_ENDPOINT=ENDPOINT, AWS_REGION="us-east-1",
               AWS_ACCESS_KEY_ID=KEY_ID, AWS_SECRET_ACCESS_KEY=SECRET, AWS_SESSION_TOKEN="")
    log = open(os.path.join(WORK, "dynamodb-admin.log"), "w")
    p = subprocess.Popen(["node", ADMIN, "--host", "127.0.0.1", "--port", str(port)],
                         env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        assert wait_for(lambda: healthy(port) or page_ok(port), 30), "dynamodb-admin did not start"
        yield f"http://127.0.0.1:{port}"
    finally:
        p.terminate()
        p.wait(10)
        log.close()


def page_ok(port):
    import http.client
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        c.request("GET", "/api/tables")
        return c.getresponse().status == 200
    except OSError:
        return False


def render(url, screenshot=None):
    """The DOM of a page after its scripts ran, from headless Chromium."""
    assert CHROMIUM, "chromium is not installed"
    profile = tempfile.mkdtemp(prefix="chromium.", dir=WORK)
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-quic", f"--user-data-dir={profile}",
            "--virtual-time-budget=15000"]
    if screenshot:
        subprocess.run(args + ["--window-size=1280,900", f"--screenshot={screenshot}", url],
                       capture_output=True, timeout=120)
    r = subprocess.run(args + ["--dump-dom", url], capture_output=True, text=True, timeout=120)
    return r.stdout


@pytest.fixture
def filled(table_name):
    c = client()
    create_table(c, table_name)
    for i in range(3):
        c.put_item(TableName=table_name, Item={"PK": {"S": "CUST#9"}, "SK": {"S": f"ORDER#{i}"},
                                               "note": {"S": f"shown-in-gui-{i}"}})
    yield table_name
    # a new client: the rendering takes longer than the endpoint's idle
    # timeout (5 s in this suite), which closes c's pooled connection, and a
    # reuse racing that close fails with no retry (ConnectionClosedError)
    client().delete_table(TableName=table_name)


def test_admin_lists_tables(admin, filled):
    dom = render(admin + "/")
    assert filled in dom, dom[-2000:]


def test_admin_shows_items(admin, filled):
    shot = os.path.join(WORK, "dynamodb-admin.png")
    dom = render(f"{admin}/tables/{filled}", screenshot=shot)
    for i in range(3):
        assert f"shown-in-gui-{i}" in dom, dom[-3000:]
        assert f"ORDER#{i}" in dom
